/**
 * The log: turns, calls and outcomes (docs/learning.md), in the agent's own log database
 * (src/adapters/log-db.ts). Reads are bounded and served by the indexes of
 * src/adapters/agent-log-schema.ts: (agent, tool, seq) / (agent, turn_id) / (agent, conversation_id, seq).
 */
import type { CallRecord, OfferedTool, OutcomeRecord, TurnRecord } from '../core/records.ts';
import type { LogDb, LogOf, LogStatement, SqlValue } from './log-db.ts';
import { type CallLog, LOG_PAGE_ROWS, type LogSlice, type NewCall, type NewTurn } from '../core/ports.ts';

export type { LogSlice, NewCall, NewTurn };
export { LOG_PAGE_ROWS };

const INSERT_TURNS =
  'INSERT INTO turns (agent, turn_id, request, conversation_id, routed, offered, source, created_at)';
/**
 * `/route` writes its turn after answering, so a trace naming that turn_id can land first: the
 * route's row then fills in what routing decided (routed, offered) and keeps its own source, so
 * `not_offered` evidence is never lost to the race. (`WHERE true` before it in an INSERT … SELECT
 * keeps SQLite from reading ON as a join constraint.)
 */
const TURN_UPSERT = `ON CONFLICT (agent, turn_id) DO UPDATE SET routed = excluded.routed, offered = excluded.offered,
  source = excluded.source, request = COALESCE(excluded.request, turns.request),
  conversation_id = COALESCE(excluded.conversation_id, turns.conversation_id)
  WHERE excluded.source = 'route' AND turns.source <> 'route'`;
function turnBinds(agent: string, t: NewTurn): SqlValue[] {
  return [
    agent,
    t.turn_id,
    t.request,
    t.conversation_id,
    t.routed ? 1 : 0,
    JSON.stringify(t.offered),
    t.source,
    t.created_at,
  ];
}

/** A call's values in the order of LOG_COLUMNS.calls (src/adapters/agent-log-schema.ts). */
export function callValues(c: NewCall): SqlValue[] {
  return [
    c.call_id,
    c.tool,
    JSON.stringify(c.arguments),
    c.success ? 1 : 0,
    c.error,
    c.request,
    c.turn_id,
    c.conversation_id,
    c.at,
  ];
}

/** Rows per statement: SQLite in a Durable Object (like D1) binds at most 100 parameters a statement. */
const CALL_COLUMNS = 10;
const CALLS_PER_STATEMENT = Math.floor(100 / CALL_COLUMNS);

/** The call log. Idempotent by (agent, call_id): a retried batch never duplicates. */
export function createLog(logOf: LogOf): CallLog {
  return {
    /** Records a turn once; a route's turn completes a trace's (TURN_UPSERT). */
    insertTurn(agent: string, t: NewTurn): LogStatement {
      return logOf(agent)
        .prepare(`${INSERT_TURNS} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ${TURN_UPSERT}`)
        .bind(...turnBinds(agent, t));
    },

    /**
     * Records many turns as insertTurn does, in ONE statement: the rows travel as one JSON array
     * parameter read back with json_each (`/route` writes the turns an isolate gathered
     * together; a statement binds at most 100 values).
     */
    async writeTurns(agent: string, turns: readonly NewTurn[]): Promise<void> {
      const rows = turns.map((t) => turnBinds(agent, t).slice(1));
      await logOf(agent)
        .prepare(
          `${INSERT_TURNS} SELECT ?1, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, j.value ->> 6
           FROM json_each(?2) j WHERE true ${TURN_UPSERT}`,
        )
        .bind(agent, JSON.stringify(rows))
        .run();
    },

    /**
     * Inserts calls in one atomic batch (with `extra` statements of the same log before them);
     * returns how many were new and the agent's newest call seq after it (0: none).
     */
    async insertCalls(
      agent: string,
      calls: readonly NewCall[],
      extra: LogStatement[] = [],
    ): Promise<{ accepted: number; lastSeq: number }> {
      const db = logOf(agent);
      const statements: LogStatement[] = [...extra];
      for (let i = 0; i < calls.length; i += CALLS_PER_STATEMENT) {
        const chunk = calls.slice(i, i + CALLS_PER_STATEMENT);
        const placeholders = chunk
          .map(
            (_, j) => `(${Array.from({ length: CALL_COLUMNS }, (_, c) => `?${j * CALL_COLUMNS + c + 1}`).join(', ')})`,
          )
          .join(', ');
        const binds = chunk.flatMap((c) => [agent, ...callValues(c)]);
        statements.push(
          db
            .prepare(
              `INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at)
               VALUES ${placeholders} ON CONFLICT (agent, call_id) DO NOTHING`,
            )
            .bind(...binds),
        );
      }
      statements.push(db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM calls WHERE agent = ?1').bind(agent));
      const results = await db.batch(statements);
      const accepted = results.slice(extra.length, -1).reduce((n, r) => n + r.meta.changes, 0);
      return { accepted, lastSeq: Number(results.at(-1)?.results[0]?.seq ?? 0) };
    },

    /** The newest call seq of an agent (0 when it has none): one index seek. */
    async lastCallSeq(agent: string): Promise<number> {
      const row = await logOf(agent)
        .prepare('SELECT MAX(seq) AS seq FROM calls WHERE agent = ?1')
        .bind(agent)
        .first<{ seq: number | null }>();
      return row?.seq ?? 0;
    },

    /**
     * The newest `limit` turns and calls of the agent with the outcomes of those turns: the recent
     * log the apply re-check attributes (src/core/attribution.ts). Two index reads on (agent, seq).
     */
    async recentLog(agent: string, limit: number): Promise<LogSlice> {
      const db = logOf(agent);
      const [turns, calls] = await db.batch([
        db.prepare('SELECT * FROM turns WHERE agent = ?1 ORDER BY seq DESC LIMIT ?2').bind(agent, limit),
        db.prepare('SELECT * FROM calls WHERE agent = ?1 ORDER BY seq DESC LIMIT ?2').bind(agent, limit),
      ]);
      return sliceOf(
        db,
        agent,
        (turns?.results ?? []) as unknown as TurnRow[],
        (calls?.results ?? []) as unknown as CallRow[],
      );
    },

    /**
     * The turns and calls of the agent since `since` (newest `limit` of each, by the time indexes
     * of src/adapters/agent-log-schema.ts) and the outcomes of those turns; `truncated` when a cap was hit.
     */
    async windowLog(agent: string, since: string, limit: number): Promise<LogSlice & { truncated: boolean }> {
      return rangeSlice(logOf(agent), agent, { from: since, to: null, newestFirst: true }, limit);
    },

    /**
     * The turns and calls of the agent in [from, to) (ISO times; the oldest `limit` of each) and the
     * outcomes of those turns; `truncated` when a cap was hit. What settling quality hours reads.
     */
    async rangeLog(agent: string, from: string, to: string, limit: number): Promise<LogSlice & { truncated: boolean }> {
      return rangeSlice(logOf(agent), agent, { from, to, newestFirst: false }, limit);
    },

    /** The hour of the agent's first logged turn or call at or after `from` (ISO), or null. */
    async nextLogHour(agent: string, from: string): Promise<string | null> {
      const row = await logOf(agent)
        .prepare(
          `SELECT MIN(at) AS at FROM (
             SELECT MIN(created_at) AS at FROM turns WHERE agent = ?1 AND created_at >= ?2
             UNION ALL SELECT MIN(at) AS at FROM calls WHERE agent = ?1 AND at >= ?2)`,
        )
        .bind(agent, from)
        .first<{ at: string | null }>();
      return row?.at ? row.at.slice(0, 13) : null;
    },

    async getTurn(agent: string, turnId: string): Promise<TurnRecord | null> {
      const row = await logOf(agent)
        .prepare('SELECT * FROM turns WHERE agent = ?1 AND turn_id = ?2')
        .bind(agent, turnId)
        .first<TurnRow>();
      return row ? toTurn(row) : null;
    },

    async upsertOutcome(agent: string, o: OutcomeRecord): Promise<void> {
      await logOf(agent)
        .prepare(
          `INSERT INTO outcomes (agent, turn_id, ok, served_by, at) VALUES (?1, ?2, ?3, ?4, ?5)
           ON CONFLICT (agent, turn_id) DO UPDATE SET ok = excluded.ok, served_by = excluded.served_by, at = excluded.at`,
        )
        .bind(agent, o.turn_id, o.ok ? 1 : 0, o.served_by, o.at)
        .run();
    },
  };
}

/** A time range of the log: [from, to) (to null: open), oldest or newest first. */
interface TimeRange {
  from: string;
  to: string | null;
  newestFirst: boolean;
}

/** The first `limit` turns and calls of a time range, each by its time index, and their outcomes. */
async function rangeSlice(
  db: LogDb,
  agent: string,
  range: TimeRange,
  limit: number,
): Promise<LogSlice & { truncated: boolean }> {
  const [turns, calls] = await Promise.all([
    readRange<TurnRow>(db, agent, 'turns', 'created_at', range, limit),
    readRange<CallRow>(db, agent, 'calls', 'at', range, limit),
  ]);
  const slice = await sliceOf(db, agent, turns, calls);
  return { ...slice, truncated: turns.length >= limit || calls.length >= limit };
}

/**
 * Up to `limit` rows of a range in pages of LOG_PAGE_ROWS, ordered by (time, seq): each page an
 * index range that starts where the last one stopped.
 */
async function readRange<T extends { seq: number }>(
  db: LogDb,
  agent: string,
  table: 'turns' | 'calls',
  column: 'created_at' | 'at',
  range: TimeRange,
  limit: number,
): Promise<T[]> {
  const dir = range.newestFirst ? 'DESC' : 'ASC';
  const rows: T[] = [];
  let last: Record<string, unknown> | undefined;
  while (rows.length < limit) {
    const take = Math.min(LOG_PAGE_ROWS, limit - rows.length);
    const binds: SqlValue[] = [agent, range.from];
    const where = [`agent = ?1`, `${column} >= ?2`];
    if (range.to !== null) where.push(`${column} < ?${binds.push(range.to)}`);
    if (last) {
      const at = binds.push(String(last[column]));
      binds.push(Number(last.seq));
      where.push(`(${column}, seq) ${range.newestFirst ? '<' : '>'} (?${at}, ?${at + 1})`);
    }
    const page = await db
      .prepare(
        `SELECT * FROM ${table} WHERE ${where.join(' AND ')} ORDER BY ${column} ${dir}, seq ${dir} LIMIT ?${binds.push(take)}`,
      )
      .bind(...binds)
      .all<T>();
    rows.push(...page.results);
    last = page.results.at(-1) as Record<string, unknown> | undefined;
    if (page.results.length < take) break;
  }
  return rows;
}

/** The records of the rows read, with the outcomes of their turns (read LOG_PAGE_ROWS turn ids at a time). */
async function sliceOf(db: LogDb, agent: string, turnRows: TurnRow[], callRows: CallRow[]): Promise<LogSlice> {
  const outcomes: OutcomeRecord[] = [];
  for (let i = 0; i < turnRows.length; i += LOG_PAGE_ROWS) {
    const ids = turnRows.slice(i, i + LOG_PAGE_ROWS).map((t) => t.turn_id);
    const { results } = await db.prepare(OUTCOMES_OF).bind(agent, JSON.stringify(ids)).all<OutcomeRow>();
    outcomes.push(...results.map(toOutcome));
  }
  return { turns: turnRows.map(toTurn), calls: callRows.map(toCall), outcomes };
}

/** The reported outcomes of the turns in ?2 (a JSON array of turn ids); ?1 is the agent. */
export const OUTCOMES_OF =
  'SELECT turn_id, ok, served_by, at FROM outcomes WHERE agent = ?1 AND turn_id IN (SELECT value FROM json_each(?2))';

export interface OutcomeRow {
  turn_id: string;
  ok: number;
  served_by: string | null;
  at: string;
}

export function toOutcome(r: OutcomeRow): OutcomeRecord {
  return { turn_id: r.turn_id, ok: r.ok === 1, served_by: r.served_by, at: r.at };
}

export interface TurnRow {
  seq: number;
  turn_id: string;
  request: string | null;
  conversation_id: string | null;
  routed: number;
  offered: string;
  created_at: string;
}

export function toTurn(r: TurnRow): TurnRecord {
  return {
    seq: r.seq,
    turn_id: r.turn_id,
    request: r.request,
    conversation_id: r.conversation_id,
    routed: r.routed === 1,
    offered: JSON.parse(r.offered) as OfferedTool[],
    created_at: r.created_at,
  };
}

export interface CallRow {
  seq: number;
  call_id: string;
  tool: string;
  arguments: string;
  success: number;
  error: string | null;
  request: string | null;
  turn_id: string | null;
  conversation_id: string | null;
  at: string;
}

export function toCall(r: CallRow): CallRecord {
  return {
    seq: r.seq,
    call_id: r.call_id,
    tool: r.tool,
    arguments: JSON.parse(r.arguments) as Record<string, unknown>,
    success: r.success === 1,
    error: r.error,
    request: r.request,
    turn_id: r.turn_id,
    conversation_id: r.conversation_id,
    at: r.at,
  };
}
