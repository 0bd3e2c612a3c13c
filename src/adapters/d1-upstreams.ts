/**
 * The D1 adapter for the gateway's tables (migrations/0011_upstreams.sql): upstreams, the tools each
 * serves, and each MCP session's last search_tools turn. All their SQL lives here. Strongly
 * consistent (D1's one primary); a sync's writes are one batch.
 */
import { agentWritten } from './d1-store.ts';

export type UpstreamStatus = 'new' | 'ok' | 'failing';

/** An upstream row; `headers_sealed` is the secret box's text, opened only to call the upstream. */
export interface UpstreamRecord {
  agent: string;
  name: string;
  url: string;
  header_names: string[];
  headers_sealed: string | null;
  timeout_ms: number;
  status: UpstreamStatus;
  last_error: string | null;
  failures: number;
  last_sync_at: string | null;
  next_sync_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Which upstream serves one of the agent's tools, under which of its own names. */
export interface UpstreamToolRecord {
  tool: string;
  upstream: string;
  remote_name: string;
  available: boolean;
}

/** A session's last search_tools turn: the request a forwarded call answers. */
export interface SessionTurn {
  turn_id: string;
  request: string;
  conversation_id: string | null;
}

/** What a sync writes: the tools this upstream now serves, and how the attempt went. */
export interface SyncOutcome {
  served: { tool: string; remote_name: string }[];
  status: UpstreamStatus;
  last_error: string | null;
  failures: number;
  next_sync_at: string;
}

type UpstreamRow = Omit<UpstreamRecord, 'header_names'> & { header_names: string };

function toUpstream(r: UpstreamRow): UpstreamRecord {
  return { ...r, header_names: JSON.parse(r.header_names) as string[] };
}

/** D1-backed store of upstreams, their tools and gateway sessions. */
export function createD1Upstreams(db: D1Database) {
  return {
    async get(agent: string, name: string): Promise<UpstreamRecord | null> {
      const row = await db
        .prepare('SELECT * FROM upstreams WHERE agent = ?1 AND name = ?2')
        .bind(agent, name)
        .first<UpstreamRow>();
      return row ? toUpstream(row) : null;
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
     * unavailable, so they are no longer routed or forwarded. True when it existed.
     */
    async delete(agent: string, name: string): Promise<boolean> {
      try {
        const [del] = await db.batch([
          db.prepare('DELETE FROM upstreams WHERE agent = ?1 AND name = ?2').bind(agent, name),
          db.prepare('UPDATE upstream_tools SET available = 0 WHERE agent = ?1 AND upstream = ?2').bind(agent, name),
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
        .prepare('SELECT tool, upstream, remote_name, available FROM upstream_tools WHERE agent = ?1 ORDER BY tool')
        .bind(agent)
        .all<Omit<UpstreamToolRecord, 'available'> & { available: number }>();
      return results.map((r) => ({ ...r, available: r.available === 1 }));
    },

    /** The upstream tool row of one agent tool, or null for the agent's own tools. */
    async tool(agent: string, tool: string): Promise<UpstreamToolRecord | null> {
      const r = await db
        .prepare('SELECT tool, upstream, remote_name, available FROM upstream_tools WHERE agent = ?1 AND tool = ?2')
        .bind(agent, tool)
        .first<Omit<UpstreamToolRecord, 'available'> & { available: number }>();
      return r ? { ...r, available: r.available === 1 } : null;
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
        ...outcome.served.map((s) =>
          db
            .prepare(
              `INSERT INTO upstream_tools (agent, tool, upstream, remote_name, available) VALUES (?1, ?2, ?3, ?4, 1)
               ON CONFLICT (agent, tool) DO UPDATE SET upstream = ?3, remote_name = ?4, available = 1`,
            )
            .bind(agent, s.tool, name, s.remote_name),
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
    async recordFailure(agent: string, name: string, outcome: Omit<SyncOutcome, 'served'>, now: string) {
      await statusStatement(db, agent, name, outcome, now).run();
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

export type D1Upstreams = ReturnType<typeof createD1Upstreams>;

function statusStatement(
  db: D1Database,
  agent: string,
  name: string,
  o: Omit<SyncOutcome, 'served'>,
  now: string,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE upstreams SET status = ?3, last_error = ?4, failures = ?5, last_sync_at = ?6, next_sync_at = ?7
       WHERE agent = ?1 AND name = ?2`,
    )
    .bind(agent, name, o.status, o.last_error, o.failures, now, o.next_sync_at);
}
