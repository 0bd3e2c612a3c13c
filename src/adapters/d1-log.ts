/**
 * The D1 adapter for the log: turns, calls and outcomes (docs/learning.md, §5). Reads are bounded and served
 * by the indexes of migrations/0001 (agent, tool, seq) / (agent, turn_id) / (agent, conversation_id, seq).
 */
import type { CallRecord, OfferedTool, OutcomeRecord, TurnRecord } from '../core/records.ts';

export interface NewTurn {
  turn_id: string;
  request: string | null;
  conversation_id: string | null;
  routed: boolean;
  offered: OfferedTool[];
  source: 'route' | 'trace' | 'call';
  created_at: string;
}

export type NewCall = Omit<CallRecord, 'seq'>;

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
function turnBinds(agent: string, t: NewTurn): unknown[] {
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

/** D1 rows per batch statement: D1 caps bound parameters at 100 per statement. */
const CALL_COLUMNS = 10;
const CALLS_PER_STATEMENT = Math.floor(100 / CALL_COLUMNS);

/** D1-backed call log. Idempotent by (agent, call_id): a retried batch never duplicates. */
export function createD1Log(db: D1Database) {
  return {
    /** Records a turn once; a route's turn completes a trace's (TURN_UPSERT). */
    insertTurn(agent: string, t: NewTurn): D1PreparedStatement {
      return db
        .prepare(`${INSERT_TURNS} VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ${TURN_UPSERT}`)
        .bind(...turnBinds(agent, t));
    },

    /**
     * The same as insertTurn for many turns in ONE statement: the rows travel as one JSON array
     * parameter read back with json_each (`/route` writes the turns an isolate gathered
     * together; D1's cost is mostly per statement and per bound value, and it binds ≤ 100 values).
     */
    insertTurns(agent: string, turns: readonly NewTurn[]): D1PreparedStatement {
      const rows = turns.map((t) => turnBinds(agent, t).slice(1));
      return db
        .prepare(
          `${INSERT_TURNS} SELECT ?1, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, j.value ->> 6
           FROM json_each(?2) j WHERE true ${TURN_UPSERT}`,
        )
        .bind(agent, JSON.stringify(rows));
    },

    /** Inserts calls in one atomic batch; returns how many were new. */
    async insertCalls(agent: string, calls: readonly NewCall[], extra: D1PreparedStatement[] = []): Promise<number> {
      const statements: D1PreparedStatement[] = [...extra];
      for (let i = 0; i < calls.length; i += CALLS_PER_STATEMENT) {
        const chunk = calls.slice(i, i + CALLS_PER_STATEMENT);
        const placeholders = chunk
          .map(
            (_, j) => `(${Array.from({ length: CALL_COLUMNS }, (_, c) => `?${j * CALL_COLUMNS + c + 1}`).join(', ')})`,
          )
          .join(', ');
        const binds = chunk.flatMap((c) => [
          agent,
          c.call_id,
          c.tool,
          JSON.stringify(c.arguments),
          c.success ? 1 : 0,
          c.error,
          c.request,
          c.turn_id,
          c.conversation_id,
          c.at,
        ]);
        statements.push(
          db
            .prepare(
              `INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at)
               VALUES ${placeholders} ON CONFLICT (agent, call_id) DO NOTHING`,
            )
            .bind(...binds),
        );
      }
      const results = await db.batch(statements);
      return results.slice(extra.length).reduce((n, r) => n + r.meta.changes, 0);
    },

    /**
     * The newest `limit` turns and calls of the agent with the outcomes of those turns: the recent
     * log the apply re-check attributes (src/core/attribution.ts). Two index reads on (agent, seq).
     */
    async recentLog(agent: string, limit: number): Promise<LogSlice> {
      return readSlice(db, agent, [
        db.prepare('SELECT * FROM turns WHERE agent = ?1 ORDER BY seq DESC LIMIT ?2').bind(agent, limit),
        db.prepare('SELECT * FROM calls WHERE agent = ?1 ORDER BY seq DESC LIMIT ?2').bind(agent, limit),
      ]);
    },

    /**
     * The turns and calls of the agent since `since` (newest `limit` of each, by the time indexes
     * of migrations/0007_quality.sql) and the outcomes of those turns; `truncated` when a cap was hit.
     */
    async windowLog(agent: string, since: string, limit: number): Promise<LogSlice & { truncated: boolean }> {
      const slice = await readSlice(db, agent, [
        db
          .prepare('SELECT * FROM turns WHERE agent = ?1 AND created_at >= ?2 ORDER BY created_at DESC LIMIT ?3')
          .bind(agent, since, limit),
        db
          .prepare('SELECT * FROM calls WHERE agent = ?1 AND at >= ?2 ORDER BY at DESC LIMIT ?3')
          .bind(agent, since, limit),
      ]);
      return { ...slice, truncated: slice.turns.length >= limit || slice.calls.length >= limit };
    },

    /**
     * The turns and calls of the agent in [from, to) (ISO times; the oldest `limit` of each) and the
     * outcomes of those turns; `truncated` when a cap was hit. What settling quality hours reads.
     */
    async rangeLog(agent: string, from: string, to: string, limit: number): Promise<LogSlice & { truncated: boolean }> {
      const slice = await readSlice(db, agent, [
        db
          .prepare(
            'SELECT * FROM turns WHERE agent = ?1 AND created_at >= ?2 AND created_at < ?3 ORDER BY created_at LIMIT ?4',
          )
          .bind(agent, from, to, limit),
        db
          .prepare('SELECT * FROM calls WHERE agent = ?1 AND at >= ?2 AND at < ?3 ORDER BY at LIMIT ?4')
          .bind(agent, from, to, limit),
      ]);
      return { ...slice, truncated: slice.turns.length >= limit || slice.calls.length >= limit };
    },

    async getTurn(agent: string, turnId: string): Promise<TurnRecord | null> {
      const row = await db
        .prepare('SELECT * FROM turns WHERE agent = ?1 AND turn_id = ?2')
        .bind(agent, turnId)
        .first<TurnRow>();
      return row ? toTurn(row) : null;
    },

    upsertOutcome: (agent: string, o: OutcomeRecord) =>
      db
        .prepare(
          `INSERT INTO outcomes (agent, turn_id, ok, served_by, at) VALUES (?1, ?2, ?3, ?4, ?5)
           ON CONFLICT (agent, turn_id) DO UPDATE SET ok = excluded.ok, served_by = excluded.served_by, at = excluded.at`,
        )
        .bind(agent, o.turn_id, o.ok ? 1 : 0, o.served_by, o.at)
        .run(),
  };
}

export type D1Log = ReturnType<typeof createD1Log>;

/** Turns, calls and the outcomes reported for those turns: a slice of the log the core attributes. */
export interface LogSlice {
  turns: TurnRecord[];
  calls: CallRecord[];
  outcomes: OutcomeRecord[];
}

/** Runs the turns and calls reads in one batch, then reads the outcomes of the turns read. */
async function readSlice(
  db: D1Database,
  agent: string,
  [turnsRead, callsRead]: [D1PreparedStatement, D1PreparedStatement],
): Promise<LogSlice> {
  const [turns, calls] = await db.batch([turnsRead, callsRead]);
  const turnRows = (turns?.results ?? []) as TurnRow[];
  const outcomes = await db
    .prepare(
      'SELECT turn_id, ok, served_by, at FROM outcomes WHERE agent = ?1 AND turn_id IN (SELECT value FROM json_each(?2))',
    )
    .bind(agent, JSON.stringify(turnRows.map((t) => t.turn_id)))
    .all<{ turn_id: string; ok: number; served_by: string | null; at: string }>();
  return {
    turns: turnRows.map(toTurn),
    calls: ((calls?.results ?? []) as CallRow[]).map(toCall),
    outcomes: outcomes.results.map((r) => ({ turn_id: r.turn_id, ok: r.ok === 1, served_by: r.served_by, at: r.at })),
  };
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
