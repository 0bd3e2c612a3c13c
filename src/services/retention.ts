/**
 * Log retention (docs/configuration.md `log_retention_days`): the scheduled handler removes turns,
 * calls, outcomes and trace-seen tool definitions older than each agent's window, oldest first, in
 * bounded batches, so a tick stays well inside a Worker's limits however large the backlog; the
 * next tick goes on where this one stopped. The log is in each agent's Durable Object, so a batch is
 * one RPC to that object. Revisions keep the evidence they show (it is stored in the revision), so
 * pruning never empties a revision page. The object's offer counters have no dates: they are counts.
 */
import type { RetentionStore, RevisionStore } from '../core/ports.ts';
import { settingsOf } from './route-serving.ts';

/** Rows one DELETE removes, and rows one tick removes in all (all tables and agents together). */
export const PRUNE_BATCH = 2_000;
export const PRUNE_ROWS_PER_TICK = 20_000;
/**
 * Agents one tick visits: each costs one batch (an RPC, a subrequest) even with nothing to remove,
 * so a deployment of many agents is visited a window at a time, the window moving with each tick.
 */
export const PRUNE_AGENTS_PER_TICK = 50;
const TICK_MS = 10 * 60_000;

/** The stores log retention reads and writes: the log's dated rows, and the agent list's call counts. */
export interface RetentionPorts {
  retention: RetentionStore;
  revisions: Pick<RevisionStore, 'noteCallsPruned'>;
}

export interface PruneTick {
  /** Rows removed this tick, per table. */
  removed: Record<string, number>;
  /** True when the budget ran out before the visited agents' backlog was gone: the next tick goes on. */
  more: boolean;
}

/**
 * Removes rows older than each agent's window, at most `budget` of them: per visited agent, one
 * batch of four DELETEs (one per table, oldest first, an equal share of what is left of the budget,
 * at most `batch` each), repeated while a table still had rows to remove.
 */
export async function pruneLog(
  svc: RetentionPorts,
  now: string,
  budget = PRUNE_ROWS_PER_TICK,
  batch = PRUNE_BATCH,
): Promise<PruneTick> {
  const { tables } = svc.retention;
  const removed: Record<string, number> = Object.fromEntries(tables.map((t) => [t, 0]));
  let left = budget;
  for (const row of await agentsThisTick(svc, now)) {
    const days = settingsOf(JSON.parse(row.settings || '{}')).log_retention_days;
    const cutoff = new Date(Date.parse(now) - days * 86_400_000).toISOString();
    for (;;) {
      const limit = Math.min(batch, Math.floor(left / tables.length));
      if (limit < 1) return { removed, more: true };
      const counts = await svc.retention.prune(row.agent, cutoff, limit);
      let full = false;
      counts.forEach((n, i) => {
        const table = tables[i] ?? '';
        removed[table] = (removed[table] ?? 0) + n;
        left -= n;
        full ||= n >= limit;
      });
      // The agent's call count in D1 (the agent list's) goes down by what this batch removed.
      const calls = counts[tables.indexOf('calls')] ?? 0;
      if (calls > 0) await svc.revisions.noteCallsPruned(row.agent, calls);
      if (!full) break;
    }
  }
  return { removed, more: false };
}

/** The window of agents this tick visits (all of them when there are few), by name, moving each tick. */
async function agentsThisTick(svc: RetentionPorts, now: string): Promise<{ agent: string; settings: string }[]> {
  const results = await svc.retention.agents();
  if (results.length <= PRUNE_AGENTS_PER_TICK) return results;
  const start = (Math.floor(Date.parse(now) / TICK_MS) * PRUNE_AGENTS_PER_TICK) % results.length;
  return [...results, ...results].slice(start, start + PRUNE_AGENTS_PER_TICK);
}
