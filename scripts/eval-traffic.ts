/**
 * The simulated traffic of the learning evaluation (`npm run eval`): which training wordings each
 * round routes, and which wordings are measured. Everything is seeded, so every run sends the same
 * requests in the same order.
 */
import { type EvalQuery, type EvalTool, loadToolE, mulberry32, shuffled, splitQueries } from './eval-data.ts';

/** The share of each tool's training wordings `--validate` measures on (never routed as traffic). */
const VALIDATION_SHARE = 0.25;

/** What the evaluation routes and measures. */
export interface Plan {
  tools: EvalTool[];
  /** Per tool, its traffic wordings in a seeded order; rounds draw from them in turn, cyclically. */
  streams: EvalQuery[][];
  measured: EvalQuery[];
}

/** FNV-1a, as eval-data.ts seeds its split; here with other keys, so these draws are independent. */
function seedOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function byTool(queries: readonly EvalQuery[]): Map<string, EvalQuery[]> {
  const out = new Map<string, EvalQuery[]>();
  for (const q of queries) out.set(q.tool, [...(out.get(q.tool) ?? []), q]);
  return out;
}

/**
 * Held-out: traffic = the training half, measured = the held-out half (eval-data.ts's fixed split).
 * Validation: a seeded quarter of each tool's training wordings is measured and the other three
 * quarters are the traffic; the held-out half is not read at all.
 */
export function planTraffic(split: 'held-out' | 'validation'): Plan {
  const data = loadToolE();
  const halves = splitQueries(data.queries);
  let traffic = halves.training;
  let measured = halves.heldOut;
  if (split === 'validation') {
    const carved = new Set<EvalQuery>();
    for (const [tool, list] of byTool(halves.training)) {
      const order = shuffled(list, mulberry32(seedOf(`validation:${tool}`)));
      for (const q of order.slice(0, Math.floor(list.length * VALIDATION_SHARE))) carved.add(q);
    }
    measured = halves.training.filter((q) => carved.has(q));
    traffic = halves.training.filter((q) => !carved.has(q));
  }
  const streams = [...byTool(traffic)].map(([tool, list]) => shuffled(list, mulberry32(seedOf(`traffic:${tool}`))));
  return { tools: data.tools, streams, measured };
}

/**
 * Round `round` (0-based): every tool is asked `perRound` times (fewer when it has fewer wordings),
 * the next wordings of its stream, starting over at its end — the same users asking again, so a
 * wording missed before is missed again until learning reaches it. The round's requests arrive
 * interleaved across tools (seeded).
 */
export function roundOf(plan: Plan, round: number, perRound: number): EvalQuery[] {
  const asked = plan.streams.flatMap((stream) => {
    const n = Math.min(perRound, stream.length);
    return Array.from({ length: n }, (_, j) => stream[(round * perRound + j) % stream.length]).filter(
      (q): q is EvalQuery => q !== undefined,
    );
  });
  return shuffled(asked, mulberry32(seedOf(`round:${round}`)));
}

/**
 * How many of rounds 0 … `rounds` − 1 asked each training wording (`roundOf`): each round's ask is
 * a conversation of its own. A tool with more wordings than `rounds` × `perRound` never has some
 * of them asked, and routing memory, which routes a wording once served in two conversations, can
 * hold only those asked twice.
 */
export function askedCounts(plan: Plan, rounds: number, perRound: number): Map<EvalQuery, number> {
  const counts = new Map<EvalQuery, number>();
  for (let round = 0; round < rounds; round++)
    for (const q of roundOf(plan, round, perRound)) counts.set(q, (counts.get(q) ?? 0) + 1);
  return counts;
}

/** Each tool's wordings in `streams` (a stream is one tool's training wordings; a filtered one may be empty). */
export function wordingsByTool(streams: readonly (readonly EvalQuery[])[]): Map<string | undefined, string[]> {
  return new Map(streams.map((stream) => [stream[0]?.tool, stream.map((q) => q.text)]));
}
