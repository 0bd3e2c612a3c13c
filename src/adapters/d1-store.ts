/**
 * The D1 adapter for agents, tool rows, versions and keys. All SQL for these tables lives here,
 * with positional binds and one row-mapping function per table. D1 has no interactive transactions:
 * multi-statement writes go through `db.batch`, which is atomic, and row writes are guarded by the
 * (agent, name, version) primary key of tool_versions: two writers of the same next version cannot
 * both succeed (compare-and-set without a read-modify-write race).
 */
import type { StoredTool } from '../core/records.ts';
import type { MemoryWording } from '../core/routing-memory.ts';
import type { AuthorDefinition } from '../core/tooldef.ts';
import type { Example, Settings, SettingsPatch } from '../schemas.ts';
import {
  type AgentRecord,
  type KeyRecord,
  type ToolStore,
  type ToolVersion,
  type ToolWrite,
  VersionConflict,
} from '../core/ports.ts';
import { firstRow } from './d1-rows.ts';

/**
 * The listeners to each database's agent writes made through this isolate, whichever store made
 * them (the tool store, the transfer, the upstreams): `/route` keeps the agent row per isolate and
 * drops it the moment such a write has landed, so the next route in this isolate sees the write.
 */
const agentWriteListeners = new WeakMap<D1Database, Set<(agent: string) => void>>();

/** Tells the listeners of `db` that a write that can move the agent's tools_gen or settings landed (or failed). */
export function agentWritten(db: D1Database, agent: string): void {
  for (const listener of agentWriteListeners.get(db) ?? []) listener(agent);
}

/** The tools columns but the vector (read as NULL): what a row is without its 2 KiB BLOB. */
const COLUMNS_BUT_VECTOR =
  'agent, name, docstring, description, parameters, examples, notes, avoid, call_example, queries_source, version, definition_hash, NULL AS vector, embedder, reviewed_seq, created_at, updated_at, memory';

/**
 * Every D1 table with rows of one agent, the agents table first. The log tables are those a
 * deployment kept from before the log moved to each agent's Durable Object, until the scheduled
 * move empties them (src/services/legacy-log-move.ts).
 */
export const AGENT_TABLES = [
  'agents',
  'tools',
  'tool_versions',
  'turns',
  'calls',
  'outcomes',
  'revisions',
  'reviews',
  'keys',
  'trace_tools',
  'pins',
  'quality_hours',
  'quality_pairs',
  'quality_settled',
  'upstreams',
  'upstream_tools',
  'upstream_quarantine',
  'gateway_sessions',
  'webhooks',
  'webhook_deliveries',
] as const;

/** D1-backed store for the registry. Strongly consistent (one primary), every write one batch. */
export function createD1Store(db: D1Database): ToolStore<D1PreparedStatement> {
  return {
    async ensureAgent(agent: string, now: string): Promise<void> {
      await ensureAgentStatement(db, agent, now).run();
    },

    /** The agent row's INSERT for a caller's batch, so a new agent exists only if the batch lands. */
    ensureAgentStatement: (agent: string, now: string) => ensureAgentStatement(db, agent, now),

    /** The write guard of a revision status change, for `writeTools`' `extra` (see `revisionStatusGuard`). */
    revisionStatusGuard: (agent: string, revisionId: string, status: string) =>
      revisionStatusGuard(db, agent, revisionId, status),

    async getAgent(agent: string): Promise<AgentRecord | null> {
      const row = await db.prepare('SELECT * FROM agents WHERE agent = ?1').bind(agent).first<AgentRow>();
      return row ? toAgent(row) : null;
    },

    /** Every agent with its tool count and the calls its log holds (`calls_logged`, kept by writes and retention). */
    async listAgents(): Promise<(AgentRecord & { tools: number; calls: number })[]> {
      const { results } = await db
        .prepare(
          `SELECT a.*, (SELECT COUNT(*) FROM tools t WHERE t.agent = a.agent) AS tools, a.calls_logged AS calls
           FROM agents a ORDER BY a.agent`,
        )
        .all<AgentRow & { tools: number; calls: number }>();
      return results.map((r) => ({ ...toAgent(r), tools: r.tools, calls: r.calls }));
    },

    async putSettings(agent: string, settings: SettingsPatch): Promise<void> {
      try {
        await db
          .prepare('UPDATE agents SET settings = ?2 WHERE agent = ?1')
          .bind(agent, JSON.stringify(settings))
          .run();
      } finally {
        agentWritten(db, agent);
      }
    },

    /**
     * Every tool row of the agent, by name. `vectors: false` leaves the stored vectors in D1 (a
     * routing snapshot with a Vectorize binding needs none: 2 KiB a row it never holds).
     */
    async listTools(agent: string, opts: { vectors?: boolean } = {}): Promise<StoredTool[]> {
      const columns = opts.vectors === false ? COLUMNS_BUT_VECTOR : '*';
      const { results } = await db
        .prepare(`SELECT ${columns} FROM tools WHERE agent = ?1 ORDER BY name`)
        .bind(agent)
        .all<ToolRowDb>();
      return results.map(toTool);
    },

    /** The names of the agent's registered tools, by name (the primary key's range). */
    async toolNames(agent: string): Promise<string[]> {
      const { results } = await db
        .prepare('SELECT name FROM tools WHERE agent = ?1 ORDER BY name')
        .bind(agent)
        .all<{ name: string }>();
      return results.map((r) => r.name);
    },

    async getTool(agent: string, name: string): Promise<StoredTool | null> {
      return firstRow(db, 'SELECT * FROM tools WHERE agent = ?1 AND name = ?2', [agent, name], toTool);
    },

    /**
     * A tool's test endpoint as stored (JSON `{url, token_sealed}`), or null: none, or no such tool.
     * Kept beside the row, outside its versions: setting one is not an edit of the tool.
     */
    async getTestEndpoint(agent: string, name: string): Promise<string | null> {
      const row = await db
        .prepare('SELECT test_endpoint FROM tools WHERE agent = ?1 AND name = ?2')
        .bind(agent, name)
        .first<{ test_endpoint: string | null }>();
      return row?.test_endpoint ?? null;
    },

    /** Sets (or, with null, removes) a tool's test endpoint; false when the tool is not registered. */
    async setTestEndpoint(agent: string, name: string, value: string | null): Promise<boolean> {
      const res = await db
        .prepare('UPDATE tools SET test_endpoint = ?3 WHERE agent = ?1 AND name = ?2')
        .bind(agent, name, value)
        .run();
      return res.meta.changes > 0;
    },

    /** Highest version ever written for a name (rows deleted since keep their history). */
    async lastVersions(agent: string): Promise<Map<string, number>> {
      const { results } = await db
        .prepare('SELECT name, MAX(version) AS version FROM tool_versions WHERE agent = ?1 GROUP BY name')
        .bind(agent)
        .all<{ name: string; version: number }>();
      return new Map(results.map((r) => [r.name, r.version]));
    },

    /**
     * Writes rows atomically with their version entries and bumps the agent's tools_gen.
     * `extra` statements (a revision status change, say) join the same batch.
     * Throws VersionConflict when another writer got there first.
     */
    async writeTools(
      agent: string,
      writes: readonly ToolWrite[],
      now: string,
      extra: D1PreparedStatement[] = [],
    ): Promise<void> {
      if (writes.length === 0 && extra.length === 0) return;
      const statements: D1PreparedStatement[] = [];
      for (const w of writes) statements.push(...toolWriteStatements(db, agent, w, now));
      statements.push(...extra);
      statements.push(db.prepare('UPDATE agents SET tools_gen = tools_gen + 1 WHERE agent = ?1').bind(agent));
      try {
        await db.batch(statements);
      } catch (err) {
        if (isWriteConflict(err) || /UNIQUE constraint failed: tools/i.test(String(err))) {
          throw new VersionConflict(writes[0]?.tool.name ?? '');
        }
        throw err;
      } finally {
        agentWritten(db, agent);
      }
    },

    async deleteTool(agent: string, name: string): Promise<boolean> {
      try {
        const [del] = await db.batch([
          db.prepare('DELETE FROM tools WHERE agent = ?1 AND name = ?2').bind(agent, name),
          db.prepare('UPDATE agents SET tools_gen = tools_gen + 1 WHERE agent = ?1').bind(agent),
        ]);
        return (del?.meta.changes ?? 0) > 0;
      } finally {
        agentWritten(db, agent);
      }
    },

    /**
     * Every row of the agent, in every table that has one, in one batch (all or nothing); true
     * when the agent existed. The agent row goes first in effect: the batch is one transaction.
     */
    async deleteAgent(agent: string): Promise<boolean> {
      try {
        const results = await db.batch(
          AGENT_TABLES.map((t) => db.prepare(`DELETE FROM ${t} WHERE agent = ?1`).bind(agent)),
        );
        return (results[0]?.meta.changes ?? 0) > 0;
      } finally {
        agentWritten(db, agent);
      }
    },

    async listVersions(agent: string, name: string): Promise<ToolVersion[]> {
      const { results } = await db
        .prepare(
          'SELECT version, definition, source, created_at FROM tool_versions WHERE agent = ?1 AND name = ?2 ORDER BY version DESC',
        )
        .bind(agent, name)
        .all<{ version: number; definition: string; source: string; created_at: string }>();
      return results.map((r) => ({ ...r, definition: JSON.parse(r.definition) as Record<string, unknown> }));
    },

    async insertKey(k: Omit<KeyRecord, 'tool_access'> & { tool_access?: string | null }, now: string): Promise<void> {
      await db
        .prepare(
          'INSERT INTO keys (key_id, agent, role, salt, hash, created_at, tool_access) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)',
        )
        .bind(k.key_id, k.agent, k.role, k.salt, k.hash, now, k.tool_access ?? null)
        .run();
    },

    getKey: (keyId: string) =>
      db
        .prepare('SELECT key_id, agent, role, salt, hash, revoked_at, tool_access FROM keys WHERE key_id = ?1')
        .bind(keyId)
        .first<KeyRecord>(),

    async revokeKey(agent: string, keyId: string, now: string): Promise<boolean> {
      const r = await db
        .prepare('UPDATE keys SET revoked_at = ?3 WHERE key_id = ?1 AND agent = ?2 AND revoked_at IS NULL')
        .bind(keyId, agent, now)
        .run();
      return r.meta.changes > 0;
    },

    onAgentWrite(listener: (agent: string) => void): void {
      const listeners = agentWriteListeners.get(db) ?? new Set();
      agentWriteListeners.set(db, listeners);
      listeners.add(listener);
    },
  };
}

function ensureAgentStatement(db: D1Database, agent: string, now: string): D1PreparedStatement {
  return db
    .prepare('INSERT INTO agents (agent, created_at) VALUES (?1, ?2) ON CONFLICT (agent) DO NOTHING')
    .bind(agent, now);
}

/**
 * Statements that wrap a batch so it only goes through while a revision has the expected status
 * (migrations/0004_write_guards.sql): put `before` first and `after` last. When the status has
 * moved on, the CHECK fails and D1 rolls the whole batch back.
 */
export function revisionStatusGuard(db: D1Database, agent: string, revisionId: string, status: string) {
  return {
    before: db
      .prepare(
        'INSERT INTO write_guards (ok) SELECT COUNT(*) FROM revisions WHERE revision_id = ?1 AND agent = ?2 AND status = ?3',
      )
      .bind(revisionId, agent, status),
    after: db.prepare('DELETE FROM write_guards'),
  };
}

/** True when a D1 error is a failed write guard or a lost version race: the caller answers 409. */
export function isWriteConflict(err: unknown): boolean {
  return /CHECK constraint failed|UNIQUE constraint failed: tool_versions/i.test(String(err));
}

/** The statements that write one row and its guarding version entry. */
export function toolWriteStatements(db: D1Database, agent: string, w: ToolWrite, now: string): D1PreparedStatement[] {
  const t = w.tool;
  const version = db
    .prepare(
      'INSERT INTO tool_versions (agent, name, version, definition, source, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)',
    )
    .bind(agent, t.name, t.version, JSON.stringify(w.definition), w.source, now);
  if (w.expected_version === null) return [version, toolInsertStatement(db, agent, t, now)];
  // reviewed_seq only moves forward: an apply racing a review must not move the review mark back.
  const row = db
    .prepare(
      `UPDATE tools SET docstring = ?3, description = ?4, parameters = ?5, examples = ?6, notes = ?7, avoid = ?8,
         call_example = ?9, queries_source = ?10, version = ?11, definition_hash = ?12, vector = ?13, embedder = ?14,
         reviewed_seq = MAX(reviewed_seq, ?15), created_at = ?16, updated_at = ?17, memory = ?18
       WHERE agent = ?1 AND name = ?2 AND version = ?19`,
    )
    .bind(...toolValues(agent, t, now), w.expected_version);
  return [version, row];
}

/** The INSERT of a new tool row, last written at `updatedAt` (no version entry: the caller writes it). */
export function toolInsertStatement(
  db: D1Database,
  agent: string,
  t: StoredTool,
  updatedAt: string,
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO tools (agent, name, docstring, description, parameters, examples, notes, avoid, call_example,
         queries_source, version, definition_hash, vector, embedder, reviewed_seq, created_at, updated_at, memory)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)`,
    )
    .bind(...toolValues(agent, t, updatedAt));
}

function toolValues(agent: string, t: StoredTool, updatedAt: string): unknown[] {
  return [
    agent,
    t.name,
    t.docstring,
    t.description,
    JSON.stringify(t.parameters),
    JSON.stringify(t.examples),
    JSON.stringify(t.notes),
    JSON.stringify(t.avoid),
    t.call_example,
    t.queries_source,
    t.version,
    t.definition_hash,
    t.vector ? vectorToBlob(t.vector) : null,
    t.embedder,
    t.reviewed_seq,
    t.created_at,
    updatedAt,
    JSON.stringify(t.memory),
  ];
}

interface AgentRow {
  agent: string;
  created_at: string;
  settings: string;
  tools_gen: number;
  last_review_at: string | null;
  last_review_seq: number;
}

function toAgent(r: AgentRow): AgentRecord {
  return {
    agent: r.agent,
    created_at: r.created_at,
    settings: JSON.parse(r.settings) as Partial<Settings>,
    tools_gen: r.tools_gen,
    last_review_at: r.last_review_at,
    last_review_seq: r.last_review_seq,
  };
}

export interface ToolRowDb {
  name: string;
  docstring: string;
  description: string | null;
  parameters: string;
  examples: string;
  notes: string;
  avoid: string;
  call_example: string | null;
  queries_source: string | null;
  version: number;
  definition_hash: string;
  vector: ArrayBuffer | number[] | null;
  embedder: string;
  reviewed_seq: number;
  created_at: string;
  updated_at: string;
  /** Absent in rows read before migrations/0012_routing_memory.sql. */
  memory?: string;
}

/** Maps a stored tool row. */
export function toTool(r: ToolRowDb): StoredTool {
  return {
    name: r.name,
    docstring: r.docstring,
    description: r.description,
    parameters: JSON.parse(r.parameters) as Record<string, unknown>,
    examples: JSON.parse(r.examples) as Example[],
    notes: JSON.parse(r.notes) as string[],
    avoid: JSON.parse(r.avoid) as string[],
    call_example: r.call_example,
    memory: r.memory ? (JSON.parse(r.memory) as MemoryWording[]) : [],
    queries_source: r.queries_source === 'augmentation' ? 'augmentation' : null,
    version: r.version,
    definition_hash: r.definition_hash,
    vector: r.vector === null ? null : blobToVector(r.vector),
    embedder: r.embedder,
    reviewed_seq: r.reviewed_seq,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Float32 little-endian bytes, as D1 stores BLOBs. */
export function vectorToBlob(v: Float32Array): ArrayBuffer {
  return v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength) as ArrayBuffer;
}

/** D1 hands BLOBs back as an ArrayBuffer or as an array of byte values, depending on the driver. */
export function blobToVector(b: ArrayBuffer | number[]): Float32Array {
  const bytes = Array.isArray(b) ? Uint8Array.from(b) : new Uint8Array(b);
  return new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
}
