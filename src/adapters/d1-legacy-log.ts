/**
 * The log a deployment kept in D1 before it moved to each agent's Durable Object (docs/capacity.md
 * "Where the log lives"): read oldest first a page at a time, written into each agent's log with
 * the seqs D1 gave (review marks are seqs), then removed from D1. Each object starts its own seqs
 * above every seq D1 gave (`legacySeqFloor`), so moved rows never meet rows written since.
 */
import type { LegacyLogStore, LegacyTable } from '../core/ports.ts';
import { LOG_COLUMNS } from './agent-log-schema.ts';
import type { LogOf, SqlValue } from './log-db.ts';

/** The D1 log tables and every column a row moves with (the seqs too: review marks are seqs). */
export const LEGACY_TABLES = {
  turns: ['seq', 'agent', ...LOG_COLUMNS.turns],
  calls: ['seq', 'agent', ...LOG_COLUMNS.calls],
  outcomes: ['agent', ...LOG_COLUMNS.outcomes],
  trace_tools: ['agent', ...LOG_COLUMNS.trace_tools],
} as const satisfies Record<LegacyTable, readonly string[]>;

/** Characters of one JSON parameter (a bound value holds at most 2 MB). */
const CHUNK_CHARS = 500_000;

/** The highest seq D1 gave a turn and a call (0 when its log is empty): where an object's seqs start. */
export async function legacySeqFloor(db: D1Database): Promise<{ turns: number; calls: number }> {
  const row = await db
    .prepare(
      'SELECT (SELECT COALESCE(MAX(seq), 0) FROM turns) AS turns, (SELECT COALESCE(MAX(seq), 0) FROM calls) AS calls',
    )
    .first<{ turns: number; calls: number }>();
  return { turns: row?.turns ?? 0, calls: row?.calls ?? 0 };
}

/** Moves the oldest D1 log rows into their agents' logs. */
export function createLegacyLog(db: D1Database, logOf: LogOf): LegacyLogStore {
  return {
    tables: Object.keys(LEGACY_TABLES) as LegacyTable[],

    /**
     * Moves the `limit` oldest rows of `table` (by rowid): per agent one transaction of its log
     * (a row already there is kept), then one D1 delete of what was moved. Returns how many moved.
     */
    async move(table: LegacyTable, limit: number): Promise<number> {
      const columns = LEGACY_TABLES[table];
      const { results } = await db
        .prepare(`SELECT rowid AS position, ${columns.join(', ')} FROM ${table} ORDER BY rowid LIMIT ?1`)
        .bind(limit)
        .all<Record<string, SqlValue>>();
      if (results.length === 0) return 0;
      const byAgent = new Map<string, SqlValue[][]>();
      for (const row of results) {
        const agent = String(row.agent);
        const rows = byAgent.get(agent) ?? [];
        byAgent.set(agent, rows);
        rows.push(columns.map((c) => row[c] ?? null));
      }
      const insert = `INSERT OR IGNORE INTO ${table} (${columns.join(', ')})
        SELECT ${columns.map((_, i) => `j.value ->> ${i}`).join(', ')} FROM json_each(?1) j ORDER BY j.key`;
      for (const [agent, rows] of byAgent) {
        const log = logOf(agent);
        await log.batch(chunks(rows).map((chunk) => log.prepare(insert).bind(chunk)));
      }
      const positions = JSON.stringify(results.map((r) => r.position));
      await db.prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT value FROM json_each(?1))`).bind(positions).run();
      return results.length;
    },
  };
}

/** Rows as JSON arrays of at most CHUNK_CHARS characters each. */
function chunks(rows: readonly SqlValue[][]): string[] {
  const out: string[] = [];
  let chunk: string[] = [];
  let chars = 0;
  for (const row of rows) {
    const text = JSON.stringify(row);
    if (chunk.length > 0 && chars + text.length > CHUNK_CHARS) {
      out.push(`[${chunk.join(',')}]`);
      chunk = [];
      chars = 0;
    }
    chunk.push(text);
    chars += text.length;
  }
  if (chunk.length > 0) out.push(`[${chunk.join(',')}]`);
  return out;
}
