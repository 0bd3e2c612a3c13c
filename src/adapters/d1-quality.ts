/**
 * The D1 adapter for settled routing-quality hours (migrations/0009_quality_hours.sql, docs/api.md
 * "Quality"): what the settle step writes once per hour and what a report sums. Every read is a
 * range of a primary key or of quality_hours_agent_hour.
 */
import {
  type BeforeAfter,
  EVERY_TOOL,
  type QualityHour,
  type QualityPair,
  type RevisionWindow,
  revisionHours,
  type ServedCounts,
  type WindowTotals,
} from '../core/quality-math.ts';
import type { QualityStore } from '../core/ports.ts';

/** Rows one INSERT carries, as one JSON parameter (D1 binds at most 100 values a statement). */
const ROWS_PER_STATEMENT = 500;

export function createD1Quality(db: D1Database): QualityStore {
  return {
    /** The first hour not yet settled (hours before it are stored), or null before the first settle. */
    async settledThrough(agent: string): Promise<string | null> {
      const row = await db
        .prepare('SELECT through FROM quality_settled WHERE agent = ?1')
        .bind(agent)
        .first<{ through: string }>();
      return row?.through ?? null;
    },

    /** Agents whose cursor is before `target` (or who have none), least settled first. */
    async laggingAgents(target: string, limit: number): Promise<string[]> {
      const { results } = await db
        .prepare(
          `SELECT a.agent FROM agents a LEFT JOIN quality_settled q ON q.agent = a.agent
           WHERE q.through IS NULL OR q.through < ?1 ORDER BY COALESCE(q.through, ''), a.agent LIMIT ?2`,
        )
        .bind(target, limit)
        .all<{ agent: string }>();
      return results.map((r) => r.agent);
    },

    /**
     * Stores the counts of the hours [from, to) and moves the agent's cursor to `to`, in one batch:
     * the hours' old rows go first, so settling an hour again (two settles racing) writes it once,
     * and so do the hours before `keepFrom` (older than any report reaches: a few hours' rows each
     * time, as the cursor moves on).
     */
    async writeHours(
      agent: string,
      from: string,
      to: string,
      hours: readonly QualityHour[],
      pairs: readonly QualityPair[],
      keepFrom: string,
    ): Promise<void> {
      const statements = ['quality_hours', 'quality_pairs'].map((table) =>
        db
          .prepare(`DELETE FROM ${table} WHERE agent = ?1 AND ((hour >= ?2 AND hour < ?3) OR hour < ?4)`)
          .bind(agent, from, to, keepFrom),
      );
      for (let i = 0; i < hours.length; i += ROWS_PER_STATEMENT) {
        const rows = hours
          .slice(i, i + ROWS_PER_STATEMENT)
          .map((h) => [
            h.tool,
            h.hour,
            h.routed_turns,
            h.served_turns,
            h.hits,
            h.rr,
            h.misses,
            h.confusions,
            h.failed_calls,
          ]);
        statements.push(
          db
            .prepare(
              `INSERT INTO quality_hours (agent, tool, hour, routed_turns, served_turns, hits, rr, misses, confusions, failed_calls)
               SELECT ?1, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5,
                      j.value ->> 6, j.value ->> 7, j.value ->> 8
               FROM json_each(?2) j`,
            )
            .bind(agent, JSON.stringify(rows)),
        );
      }
      for (let i = 0; i < pairs.length; i += ROWS_PER_STATEMENT) {
        const rows = pairs.slice(i, i + ROWS_PER_STATEMENT).map((p) => [p.hour, p.tool, p.served_by, p.count]);
        statements.push(
          db
            .prepare(
              `INSERT INTO quality_pairs (agent, hour, tool, served_by, count)
               SELECT ?1, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3 FROM json_each(?2) j`,
            )
            .bind(agent, JSON.stringify(rows)),
        );
      }
      statements.push(
        db
          .prepare(
            `INSERT INTO quality_settled (agent, through) VALUES (?1, ?2)
             ON CONFLICT (agent) DO UPDATE SET through = MAX(through, excluded.through)`,
          )
          .bind(agent, to),
      );
      await db.batch(statements);
    },

    /** The stored hours [from, to) of one tool (EVERY_TOOL: the whole agent). */
    async hoursOf(agent: string, tool: string, from: string, to: string): Promise<QualityHour[]> {
      const { results } = await db
        .prepare(
          `SELECT hour, tool, routed_turns, served_turns, hits, rr, misses, confusions, failed_calls
           FROM quality_hours WHERE agent = ?1 AND tool = ?2 AND hour >= ?3 AND hour < ?4`,
        )
        .bind(agent, tool, from, to)
        .all<QualityHour>();
      return results;
    },

    /**
     * Over the stored hours [from, to): misses per tool and confused requests per pair, of every
     * tool or of `tool` only (its misses; the pairs naming it either way).
     */
    async totals(agent: string, from: string, to: string, tool?: string): Promise<WindowTotals> {
      const [missed, confused] = await db.batch([
        db
          .prepare(
            `SELECT tool, SUM(misses) AS misses FROM quality_hours
             WHERE agent = ?1 AND hour >= ?2 AND hour < ?3 AND tool <> ?4 AND (?5 IS NULL OR tool = ?5)
             GROUP BY tool HAVING SUM(misses) > 0`,
          )
          .bind(agent, from, to, EVERY_TOOL, tool ?? null),
        db
          .prepare(
            `SELECT tool, served_by, SUM(count) AS count FROM quality_pairs
             WHERE agent = ?1 AND hour >= ?2 AND hour < ?3 AND (?4 IS NULL OR tool = ?4 OR served_by = ?4)
             GROUP BY tool, served_by`,
          )
          .bind(agent, from, to, tool ?? null),
      ]);
      return {
        missed: (missed?.results ?? []) as WindowTotals['missed'],
        confused: (confused?.results ?? []) as WindowTotals['confused'],
      };
    },

    /** Each revision's before and after summed over the stored hours before `through` (one batch). */
    async revisionCounts(
      agent: string,
      revisions: readonly RevisionWindow[],
      days: number,
      through: string,
    ): Promise<BeforeAfter[]> {
      if (revisions.length === 0) return [];
      const sum = (tool: string, [from, to]: [string, string]) =>
        db
          .prepare(
            `SELECT COALESCE(SUM(served_turns), 0) AS served_turns, COALESCE(SUM(hits), 0) AS hits FROM quality_hours
             WHERE agent = ?1 AND tool = ?2 AND hour >= ?3 AND hour < MIN(?4, ?5)`,
          )
          .bind(agent, tool, from, to, through);
      const statements = revisions.flatMap((r) => {
        const ranges = revisionHours(r, days);
        return [sum(r.tool, ranges.before), sum(r.tool, ranges.after)];
      });
      const results = await db.batch<ServedCounts>(statements);
      const counts = (i: number): ServedCounts => results[i]?.results[0] ?? { served_turns: 0, hits: 0 };
      return revisions.map((_, i) => ({ before: counts(2 * i), after: counts(2 * i + 1) }));
    },
  };
}
