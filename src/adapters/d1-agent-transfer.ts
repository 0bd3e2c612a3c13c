/**
 * Exporting and importing an agent (docs/api.md "Export and import"): tools, versions, revisions,
 * reviews and pins in D1, the log in the agent's log database (src/adapters/log-db.ts). Export reads
 * each table a page at a time in a fixed order on its (agent, …) key, so a large agent streams in
 * bounded memory. Import writes the rows of a checked bundle; the log goes in as JSON arrays read
 * back with json_each (a few statements however many rows, under the 100 bound values of a statement).
 */
import type {
  AgentLine,
  CallLine,
  ExportLine,
  ImportBundle,
  OutcomeLine,
  PinLine,
  ReviewLine,
  RevisionLine,
  ToolLine,
  ToolVersionLine,
  TraceToolLine,
  TurnLine,
} from '../core/agent-export.ts';
import { EXPORT_FORMAT } from '../core/agent-export.ts';
import type { AgentTransferStore } from '../core/ports.ts';
import type { StoredTool } from '../core/records.ts';
import type { RoutedTool, SettingsPatch } from '../schemas.ts';
import { LOG_COLUMNS } from './agent-log-schema.ts';
import { bodyOf, toRevisionRecord, type RevisionRow } from './d1-revisions.ts';
import type { LogOf, SqlValue } from './log-db.ts';
import { callValues } from './log-turns.ts';
import { agentWritten, toolInsertStatement, toTool, type ToolRowDb } from './d1-store.ts';

/** Rows read per export page. */
const EXPORT_PAGE = 500;
/** Characters of one JSON array parameter of an import statement (D1 caps a value at 2 MB). */
const IMPORT_CHUNK_CHARS = 500_000;
/** Tool rows per import batch (each is one INSERT with its vector). */
const TOOLS_PER_BATCH = 100;

type Row = Record<string, unknown>;

/** What export and import need of a database: D1, or an agent's log database. */
interface Sql {
  prepare(sql: string): {
    bind(...values: SqlValue[]): { all<T>(): Promise<{ results: T[] }>; run(): Promise<unknown> };
  };
}

/** One table of the export: its lines in `order` (columns of an (agent, …) index; `rowid` allowed). */
interface Section {
  table: string;
  /** In the agent's log database, not in D1. */
  log?: true;
  order: readonly string[];
  line(row: Row): ExportLine;
}

const json = (v: unknown): unknown => JSON.parse(String(v));
const nullable = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** The export's sections after the agent line, in the order they are written. */
const SECTIONS: readonly Section[] = [
  { table: 'tools', order: ['name'], line: toolLine },
  { table: 'tool_versions', order: ['name', 'version'], line: toolVersionLine },
  { table: 'revisions', order: ['created_at', 'rowid'], line: revisionLine },
  { table: 'reviews', order: ['created_at', 'rowid'], line: reviewLine },
  { table: 'pins', order: ['tool'], line: pinLine },
  { table: 'trace_tools', order: ['name'], line: traceToolLine, log: true },
  { table: 'turns', order: ['seq'], line: turnLine, log: true },
  { table: 'calls', order: ['seq'], line: callLine, log: true },
  { table: 'outcomes', order: ['turn_id'], line: outcomeLine, log: true },
];

/** Export and import. Reads are keyset pages; import writes are checked first by the caller. */
export function createD1AgentTransfer(db: D1Database, logOf: LogOf): AgentTransferStore {
  return {
    /** The agent line, or null when the agent does not exist. */
    async agentLine(agent: string): Promise<AgentLine | null> {
      const row = await db.prepare('SELECT * FROM agents WHERE agent = ?1').bind(agent).first<Row>();
      if (!row) return null;
      return {
        type: 'agent',
        format: EXPORT_FORMAT,
        agent,
        created_at: String(row.created_at),
        settings: json(row.settings) as SettingsPatch,
        last_review_at: nullable(row.last_review_at),
        last_review_seq: Number(row.last_review_seq),
      };
    },

    /** Every line of the agent after the agent line, a page of one table at a time. */
    async *lines(agent: string): AsyncGenerator<ExportLine[]> {
      for (const section of SECTIONS) {
        let after: unknown[] | null = null;
        for (;;) {
          const rows = await page(section.log ? logOf(agent) : db, section, agent, after);
          if (rows.length > 0) yield rows.map(section.line);
          const last = rows.at(-1);
          if (rows.length < EXPORT_PAGE || !last) break;
          after = section.order.map((c) => last[c === 'rowid' ? 'position' : c]);
        }
      }
    },

    /** Which of `ids` (revision and review ids, unique across agents) this database holds already. */
    async takenIds(ids: readonly string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db
        .prepare(
          `SELECT j.value FROM json_each(?1) j
           WHERE EXISTS (SELECT 1 FROM revisions WHERE revision_id = j.value)
              OR EXISTS (SELECT 1 FROM reviews WHERE review_id = j.value)`,
        )
        .bind(JSON.stringify(ids))
        .raw<[string]>();
      return new Set(rows.map((r) => r[0]));
    },

    /** Creates the agent row with the imported settings; false when the agent exists already. */
    async claimAgent(agent: string, line: AgentLine, now: string): Promise<boolean> {
      const r = await db
        .prepare(
          `INSERT INTO agents (agent, created_at, settings, last_review_at) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (agent) DO NOTHING`,
        )
        .bind(agent, now, JSON.stringify(line.settings), line.last_review_at)
        .run();
      agentWritten(db, agent);
      return r.meta.changes > 0;
    },

    /** Writes the log (turns and calls in their exported order, so their new seqs keep it). */
    async insertLog(agent: string, b: ImportBundle): Promise<void> {
      const bySeq = <T extends { seq: number }>(rows: T[]) => [...rows].sort((x, y) => x.seq - y.seq);
      const log = logOf(agent);
      await insertRows(log, agent, 'turns', LOG_COLUMNS.turns, bySeq(b.turns).map(turnValues));
      await insertRows(log, agent, 'calls', LOG_COLUMNS.calls, bySeq(b.calls).map(callValues));
      await insertRows(log, agent, 'outcomes', LOG_COLUMNS.outcomes, b.outcomes.map(outcomeValues));
      await insertRows(
        log,
        agent,
        'trace_tools',
        LOG_COLUMNS.trace_tools,
        b.traceTools.map((t) => [t.name, JSON.stringify(t.definition), t.seen_at]),
      );
    },

    /** call_id → the seq this database gave the imported call. */
    async callSeqs(agent: string): Promise<Map<string, number>> {
      const { results } = await logOf(agent)
        .prepare('SELECT call_id, seq FROM calls WHERE agent = ?1')
        .bind(agent)
        .all<{ call_id: string; seq: number }>();
      return new Map(results.map((r) => [r.call_id, r.seq]));
    },

    /** Writes tool rows as exported (their own updated_at), vectors included. */
    async insertTools(agent: string, tools: readonly StoredTool[]): Promise<void> {
      for (let i = 0; i < tools.length; i += TOOLS_PER_BATCH) {
        await db.batch(tools.slice(i, i + TOOLS_PER_BATCH).map((t) => toolInsertStatement(db, agent, t, t.updated_at)));
      }
    },

    /** Writes tool versions, revisions, reviews and pins. */
    async insertHistory(agent: string, b: ImportBundle): Promise<void> {
      await insertRows(
        db,
        agent,
        'tool_versions',
        ['name', 'version', 'definition', 'source', 'created_at'],
        b.versions.map(versionValues),
      );
      await insertRows(db, agent, 'revisions', REVISION_COLUMNS, b.revisions.map(revisionValues));
      await insertRows(
        db,
        agent,
        'reviews',
        ['review_id', 'created_at', 'trigger', 'summary'],
        b.reviews.map((r) => [r.review_id, r.created_at, r.trigger, JSON.stringify(r.summary)]),
      );
      await insertRows(
        db,
        agent,
        'pins',
        ['tool', 'pinned_at', 'pinned_by'],
        b.pins.map((p) => [p.tool, p.pinned_at, p.pinned_by]),
      );
    },

    /**
     * The agent's review mark, newest-call mark and call count, and a new tools_gen so no isolate
     * routes from an older snapshot.
     */
    async finishImport(agent: string, lastReviewSeq: number, calls: ReadonlyMap<string, number>): Promise<void> {
      try {
        await db
          .prepare(
            'UPDATE agents SET last_review_seq = ?2, last_call_seq = ?3, calls_logged = ?4, tools_gen = tools_gen + 1 WHERE agent = ?1',
          )
          .bind(agent, lastReviewSeq, Math.max(0, ...calls.values()), calls.size)
          .run();
      } finally {
        agentWritten(db, agent);
      }
    },
  };
}

/** One page of a section after the key `after` (null: from the start). */
async function page(db: Sql, s: Section, agent: string, after: unknown[] | null): Promise<Row[]> {
  const cols = s.order.join(', ');
  const keyed = after ? `AND (${cols}) > (${s.order.map((_, i) => `?${i + 2}`).join(', ')})` : '';
  const limit = `?${(after?.length ?? 0) + 2}`;
  const { results } = await db
    .prepare(`SELECT rowid AS position, * FROM ${s.table} WHERE agent = ?1 ${keyed} ORDER BY ${cols} LIMIT ${limit}`)
    .bind(agent, ...((after ?? []) as SqlValue[]), EXPORT_PAGE)
    .all<Row>();
  return results;
}

/**
 * INSERTs `rows` (arrays in `columns` order) for the agent: each statement carries a JSON array of
 * rows of at most IMPORT_CHUNK_CHARS, read back in order with json_each.
 */
async function insertRows(
  db: Sql,
  agent: string,
  table: string,
  columns: readonly string[],
  rows: readonly unknown[][],
): Promise<void> {
  const sql = `INSERT INTO ${table} (agent, ${columns.join(', ')})
    SELECT ?1, ${columns.map((_, i) => `j.value ->> ${i}`).join(', ')} FROM json_each(?2) j ORDER BY j.key`;
  let chunk: string[] = [];
  let chars = 0;
  const flush = async () => {
    if (chunk.length > 0)
      await db
        .prepare(sql)
        .bind(agent, `[${chunk.join(',')}]`)
        .run();
    chunk = [];
    chars = 0;
  };
  for (const row of rows) {
    const text = JSON.stringify(row);
    if (chars + text.length > IMPORT_CHUNK_CHARS) await flush();
    chunk.push(text);
    chars += text.length;
  }
  await flush();
}

const REVISION_COLUMNS = [
  'revision_id',
  'tool',
  'status',
  'created_at',
  'applied_at',
  'approved_by',
  'approved_key',
  'reason',
  'body',
  'before_row',
  'applied_version',
  'review_id',
  'undone_at',
  'undone_by',
  'undone_key',
];

function turnValues(t: TurnLine): unknown[] {
  return [t.turn_id, t.request, t.conversation_id, t.routed ? 1 : 0, JSON.stringify(t.offered), t.source, t.created_at];
}

function outcomeValues(o: OutcomeLine): unknown[] {
  return [o.turn_id, o.ok ? 1 : 0, o.served_by, o.at];
}

function versionValues(v: ToolVersionLine): unknown[] {
  return [v.name, v.version, JSON.stringify(v.definition), v.source, v.created_at];
}

function revisionValues(r: RevisionLine): unknown[] {
  return [
    r.revision_id,
    r.tool,
    r.status,
    r.created_at,
    r.applied_at,
    r.approved_by,
    r.approved_key,
    r.dismiss_reason,
    JSON.stringify(bodyOf(r)),
    r.before_row === null ? null : JSON.stringify(r.before_row),
    r.applied_version,
    r.review_id,
    r.undone_at,
    r.undone_by,
    r.undone_key,
  ];
}

function toolLine(row: Row): ToolLine {
  const { vector: _vector, embedder: _embedder, ...t } = toTool(row as unknown as ToolRowDb);
  return { type: 'tool', ...t };
}

function toolVersionLine(row: Row): ToolVersionLine {
  return {
    type: 'tool_version',
    name: String(row.name),
    version: Number(row.version),
    definition: json(row.definition) as Record<string, unknown>,
    source: String(row.source),
    created_at: String(row.created_at),
  };
}

function revisionLine(row: Row): RevisionLine {
  const r = toRevisionRecord(row as unknown as RevisionRow);
  return {
    type: 'revision',
    ...r.revision,
    approved_key: r.approved_key,
    undone_key: r.undone_key,
    before_row: r.before_row === null ? null : (JSON.parse(r.before_row) as Record<string, unknown>),
    review_id: r.review_id,
  };
}

function reviewLine(row: Row): ReviewLine {
  return {
    type: 'review',
    review_id: String(row.review_id),
    created_at: String(row.created_at),
    trigger: row.trigger === 'cron' ? 'cron' : 'api',
    summary: json(row.summary) as Record<string, unknown>,
  };
}

function pinLine(row: Row): PinLine {
  return { type: 'pin', tool: String(row.tool), pinned_at: String(row.pinned_at), pinned_by: String(row.pinned_by) };
}

function traceToolLine(row: Row): TraceToolLine {
  return {
    type: 'trace_tool',
    name: String(row.name),
    definition: json(row.definition) as Record<string, unknown>,
    seen_at: String(row.seen_at),
  };
}

function turnLine(row: Row): TurnLine {
  const source = row.source === 'trace' || row.source === 'call' ? row.source : 'route';
  return {
    type: 'turn',
    seq: Number(row.seq),
    turn_id: String(row.turn_id),
    request: nullable(row.request),
    conversation_id: nullable(row.conversation_id),
    routed: row.routed === 1,
    offered: json(row.offered) as RoutedTool[],
    source,
    created_at: String(row.created_at),
  };
}

function callLine(row: Row): CallLine {
  return {
    type: 'call',
    seq: Number(row.seq),
    call_id: String(row.call_id),
    tool: String(row.tool),
    arguments: json(row.arguments) as Record<string, unknown>,
    success: row.success === 1,
    error: nullable(row.error),
    request: nullable(row.request),
    turn_id: nullable(row.turn_id),
    conversation_id: nullable(row.conversation_id),
    at: String(row.at),
  };
}

function outcomeLine(row: Row): OutcomeLine {
  return {
    type: 'outcome',
    turn_id: String(row.turn_id),
    ok: row.ok === 1,
    served_by: nullable(row.served_by),
    at: String(row.at),
  };
}
