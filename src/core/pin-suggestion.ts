/**
 * Suggested pins (docs/tool-delivery.md): the smallest set of tools that finally served at least
 * `share` of the served runs. Taking tools by how many runs they served, most first, is the
 * smallest such set: any set of n tools serves at most the n largest counts.
 */
export interface PinSuggestion {
  tools: { name: string; served_runs: number; share: number }[];
  served_runs: number;
  covered_runs: number;
  covered_share: number;
}

export function suggestPins(servedBy: readonly string[], share: number): PinSuggestion {
  const counts = new Map<string, number>();
  for (const tool of servedBy) counts.set(tool, (counts.get(tool) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const total = servedBy.length;
  const tools: PinSuggestion['tools'] = [];
  let covered = 0;
  for (const [name, n] of ranked) {
    if (total === 0 || covered >= share * total - 1e-9) break;
    tools.push({ name, served_runs: n, share: n / total });
    covered += n;
  }
  return { tools, served_runs: total, covered_runs: covered, covered_share: total === 0 ? 0 : covered / total };
}
