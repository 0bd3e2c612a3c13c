/**
 * The D1 adapter for the gateway's tables (migrations/0011_upstreams.sql,
 * 0014_upstream_quarantine.sql): upstreams, the tools each serves with their flags, the definitions
 * held in quarantine, and each MCP session's last search_tools turn. All their SQL lives here. Strongly
 * consistent (D1's one primary); a sync's writes are one batch.
 */
import type { DefinitionFinding, ToolFlag } from '../core/definition-check.ts';
import type {
  ListedDefinition,
  QuarantineRecord,
  ServedTool,
  SessionTurn,
  SyncOutcome,
  SyncStatus,
  UpstreamRecord,
  UpstreamStatus,
  UpstreamStore,
  UpstreamToolRecord,
} from '../core/ports.ts';
import { agentWritten } from './d1-store.ts';
import { firstRow } from './d1-rows.ts';

type QuarantineRow = Omit<QuarantineRecord, 'definition' | 'findings'> & { definition: string; findings: string };

function toQuarantine(r: QuarantineRow): QuarantineRecord {
  return {
    ...r,
    definition: JSON.parse(r.definition) as ListedDefinition,
    findings: JSON.parse(r.findings) as DefinitionFinding[],
  };
}

type ToolRow = Omit<UpstreamToolRecord, 'available' | 'flags' | 'definition'> & {
  available: number;
  flags: string;
  definition: string | null;
};

function toTool(r: ToolRow): UpstreamToolRecord {
  return {
    ...r,
    available: r.available === 1,
    flags: JSON.parse(r.flags) as ToolFlag[],
    definition: r.definition === null ? null : (JSON.parse(r.definition) as ListedDefinition),
  };
}

type UpstreamRow = Omit<UpstreamRecord, 'header_names'> & { header_names: string };

function toUpstream(r: UpstreamRow): UpstreamRecord {
  return { ...r, header_names: JSON.parse(r.header_names) as string[] };
}

/** D1-backed store of upstreams, their tools and gateway sessions. */
export function createD1Upstreams(db: D1Database): UpstreamStore {
  return {
    async get(agent: string, name: string): Promise<UpstreamRecord | null> {
      return firstRow(db, 'SELECT * FROM upstreams WHERE agent = ?1 AND name = ?2', [agent, name], toUpstream);
    },

    async list(agent: string): Promise<UpstreamRecord[]> {
      const { results } = await db
        .prepare('SELECT * FROM upstreams WHERE agent = ?1 ORDER BY name')
        .bind(agent)
        .all<UpstreamRow>();
      return results.map(toUpstream);
    },

    /** Creates or replaces an upstream's settings; a replaced one is synced again from scratch. */
    async put(u: Omit<UpstreamRecord, 'status' | 'last_error' | 'failures' | 'last_sync_at'>): Promise<void> {
      await db
        .prepare(
          `INSERT INTO upstreams (agent, name, url, header_names, headers_sealed, timeout_ms, status, failures,
             next_sync_at, created_at, updated_at)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'new', 0, ?7, ?8, ?9)
           ON CONFLICT (agent, name) DO UPDATE SET url = ?3, header_names = ?4, headers_sealed = ?5, timeout_ms = ?6,
             status = 'new', last_error = NULL, failures = 0, next_sync_at = ?7, updated_at = ?9`,
        )
        .bind(
          u.agent,
          u.name,
          u.url,
          JSON.stringify(u.header_names),
          u.headers_sealed,
          u.timeout_ms,
          u.next_sync_at,
          u.created_at,
          u.updated_at,
        )
        .run();
    },

    /**
     * Removes an upstream; the tools it served stay (history and learned lines kept) but are marked
     * unavailable, so they are no longer routed or forwarded; what it held in quarantine goes (it
     * serves nothing now). True when it existed.
     */
    async delete(agent: string, name: string): Promise<boolean> {
      try {
        const [del] = await db.batch([
          db.prepare('DELETE FROM upstreams WHERE agent = ?1 AND name = ?2').bind(agent, name),
          db.prepare('UPDATE upstream_tools SET available = 0 WHERE agent = ?1 AND upstream = ?2').bind(agent, name),
          db.prepare('DELETE FROM upstream_quarantine WHERE agent = ?1 AND upstream = ?2').bind(agent, name),
          db.prepare('UPDATE agents SET tools_gen = tools_gen + 1 WHERE agent = ?1').bind(agent),
        ]);
        return (del?.meta.changes ?? 0) > 0;
      } finally {
        agentWritten(db, agent);
      }
    },

    /** Every tool of the agent that came from an upstream, available or not, by name. */
    async tools(agent: string): Promise<UpstreamToolRecord[]> {
      const { results } = await db
        .prepare(
          'SELECT tool, upstream, remote_name, available, flags, definition FROM upstream_tools WHERE agent = ?1 ORDER BY tool',
        )
        .bind(agent)
        .all<ToolRow>();
      return results.map(toTool);
    },

    /** The upstream tool row of one agent tool, or null for the agent's own tools. */
    async tool(agent: string, tool: string): Promise<UpstreamToolRecord | null> {
      const r = await db
        .prepare(
          'SELECT tool, upstream, remote_name, available, flags, definition FROM upstream_tools WHERE agent = ?1 AND tool = ?2',
        )
        .bind(agent, tool)
        .first<ToolRow>();
      return r ? toTool(r) : null;
    },

    /** Names of the agent's tools an upstream no longer serves: never routed. */
    async unavailable(agent: string): Promise<Set<string>> {
      const { results } = await db
        .prepare('SELECT tool FROM upstream_tools WHERE agent = ?1 AND available = 0')
        .bind(agent)
        .all<{ tool: string }>();
      return new Set(results.map((r) => r.tool));
    },

    /**
     * A successful sync in one batch: the tools served now are available, this upstream's others
     * are not; the upstream's status is reset. Moves tools_gen so every isolate routes the new set.
     */
    async recordSync(agent: string, name: string, outcome: SyncOutcome, now: string): Promise<void> {
      const statements = [
        db.prepare('UPDATE upstream_tools SET available = 0 WHERE agent = ?1 AND upstream = ?2').bind(agent, name),
        ...outcome.served.map((s) => servedStatement(db, agent, name, s)),
        db
          .prepare(
            'DELETE FROM upstream_quarantine WHERE agent = ?1 AND upstream = ?2 AND remote_name NOT IN (SELECT value FROM json_each(?3))',
          )
          .bind(agent, name, JSON.stringify(outcome.keep)),
        ...outcome.held.map((q) =>
          db
            .prepare(
              `INSERT INTO upstream_quarantine (agent, upstream, remote_name, tool, definition, definition_hash, findings,
                 quarantined_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
               ON CONFLICT (agent, upstream, remote_name) DO UPDATE SET tool = ?4, definition = ?5, findings = ?7,
                 definition_hash = ?6,
                 quarantined_at = CASE WHEN definition_hash = ?6 THEN quarantined_at ELSE ?8 END,
                 released_by = CASE WHEN definition_hash = ?6 THEN released_by END,
                 released_key = CASE WHEN definition_hash = ?6 THEN released_key END,
                 released_at = CASE WHEN definition_hash = ?6 THEN released_at END`,
            )
            .bind(
              agent,
              name,
              q.remote_name,
              q.tool,
              JSON.stringify(q.definition),
              q.definition_hash,
              JSON.stringify(q.findings),
              q.quarantined_at,
            ),
        ),
        statusStatement(db, agent, name, outcome, now),
        db.prepare('UPDATE agents SET tools_gen = tools_gen + 1 WHERE agent = ?1').bind(agent),
      ];
      try {
        await db.batch(statements);
      } finally {
        agentWritten(db, agent);
      }
    },

    /** A failed sync: the status and backoff only; the tools stay as the last good sync left them. */
    async recordFailure(agent: string, name: string, outcome: SyncStatus, now: string) {
      await statusStatement(db, agent, name, outcome, now).run();
    },

    /** Held and released definitions of one upstream (or of all the agent's), by upstream and name. */
    async quarantine(agent: string, upstream?: string): Promise<QuarantineRecord[]> {
      const { results } = await db
        .prepare(
          'SELECT * FROM upstream_quarantine WHERE agent = ?1 AND (?2 IS NULL OR upstream = ?2) ORDER BY upstream, remote_name',
        )
        .bind(agent, upstream ?? null)
        .all<QuarantineRow>();
      return results.map(toQuarantine);
    },

    /** One upstream tool's held (or released) definition, by the name the upstream lists. */
    async quarantined(agent: string, upstream: string, remoteName: string): Promise<QuarantineRecord | null> {
      const row = await db
        .prepare('SELECT * FROM upstream_quarantine WHERE agent = ?1 AND upstream = ?2 AND remote_name = ?3')
        .bind(agent, upstream, remoteName)
        .first<QuarantineRow>();
      return row ? toQuarantine(row) : null;
    },

    /** A held (not released) definition a call names: by its agent-level name or the upstream's. */
    async heldNamed(agent: string, name: string): Promise<QuarantineRecord | null> {
      const row = await db
        .prepare(
          `SELECT * FROM upstream_quarantine WHERE agent = ?1 AND released_at IS NULL AND (tool = ?2 OR remote_name = ?2)
           ORDER BY tool = ?2 DESC, upstream LIMIT 1`,
        )
        .bind(agent, name)
        .first<QuarantineRow>();
      return row ? toQuarantine(row) : null;
    },

    /**
     * Releases a held definition — only the one with this hash, only while still held — and, when
     * it was registered (`served`), serves it now. False when nothing was held under that hash.
     */
    async release(
      q: { agent: string; upstream: string; remote_name: string; definition_hash: string },
      by: { released_by: string; actor: string },
      now: string,
      served: ServedTool | null,
    ): Promise<boolean> {
      const release = db
        .prepare(
          `UPDATE upstream_quarantine SET released_by = ?5, released_key = ?6, released_at = ?7
           WHERE agent = ?1 AND upstream = ?2 AND remote_name = ?3 AND definition_hash = ?4 AND released_at IS NULL`,
        )
        .bind(q.agent, q.upstream, q.remote_name, q.definition_hash, by.released_by, by.actor, now);
      if (!served) return ((await release.run()).meta.changes ?? 0) > 0;
      try {
        const [done] = await db.batch([
          release,
          servedStatement(db, q.agent, q.upstream, served),
          db.prepare('UPDATE agents SET tools_gen = tools_gen + 1 WHERE agent = ?1').bind(q.agent),
        ]);
        return (done?.meta.changes ?? 0) > 0;
      } finally {
        agentWritten(db, q.agent);
      }
    },

    /** Upstreams whose next sync is due at `now`, oldest due first, at most `limit`. */
    async due(now: string, limit: number): Promise<UpstreamRecord[]> {
      const { results } = await db
        .prepare('SELECT * FROM upstreams WHERE next_sync_at <= ?1 ORDER BY next_sync_at LIMIT ?2')
        .bind(now, limit)
        .all<UpstreamRow>();
      return results.map(toUpstream);
    },

    async setSessionTurn(agent: string, sessionId: string, turn: SessionTurn, now: string): Promise<void> {
      await db
        .prepare(
          `INSERT INTO gateway_sessions (agent, session_id, turn_id, request, conversation_id, updated_at)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6)
           ON CONFLICT (agent, session_id) DO UPDATE SET turn_id = ?3, request = ?4, conversation_id = ?5, updated_at = ?6`,
        )
        .bind(agent, sessionId, turn.turn_id, turn.request, turn.conversation_id, now)
        .run();
    },

    sessionTurn: (agent: string, sessionId: string) =>
      db
        .prepare('SELECT turn_id, request, conversation_id FROM gateway_sessions WHERE agent = ?1 AND session_id = ?2')
        .bind(agent, sessionId)
        .first<SessionTurn>(),
  };
}

function servedStatement(db: D1Database, agent: string, upstream: string, s: ServedTool): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO upstream_tools (agent, tool, upstream, remote_name, available, flags, definition)
       VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6)
       ON CONFLICT (agent, tool) DO UPDATE SET upstream = ?3, remote_name = ?4, available = 1, flags = ?5,
         definition = COALESCE(?6, upstream_tools.definition)`,
    )
    .bind(
      agent,
      s.tool,
      upstream,
      s.remote_name,
      JSON.stringify(s.flags),
      s.definition === null ? null : JSON.stringify(s.definition),
    );
}

function statusStatement(db: D1Database, agent: string, name: string, o: SyncStatus, now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE upstreams SET status = ?3, last_error = ?4, failures = ?5, last_sync_at = ?6, next_sync_at = ?7
       WHERE agent = ?1 AND name = ?2`,
    )
    .bind(agent, name, o.status, o.last_error, o.failures, now, o.next_sync_at);
}
