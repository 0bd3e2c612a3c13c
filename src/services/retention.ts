/**
 * Log retention (docs/configuration.md `log_retention_days`): the scheduled handler removes turns,
 * calls, outcomes and trace-seen tool definitions older than each agent's window, oldest first, in
 * bounded batches, so a tick stays well inside a Worker's limits however large the backlog; the
 * next tick goes on where this one stopped. Revisions keep the evidence they show (it is stored in
 * the revision), so pruning never empties a revision page. The Durable Object keeps counters only,
 * no per-turn rows, so it has nothing to prune.
 */
import type { Services } from '../env.ts';
import { settingsOf } from './routing.ts';

/** Rows one DELETE removes, and rows one tick removes in all (all tables and agents together). */
export const PRUNE_BATCH = 2_000;
export const PRUNE_ROWS_PER_TICK = 20_000;

/** The log tables, each with the column that dates a row. */
const DATED = [
  ['turns', 'created_at'],
  ['calls', 'at'],
  ['outcomes', 'at'],
  ['trace_tools', 'seen_at'],
] as const;

export interface PruneTick {
  /** Rows removed this tick, per table. */
  removed: Record<string, number>;
  /** True when the budget ran out before every agent's backlog was gone: the next tick goes on. */
  more: boolean;
}

/** Removes rows older than each agent's window, at most `budget` of them, `batch` per statement. */
export async function pruneLog(
  svc: Services,
  now: string,
  budget = PRUNE_ROWS_PER_TICK,
  batch = PRUNE_BATCH,
): Promise<PruneTick> {
  const db = svc.store.db;
  const removed: Record<string, number> = Object.fromEntries(DATED.map(([t]) => [t, 0]));
  let left = budget;
  const { results: agents } = await db
    .prepare('SELECT agent, settings FROM agents ORDER BY agent')
    .all<{ agent: string; settings: string }>();
  for (const row of agents) {
    const days = settingsOf(JSON.parse(row.settings || '{}')).log_retention_days;
    const cutoff = new Date(Date.parse(now) - days * 86_400_000).toISOString();
    for (const [table, column] of DATED) {
      for (;;) {
        if (left <= 0) return { removed, more: true };
        const limit = Math.min(batch, left);
        const res = await db
          .prepare(
            `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE agent = ?1 AND ${column} < ?2 ORDER BY ${column} LIMIT ?3)`,
          )
          .bind(row.agent, cutoff, limit)
          .run();
        const n = res.meta.changes ?? 0;
        removed[table] = (removed[table] ?? 0) + n;
        left -= n;
        if (n < limit) break;
      }
    }
  }
  return { removed, more: false };
}
