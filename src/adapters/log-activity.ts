/**
 * The reads behind the dashboard's activity chart, in the agent's log database
 * (src/adapters/log-db.ts). Both are bounded by a time window and served by the indexes of
 * src/adapters/agent-log-schema.ts: calls by (agent, tool, at), turns by (agent, created_at).
 * Times are stored as UTC ISO strings, so a bucket is a prefix.
 */
import type { ActivityStore } from '../core/ports.ts';
import type { LogOf } from './log-db.ts';

/** At most this many of the newest routed turns of a window are read for offer counts. */
export const MAX_TURNS_SCANNED = 50_000;

/** Counts per bucket key (`substr(time, 1, keyChars)`). */
export function createActivity(logOf: LogOf): ActivityStore {
  return {
    async callCounts(
      agent: string,
      tool: string,
      from: string,
      keyChars: number,
    ): Promise<Map<string, { calls: number; failures: number }>> {
      const { results } = await logOf(agent)
        .prepare(
          `SELECT substr(at, 1, ?3) AS bucket, COUNT(*) AS calls, SUM(CASE WHEN success = 0 THEN 1 ELSE 0 END) AS failures
           FROM calls WHERE agent = ?1 AND tool = ?2 AND at >= ?4 GROUP BY bucket`,
        )
        .bind(agent, tool, keyChars, from)
        .all<{ bucket: string; calls: number; failures: number }>();
      return new Map(results.map((r) => [r.bucket, { calls: r.calls, failures: r.failures }]));
    },

    /** Routed turns that offered `tool` (docs/learning.md: an unrouted turn offered nothing). */
    async offerCounts(agent: string, tool: string, from: string, keyChars: number): Promise<Map<string, number>> {
      const { results } = await logOf(agent)
        .prepare(
          `SELECT substr(t.created_at, 1, ?3) AS bucket, COUNT(*) AS offers
           FROM (SELECT created_at, offered FROM turns WHERE agent = ?1 AND created_at >= ?4 AND routed = 1
                 ORDER BY created_at DESC LIMIT ?5) AS t, json_each(t.offered) AS o
           WHERE json_extract(o.value, '$.name') = ?2 GROUP BY bucket`,
        )
        .bind(agent, tool, keyChars, from, MAX_TURNS_SCANNED)
        .all<{ bucket: string; offers: number }>();
      return new Map(results.map((r) => [r.bucket, r.offers]));
    },
  };
}
