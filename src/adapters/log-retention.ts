/**
 * Log retention's storage (src/services/retention.ts decides what and when): the agent list in D1,
 * and one batch of DELETEs in an agent's log, in its Durable Object (one RPC, one transaction).
 */
import type { RetentionStore } from '../core/ports.ts';
import type { LogOf } from './log-db.ts';

/** The log tables, each with the column that dates a row. */
const DATED = [
  ['turns', 'created_at'],
  ['calls', 'at'],
  ['outcomes', 'at'],
  ['trace_tools', 'seen_at'],
] as const;

export function createLogRetention(db: D1Database, logOf: LogOf): RetentionStore {
  return {
    tables: DATED.map(([table]) => table),

    async agents() {
      const { results } = await db
        .prepare('SELECT agent, settings FROM agents ORDER BY agent')
        .all<{ agent: string; settings: string }>();
      return results;
    },

    async prune(agent, cutoff, limit) {
      const log = logOf(agent);
      const results = await log.batch(
        DATED.map(([table, column]) =>
          log
            .prepare(
              `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE agent = ?1 AND ${column} < ?2 ORDER BY ${column} LIMIT ?3)`,
            )
            .bind(agent, cutoff, limit),
        ),
      );
      return DATED.map((_, i) => results[i]?.meta.changes ?? 0);
    },
  };
}
