/**
 * Routing quality (docs/api.md "Quality"): hours are settled — counted once from the log and stored
 * — an hour after they end, by the scheduled handler and, bounded, by a report itself; a report sums
 * the stored hours and counts only the hours since the last settled one live. Its cost follows the
 * hours it covers, not the size of the log.
 */
import {
  addHours,
  beforeAfter,
  composeQuality,
  EVERY_TOOL,
  hourOf,
  hourStart,
  type QualityHour,
  type QualityPair,
  type QualityReport,
  qualityHours,
  type RevisionWindow,
  sumBy,
  windowTotals,
} from '../core/quality-math.ts';
import { hitRateDrop } from '../core/webhook-events.ts';
import type { Services } from '../env.ts';
import { settingsOf } from './route-serving.ts';
import { notifyHitRateDrop } from './webhook-delivery.ts';

/** Longest window a report covers, and the most turns and calls one log read takes. */
export const MAX_QUALITY_DAYS = 90;
export const QUALITY_ROWS = 50_000;
/** Hours one settle step counts from one log read (fewer when the read would pass QUALITY_ROWS). */
export const SETTLE_CHUNK_HOURS = 6;
/** Settle steps a report takes before it reads; the scheduled handler takes the rest. */
export const REPORT_SETTLE_STEPS = 4;
/** Settle steps and agents of one scheduled tick. */
export const TICK_SETTLE_STEPS = 24;
export const TICK_SETTLE_AGENTS = 50;
/**
 * Log rows (turns and calls) one tick reads to settle, in all: with a dense backlog the steps alone
 * let a tick read 24 full slices (`npm run bench:scale` measured ticks of up to 10 s at a million
 * turns), so a tick stops once it has read this many, and the next goes on.
 */
export const TICK_SETTLE_ROWS = 200_000;

const hoursBetween = (from: string, to: string): number =>
  Math.round((Date.parse(hourStart(to)) - Date.parse(hourStart(from))) / 3_600_000);
const earlier = (a: string, b: string): string => (a < b ? a : b);
const later = (a: string, b: string): string => (a > b ? a : b);

/**
 * The hours a settle may count at `now`: those that ended an hour ago or more (the hour before the
 * current one is still open to re-asks and late calls), and none older than a report can reach.
 */
export function settleBounds(now: string): { floor: string; target: string } {
  const target = addHours(hourOf(now), -1);
  return { floor: addHours(target, -2 * MAX_QUALITY_DAYS * 24), target };
}

/**
 * Settles at most `steps` steps of the agent's unsettled hours, oldest first: each step reads the
 * log of up to SETTLE_CHUNK_HOURS hours (plus an hour either side, so calls join their turns and
 * re-asks their request), counts them (src/core/quality-math.ts `qualityHours`) and stores them with the
 * cursor in one batch. Hours with no log are passed over in the same write. No step starts once
 * `rowBudget` log rows have been read. Returns the hours settled and the rows read.
 */
export async function settleQuality(
  svc: Services,
  agent: string,
  now: string,
  steps: number,
  rowBudget = Number.POSITIVE_INFINITY,
): Promise<{ hours: number; rows: number }> {
  const { floor, target } = settleBounds(now);
  let from = later((await svc.quality.settledThrough(agent)) ?? floor, floor);
  const began = from;
  let settled = 0;
  let rows = 0;
  for (let step = 0; step < steps && from < target && rows < rowBudget; step++) {
    const next = await svc.log.nextLogHour(agent, hourStart(from));
    const start = next === null ? target : earlier(later(next, from), target);
    let to = start >= target ? target : earlier(addHours(start, SETTLE_CHUNK_HOURS), target);
    let counted: { hours: QualityHour[]; pairs: QualityPair[] } = { hours: [], pairs: [] };
    while (start < to) {
      const slice = await svc.log.rangeLog(
        agent,
        hourStart(addHours(start, -1)),
        hourStart(addHours(to, 1)),
        QUALITY_ROWS,
      );
      rows += slice.turns.length + slice.calls.length;
      // Too much log for one read: fewer hours, down to one (an hour over the cap counts what was read).
      if (slice.truncated && hoursBetween(start, to) > 1) {
        to = addHours(start, Math.floor(hoursBetween(start, to) / 2));
        continue;
      }
      counted = qualityHours(slice, start, to);
      break;
    }
    await svc.quality.writeHours(agent, from, to, counted.hours, counted.pairs, floor);
    settled += hoursBetween(from, to);
    from = to;
  }
  const day = completedDay(began, from, now);
  if (day !== null) await checkHitRateDrop(svc, agent, day, now);
  return { hours: settled, rows };
}

const DAY_MS = 86_400_000;
const dayBefore = (date: string): string =>
  new Date(Date.parse(`${date}T00:00:00.000Z`) - DAY_MS).toISOString().slice(0, 10);

/**
 * The newest UTC day whose last hour was settled in [from, to), if it is yesterday or today at
 * `now`: a backlog of older days settled at once is history, not news.
 */
export function completedDay(from: string, to: string, now: string): string | null {
  if (to <= from) return null;
  const last = addHours(to, -1);
  const date = last.slice(11, 13) === '23' ? last.slice(0, 10) : dayBefore(last.slice(0, 10));
  if (`${date}T23` < from) return null;
  return date >= dayBefore(now.slice(0, 10)) ? date : null;
}

/**
 * `quality.dropped` (docs/integrations.md "Webhooks"): once a day's hours are all settled, its hit
 * rate against the day before's, from the stored hours; enqueued when it fell by more than the
 * agent's `hit_rate_drop_share`. Read only for an agent with a webhook that asks for it.
 */
async function checkHitRateDrop(svc: Services, agent: string, date: string, now: string): Promise<void> {
  const hooks = await svc.webhooks.list(agent);
  if (!hooks.some((h) => h.events.includes('quality.dropped'))) return;
  const [row, hours] = await Promise.all([
    svc.store.getAgent(agent),
    svc.quality.hoursOf(agent, EVERY_TOOL, `${dayBefore(date)}T00`, addHours(`${date}T23`, 1)),
  ]);
  if (!row) return;
  const { days } = composeQuality({
    hours,
    missed: [],
    confused: [],
    revisions: [],
    days: 2,
    now: `${date}T12:00:00.000Z`,
  });
  const [previous, day] = days;
  if (!previous || !day) return;
  const drop = hitRateDrop(previous, day, settingsOf(row.settings).hit_rate_drop_share);
  if (drop) await notifyHitRateDrop(svc, agent, drop, now);
}

/**
 * One scheduled tick: the least settled agents first, TICK_SETTLE_STEPS steps and `rowBudget` log
 * rows read in all (a step that starts may pass the budget by one slice).
 */
export async function settleTick(
  svc: Services,
  now: string,
  rowBudget = TICK_SETTLE_ROWS,
): Promise<{ agents: number; hours: number; rows: number }> {
  const agents = await svc.quality.laggingAgents(settleBounds(now).target, TICK_SETTLE_AGENTS);
  let left = TICK_SETTLE_STEPS;
  let hours = 0;
  let rows = 0;
  for (const agent of agents) {
    if (left <= 0 || rows >= rowBudget) break;
    const steps = Math.max(1, Math.floor(left / agents.length));
    const done = await settleQuality(svc, agent, now, steps, rowBudget - rows);
    hours += done.hours;
    rows += done.rows;
    left -= steps;
  }
  return { agents: agents.length, hours, rows };
}

/**
 * The report of one agent (or one tool) over the last `days` UTC days: stored hours before the
 * agent's cursor, live counts from the log after it. `truncated` when the live part passed
 * QUALITY_ROWS (a backlog the scheduled handler has not settled yet).
 */
export async function qualityOf(
  svc: Services,
  agent: string,
  query: { days: number; tool?: string | undefined },
  revisionList: readonly RevisionWindow[],
  now: string,
): Promise<QualityReport & { truncated: boolean }> {
  await settleQuality(svc, agent, now, REPORT_SETTLE_STEPS);
  const { days, tool } = query;
  const today = hourOf(`${now.slice(0, 10)}T00`);
  const windowStart = addHours(today, -(days - 1) * 24);
  // Twice the window: a revision applied early in it has its before hours too.
  const from = addHours(windowStart, -days * 24);
  const through = later((await svc.quality.settledThrough(agent)) ?? from, from);
  const [stored, totals, counts, tail] = await Promise.all([
    svc.quality.hoursOf(agent, tool ?? EVERY_TOOL, windowStart, through),
    svc.quality.totals(agent, windowStart, through, tool),
    svc.quality.revisionCounts(agent, revisionList, days, through),
    svc.log.windowLog(agent, hourStart(addHours(through, -1)), QUALITY_ROWS),
  ]);
  const live = qualityHours(tail, through, '9999');
  const liveTotals = windowTotals(
    live.hours.filter((h) => h.hour >= windowStart),
    live.pairs.filter((p) => p.hour >= windowStart),
  );
  const revisions = revisionList.map((r, i) => {
    const tail = beforeAfter(r, live.hours, days);
    const base = counts[i] ?? { before: { served_turns: 0, hits: 0 }, after: { served_turns: 0, hits: 0 } };
    return {
      ...r,
      before: {
        served_turns: base.before.served_turns + tail.before.served_turns,
        hits: base.before.hits + tail.before.hits,
      },
      after: {
        served_turns: base.after.served_turns + tail.after.served_turns,
        hits: base.after.hits + tail.after.hits,
      },
    };
  });
  const report = composeQuality({
    hours: [...stored, ...live.hours],
    missed: sumBy(
      [...totals.missed, ...liveTotals.missed],
      (m) => m.tool,
      (into, m) => {
        into.misses += m.misses;
      },
    ),
    confused: sumBy(
      [...totals.confused, ...liveTotals.confused],
      (c) => `${c.tool}\u0000${c.served_by}`,
      (into, c) => {
        into.count += c.count;
      },
    ),
    revisions,
    days,
    now,
    tool,
  });
  return { ...report, truncated: tail.truncated };
}
