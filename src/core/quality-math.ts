/**
 * Routing quality from the log (docs/api.md "Quality"): per UTC day, did routing offer the tool that
 * finally served each request (src/core/attribution.ts), and what each applied revision changed.
 */
import type { z } from '@hono/zod-openapi';
import type { Quality, ServedCounts as ServedCountsSchema } from '../schemas.ts';
import { attributeRuns, type Attribution } from './attribution.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from './records.ts';
import { groupRuns } from './serving.ts';

/** One UTC day of the report: its shape is the API's (src/schemas.ts Quality, where its fields are explained). */
export type QualityDay = z.output<typeof Quality>['days'][number];

export interface RevisionWindow {
  revision_id: string;
  tool: string;
  applied_at: string;
  undone_at: string | null;
}

/** The report as the core composes it from the log: the API's answer but for `truncated` (the service adds it) and `approvals` (from the revisions). */
export type QualityReport = Omit<z.output<typeof Quality>, 'truncated' | 'approvals'>;

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
const HOUR_MS = 3_600_000;
/** Entries in `top_missed` and `top_confused`. */
export const TOP = 10;
/** The `tool` of an hour's row that counts every tool of the agent. */
export const EVERY_TOOL = '';

/**
 * The counts of one UTC hour (`YYYY-MM-DDTHH`) for one tool, or for the whole agent
 * (`tool` = EVERY_TOOL). A report sums hours; a settled hour is stored (docs/api.md "Quality").
 */
export interface QualityHour {
  hour: string;
  tool: string;
  /** Routed turns (for a tool: those that offered it). */
  routed_turns: number;
  /** Requests the tool (any tool) finally served. */
  served_turns: number;
  hits: number;
  /** Sum of 1/rank over the hits, for the MRR. */
  rr: number;
  misses: number;
  /** Requests that went to one tool and were served by another: counted for both tools. */
  confusions: number;
  failed_calls: number;
}

/** Requests of one hour that went to `tool` and were finally served by `served_by`. */
export interface QualityPair {
  hour: string;
  tool: string;
  served_by: string;
  count: number;
}

/** The UTC hour of an ISO time, `YYYY-MM-DDTHH`. */
export const hourOf = (iso: string): string => iso.slice(0, 13);
/** The ISO time an hour starts at. */
export const hourStart = (hour: string): string => `${hour}:00:00.000Z`;
/** The hour `n` hours after (before, for a negative n) an hour. */
export const addHours = (hour: string, n: number): string =>
  hourOf(new Date(Date.parse(hourStart(hour)) + n * HOUR_MS).toISOString());

/**
 * Buckets a slice of the log by UTC hour and tool: every routed turn, failed call and attributed
 * run (src/core/attribution.ts) whose time falls in [from, to) (hours, `to` excluded). The slice
 * should begin an hour before `from`, so that calls of earlier turns join their turn rather than
 * count as requests of their own, and end after `to` by the time a conversation takes to re-ask.
 */
export function qualityHours(
  slice: { turns: readonly TurnRecord[]; calls: readonly CallRecord[]; outcomes: readonly OutcomeRecord[] },
  from: string,
  to: string,
): { hours: QualityHour[]; pairs: QualityPair[] } {
  const rows = new Map<string, QualityHour>();
  const pairs = new Map<string, QualityPair>();
  const inRange = (hour: string): boolean => hour >= from && hour < to;
  const row = (hour: string, tool: string): QualityHour => {
    const key = `${hour}\u0000${tool}`;
    let r = rows.get(key);
    if (!r) {
      r = { hour, tool, routed_turns: 0, served_turns: 0, hits: 0, rr: 0, misses: 0, confusions: 0, failed_calls: 0 };
      rows.set(key, r);
    }
    return r;
  };
  for (const turn of slice.turns) {
    const hour = hourOf(turn.created_at);
    if (!turn.routed || !inRange(hour)) continue;
    row(hour, EVERY_TOOL).routed_turns++;
    for (const o of turn.offered) row(hour, o.name).routed_turns++;
  }
  for (const call of slice.calls) {
    const hour = hourOf(call.at);
    if (call.success || !inRange(hour)) continue;
    row(hour, EVERY_TOOL).failed_calls++;
    row(hour, call.tool).failed_calls++;
  }
  for (const a of attributeRuns(groupRuns(slice.turns, slice.calls), slice.outcomes).values()) {
    const hour = hourOf(a.run.at);
    if (a.served_by === null || !inRange(hour)) continue;
    if (confusedPair(a) && a.own !== null) {
      row(hour, EVERY_TOOL).confusions++;
      row(hour, a.own).confusions++;
      row(hour, a.served_by).confusions++;
      const key = `${hour}\u0000${a.own}\u0000${a.served_by}`;
      const pair = pairs.get(key) ?? { hour, tool: a.own, served_by: a.served_by, count: 0 };
      pair.count++;
      pairs.set(key, pair);
    }
    const rank = rankOf(a);
    for (const r of [row(hour, EVERY_TOOL), row(hour, a.served_by)]) {
      r.served_turns++;
      if (rank !== null) {
        r.hits++;
        r.rr += 1 / rank;
      } else if (a.run.turn?.routed) r.misses++;
    }
  }
  return { hours: [...rows.values()], pairs: [...pairs.values()] };
}

/** What a report is composed of: hour rows and the window's totals per tool and per pair. */
export interface QualityParts {
  /**
   * Hour rows of the report's tool (EVERY_TOOL for the agent) over the window; other rows are
   * ignored.
   */
  hours: readonly QualityHour[];
  /** Misses per tool over the window (every tool, or the report's tool). */
  missed: readonly { tool: string; misses: number }[];
  /** Confused requests per pair over the window (every pair, or those naming the report's tool). */
  confused: readonly { tool: string; served_by: string; count: number }[];
  /** The revisions applied in the window, with their counts (beforeAfter, or stored sums). */
  revisions: readonly (RevisionWindow & BeforeAfter)[];
  days: number;
  now: string;
  tool?: string | undefined;
}

/** The quality report of one agent (or one tool) over the last `days` UTC days, oldest first. */
export function composeQuality(parts: QualityParts): QualityReport {
  const today = Date.parse(`${parts.now.slice(0, 10)}T00:00:00.000Z`);
  const first = today - (parts.days - 1) * DAY_MS;
  const key = parts.tool ?? EVERY_TOOL;
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
  for (const h of parts.hours) {
    const day = h.tool === key ? byDate.get(h.hour.slice(0, 10)) : undefined;
    if (!day) continue;
    day.routed_turns += h.routed_turns;
    day.served_turns += h.served_turns;
    day.hits += h.hits;
    day.rr += h.rr;
    day.misses += h.misses;
    day.confusions += h.confusions;
    day.failed_calls += h.failed_calls;
  }
  const days = [...byDate.values()].map(({ rr, ...d }) => {
    const ranked = d.hits + d.misses;
    return { ...d, hit_rate: ranked > 0 ? d.hits / ranked : null, mrr: ranked > 0 ? rr / ranked : null };
  });
  const mine = (name: string) => parts.tool === undefined || name === parts.tool;
  return {
    days,
    revisions: parts.revisions.filter((r) => mine(r.tool)),
    top_missed: parts.missed
      .filter((m) => m.misses > 0 && mine(m.tool))
      .map(({ tool, misses }) => ({ tool, misses }))
      .sort((a, b) => b.misses - a.misses || a.tool.localeCompare(b.tool))
      .slice(0, TOP),
    top_confused: parts.confused
      .filter((c) => c.count > 0 && (mine(c.tool) || mine(c.served_by)))
      .map(({ tool, served_by, count }) => ({ tool, served_by, count }))
      .sort((a, b) => b.count - a.count || a.tool.localeCompare(b.tool) || a.served_by.localeCompare(b.served_by))
      .slice(0, TOP),
  };
}

/** Sums rows that share a key (the window's totals from its settled and its live hours). */
export function sumBy<T>(rows: readonly T[], key: (row: T) => string, add: (into: T, row: T) => void): T[] {
  const out = new Map<string, T>();
  for (const r of rows) {
    const k = key(r);
    const into = out.get(k);
    if (into) add(into, r);
    else out.set(k, { ...r });
  }
  return [...out.values()];
}

/** Misses per tool and confused requests per pair over a window. */
export interface WindowTotals {
  missed: { tool: string; misses: number }[];
  confused: { tool: string; served_by: string; count: number }[];
}

/** The window's misses per tool and confused pairs, from hour rows and pairs of those hours. */
export function windowTotals(hours: readonly QualityHour[], pairs: readonly QualityPair[]): WindowTotals {
  return {
    missed: sumBy(
      hours.filter((h) => h.tool !== EVERY_TOOL).map((h) => ({ tool: h.tool, misses: h.misses })),
      (m) => m.tool,
      (into, m) => {
        into.misses += m.misses;
      },
    ),
    confused: sumBy(
      pairs.map((p) => ({ tool: p.tool, served_by: p.served_by, count: p.count })),
      (p) => `${p.tool}\u0000${p.served_by}`,
      (into, p) => {
        into.count += p.count;
      },
    ),
  };
}

/** The report straight from a slice of the log (every hour live): what the stored hours must equal. */
export function qualityReport(input: QualityInput): QualityReport {
  const today = hourOf(`${input.now.slice(0, 10)}T00`);
  // Twice the window: a revision applied early in it has its before hours too.
  const from = addHours(today, -(2 * input.days - 1) * 24);
  const { hours, pairs } = qualityHours(input, from, addHours(hourOf(input.now), 1));
  const windowStart = addHours(today, -(input.days - 1) * 24);
  const inWindow = hours.filter((h) => h.hour >= windowStart);
  const totals = windowTotals(
    inWindow,
    pairs.filter((p) => p.hour >= windowStart),
  );
  return composeQuality({
    ...totals,
    hours,
    revisions: input.revisions.map((r) => ({ ...r, ...beforeAfter(r, hours, input.days) })),
    days: input.days,
    now: input.now,
    tool: input.tool,
  });
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

/** Served requests and hits of one tool over some hours. */
export type ServedCounts = z.output<typeof ServedCountsSchema>;

/**
 * The hours a revision's before and after cover, [from, to) each: before = the `days` × 24 hours
 * before the hour of the apply; after = from that hour through the hour of the undo (or on, when it
 * is still applied). The apply's own hour counts as after: a report counts whole UTC hours.
 */
export function revisionHours(r: RevisionWindow, days: number): { before: [string, string]; after: [string, string] } {
  const applied = hourOf(r.applied_at);
  return {
    before: [addHours(applied, -days * 24), applied],
    after: [applied, r.undone_at === null ? '9999' : addHours(hourOf(r.undone_at), 1)],
  };
}

/** A revision's served turns and hits in the days before it was applied and the days after. */
export interface BeforeAfter {
  before: ServedCounts;
  after: ServedCounts;
}

/** A revision's before and after from hour rows (rows of other tools are ignored). */
export function beforeAfter(r: RevisionWindow, hours: readonly QualityHour[], days: number): BeforeAfter {
  const ranges = revisionHours(r, days);
  const before = { served_turns: 0, hits: 0 };
  const after = { served_turns: 0, hits: 0 };
  for (const h of hours) {
    if (h.tool !== r.tool) continue;
    const within = ([from, to]: [string, string]) => h.hour >= from && h.hour < to;
    const side = within(ranges.before) ? before : within(ranges.after) ? after : null;
    if (!side) continue;
    side.served_turns += h.served_turns;
    side.hits += h.hits;
  }
  return { before, after };
}
