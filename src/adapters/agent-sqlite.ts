/**
 * The storage of one agent's Durable Object in the object's SQLite (`ctx.storage.sql`): every SQL
 * statement the object runs is here, so src/agent-object.ts only wires its RPC methods to this store
 * and to the rules of src/core. Synchronous, like the object's SQLite API.
 */
import type { AgentObjectStore, OfferRow, SqlResult, SqlStatement, SqlValue } from '../core/ports.ts';
import type { Bucket } from '../core/token-bucket.ts';
import { AGENT_LOG_SCHEMA, seqFloorStatements } from './agent-log-schema.ts';

/** The object's own tables, beside its log's (AGENT_LOG_SCHEMA). */
const OBJECT_SCHEMA = `
  CREATE TABLE IF NOT EXISTS offers (tool TEXT PRIMARY KEY, offered INTEGER NOT NULL DEFAULT 0, since_turn INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, until_ms INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS rate (principal TEXT PRIMARY KEY, tokens REAL NOT NULL, at_ms INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS dry_runs (holder TEXT PRIMARY KEY, until_ms INTEGER NOT NULL);
`;

/** The agent object's store on its storage (`ctx.storage`). */
export function createAgentSqliteStore(storage: DurableObjectStorage): AgentObjectStore {
  const sql = storage.sql;

  const totalChanges = (): number => sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n;

  /** Runs one statement; `changes` counts the rows it inserted, updated or deleted (0 for a read). */
  const run = ({ sql: text, params }: SqlStatement): SqlResult => {
    const before = totalChanges();
    const results = sql.exec<Record<string, SqlValue>>(text, ...params).toArray();
    return { results, meta: { changes: totalChanges() - before } };
  };

  const counter = (name: string): number =>
    sql.exec<{ value: number }>('SELECT value FROM counters WHERE name = ?', name).toArray()[0]?.value ?? 0;

  return {
    create() {
      sql.exec(OBJECT_SCHEMA);
      sql.exec(AGENT_LOG_SCHEMA);
    },

    clear: () => storage.deleteAll(),

    transaction: (fn) => storage.transactionSync(fn),

    logQuery: run,

    seqFloorSet: () => counter('seq_floor_set') === 1,

    setSeqFloor(floor) {
      storage.transactionSync(() => {
        for (const statement of seqFloorStatements(floor)) run(statement);
        sql.exec("INSERT OR REPLACE INTO counters (name, value) VALUES ('seq_floor_set', 1)");
      });
    },

    routedTurns: () => counter('routed_turns'),

    addOffers(turns, offers) {
      sql.exec(
        'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value',
        'routed_turns',
        turns,
      );
      for (const o of offers) {
        sql.exec(
          `INSERT INTO offers (tool, offered, since_turn) VALUES (?, ?, ?)
           ON CONFLICT (tool) DO UPDATE SET offered = offered + excluded.offered`,
          o.tool,
          o.count,
          o.sinceTurn,
        );
      }
    },

    registerTools(tools, sinceTurn) {
      for (const tool of tools) {
        sql.exec(
          'INSERT INTO offers (tool, offered, since_turn) VALUES (?, 0, ?) ON CONFLICT (tool) DO NOTHING',
          tool,
          sinceTurn,
        );
      }
    },

    offerRows(): OfferRow[] {
      return sql
        .exec<{ tool: string; offered: number; since_turn: number }>('SELECT tool, offered, since_turn FROM offers')
        .toArray()
        .map((r) => ({ tool: r.tool, offered: r.offered, sinceTurn: r.since_turn }));
    },

    takeLease(holder, nowMs, untilMs) {
      const current = sql
        .exec<{ holder: string; until_ms: number }>('SELECT holder, until_ms FROM lease WHERE id = 1')
        .toArray()[0];
      if (current && current.holder !== holder && current.until_ms > nowMs) return false;
      sql.exec('INSERT OR REPLACE INTO lease (id, holder, until_ms) VALUES (1, ?, ?)', holder, untilMs);
      return true;
    },

    releaseLease(holder) {
      sql.exec('DELETE FROM lease WHERE id = 1 AND holder = ?', holder);
    },

    takeDryRun(holder, nowMs, untilMs, max) {
      sql.exec('DELETE FROM dry_runs WHERE until_ms <= ?', nowMs);
      const held = sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM dry_runs').one().n;
      if (held >= max) return false;
      sql.exec('INSERT OR REPLACE INTO dry_runs (holder, until_ms) VALUES (?, ?)', holder, untilMs);
      return true;
    },

    releaseDryRun(holder) {
      sql.exec('DELETE FROM dry_runs WHERE holder = ?', holder);
    },

    bucket(name): Bucket | null {
      const row = sql
        .exec<{ tokens: number; at_ms: number }>('SELECT tokens, at_ms FROM rate WHERE principal = ?', name)
        .toArray()[0];
      return row ? { tokens: row.tokens, atMs: row.at_ms } : null;
    },

    keepBucket(name, bucket) {
      sql.exec(
        'INSERT OR REPLACE INTO rate (principal, tokens, at_ms) VALUES (?, ?, ?)',
        name,
        bucket.tokens,
        bucket.atMs,
      );
    },
  };
}
