/**
 * Routing quality from the log (docs/api.md "Quality"): per UTC day, did routing offer the tool that
 * finally served each request (src/core/attribution.ts), and what each applied revision changed.
 */
import { attributeRuns, type Attribution } from './attribution.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from './records.ts';
import { groupRuns } from './serving.ts';

export interface QualityDay {
  date: string;
  routed_turns: number;
  served_turns: number;
  hits: number;
  /**
   * hits / (hits + misses): among served requests routing ranked, the share whose serving tool it
   * offered; null on a day it ranked none. A loose call's request or a stable-list turn was never
   * ranked, so it counts as served but neither hit nor miss.
   */
  hit_rate: number | null;
  /** Mean of 1/rank of the serving tool over the same requests (0 when not offered); null likewise. */
  mrr: number | null;
  misses: number;
  confusions: number;
  failed_calls: number;
}

export interface RevisionWindow {
  revision_id: string;
  tool: string;
  applied_at: string;
  undone_at: string | null;
}

export interface QualityReport {
  days: QualityDay[];
  revisions: (RevisionWindow & {
    before: { served_turns: number; hits: number };
    after: { served_turns: number; hits: number };
  })[];
  top_missed: { tool: string; misses: number }[];
  top_confused: { tool: string; served_by: string; count: number }[];
}

export interface QualityInput {
  turns: readonly TurnRecord[];
  calls: readonly CallRecord[];
  outcomes: readonly OutcomeRecord[];
  revisions: readonly RevisionWindow[];
  /** Number of UTC days, ending with today's. */
  days: number;
  now: string;
  /** Only this tool's requests (served by it, or confused with it) and failed calls. */
  tool?: string | undefined;
}

const DAY_MS = 86_400_000;
/** Entries in `top_missed` and `top_confused`. */
export const TOP = 10;

/** The quality report of one agent (or one tool) over the last `days` UTC days, oldest first. */
export function qualityReport(input: QualityInput): QualityReport {
  const today = Date.parse(`${input.now.slice(0, 10)}T00:00:00.000Z`);
  const first = today - (input.days - 1) * DAY_MS;
  const byDate = new Map<string, QualityDay & { rr: number }>();
  for (let t = first; t <= today; t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    byDate.set(date, {
      date,
      routed_turns: 0,
      served_turns: 0,
      hits: 0,
      hit_rate: null,
      mrr: null,
      misses: 0,
      confusions: 0,
      failed_calls: 0,
      rr: 0,
    });
  }
  const mine = (name: string | null) => input.tool === undefined || name === input.tool;
  for (const turn of input.turns) {
    const day = byDate.get(turn.created_at.slice(0, 10));
    if (day && turn.routed && (input.tool === undefined || turn.offered.some((o) => o.name === input.tool)))
      day.routed_turns++;
  }
  for (const call of input.calls) {
    const day = byDate.get(call.at.slice(0, 10));
    if (day && !call.success && mine(call.tool)) day.failed_calls++;
  }
  const attributed = [...attributeRuns(groupRuns(input.turns, input.calls), input.outcomes).values()];
  const missed = new Map<string, number>();
  const confused = new Map<string, number>();
  for (const a of attributed) {
    const day = byDate.get(a.run.at.slice(0, 10));
    if (!day || a.served_by === null) continue;
    if (confusedPair(a) && (mine(a.served_by) || mine(a.own))) {
      day.confusions++;
      const key = `${a.own}\u0000${a.served_by}`;
      confused.set(key, (confused.get(key) ?? 0) + 1);
    }
    if (!mine(a.served_by)) continue;
    day.served_turns++;
    const rank = rankOf(a);
    if (rank !== null) {
      day.hits++;
      day.rr += 1 / rank;
    } else if (a.run.turn?.routed) {
      day.misses++;
      missed.set(a.served_by, (missed.get(a.served_by) ?? 0) + 1);
    }
  }
  const days = [...byDate.values()].map(({ rr, ...d }) => {
    const ranked = d.hits + d.misses;
    return { ...d, hit_rate: ranked > 0 ? d.hits / ranked : null, mrr: ranked > 0 ? rr / ranked : null };
  });
  return {
    days,
    revisions: input.revisions
      .filter((r) => mine(r.tool))
      .map((r) => ({ ...r, ...beforeAfter(r, attributed, input.days, input.now) })),
    top_missed: [...missed]
      .map(([tool, misses]) => ({ tool, misses }))
      .sort((a, b) => b.misses - a.misses || a.tool.localeCompare(b.tool))
      .slice(0, TOP),
    top_confused: [...confused]
      .map(([key, count]) => {
        const [tool = '', served_by = ''] = key.split('\u0000');
        return { tool, served_by, count };
      })
      .sort((a, b) => b.count - a.count || a.tool.localeCompare(b.tool) || a.served_by.localeCompare(b.served_by))
      .slice(0, TOP),
  };
}

/** A request that went to one tool and was finally served by another (corrected or reported). */
function confusedPair(a: Attribution): boolean {
  return a.own !== null && a.served_by !== null && a.own !== a.served_by && a.via !== 'own';
}

/** The serving tool's rank among the offered tools of a routed turn, or null when it was not offered. */
function rankOf(a: Attribution): number | null {
  if (!a.run.turn?.routed) return null;
  return a.run.turn.offered.find((o) => o.name === a.served_by)?.rank ?? null;
}

/**
 * The tool's served requests and hits in the `days` days before a revision was applied, and from
 * its apply until it was undone (or now).
 */
function beforeAfter(
  r: RevisionWindow,
  attributed: readonly Attribution[],
  days: number,
  now: string,
): { before: { served_turns: number; hits: number }; after: { served_turns: number; hits: number } } {
  const applied = Date.parse(r.applied_at);
  const end = r.undone_at === null ? Date.parse(now) : Date.parse(r.undone_at);
  const before = { served_turns: 0, hits: 0 };
  const after = { served_turns: 0, hits: 0 };
  for (const a of attributed) {
    if (a.served_by !== r.tool) continue;
    const at = Date.parse(a.run.at);
    const side = at >= applied - days * DAY_MS && at < applied ? before : at >= applied && at <= end ? after : null;
    if (!side) continue;
    side.served_turns++;
    if (rankOf(a) !== null) side.hits++;
  }
  return { before, after };
}
