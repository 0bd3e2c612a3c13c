/** Test helpers: requests through the real Worker entry (`exports.default.fetch`), D1 and log reads. */
import { env, exports } from 'cloudflare:workers';
import type { AgentObject } from '../src/agent-object.ts';
import { createDurableLog, type LogDb, type SqlStatement } from '../src/adapters/log-db.ts';

/** The suite's ADMIN_TOKEN (vitest.config.ts): strong, as src/core/admin-token.ts requires. */
export const ADMIN = 'test-admin-token-Qm7xK2pV9wR4tZ8nB3cL6hJ5';

export interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request to the Worker; JSON bodies are sent and parsed. */
export async function api<T = any>(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? ADMIN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  // A path, or a whole URL where the scheme or host matters (the MCP endpoint's origin rules).
  const url = /^https?:/.test(path) ? path : `http://whetstone.test${path}`;
  const res = await exports.default.fetch(new Request(url, { method, headers, body }));
  // Decoded from bytes: workerd warns when .text() reads a type it does not count as text (NDJSON).
  const text = new TextDecoder().decode(await res.arrayBuffer());
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

let counter = 0;
/** A fresh agent id per test, so tests never see each other's rows or Durable Objects. */
export function agentId(prefix = 'agent'): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Polls until `check` returns a value other than undefined (for writes sent after the answer). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The tables of an agent's log, kept in its Durable Object (docs/capacity.md "Where the log lives"). */
export const LOG_TABLES = ['turns', 'calls', 'outcomes', 'trace_tools'] as const;

/** The agent's log database (its Durable Object), read and written as the Worker does. */
export function logDb(agent: string): LogDb {
  return createDurableLog(env.AGENTS)(agent);
}

type Stub = DurableObjectStub<AgentObject>;

/**
 * The agent namespace with each object's log RPCs passed through `on` first (to record them, or
 * to break one); every other method goes to the object as it is.
 */
export function interceptLog(
  ns: DurableObjectNamespace<AgentObject>,
  on: {
    query?: (s: SqlStatement, stub: Stub) => unknown;
    batch?: (list: SqlStatement[], stub: Stub) => unknown;
  },
): DurableObjectNamespace<AgentObject> {
  return new Proxy(ns, {
    get(target, prop) {
      if (prop !== 'get') return Reflect.get(target, prop).bind(target);
      return (id: DurableObjectId) =>
        new Proxy(target.get(id), {
          get(stub, p) {
            if (p === 'logQuery' && on.query) return (s: SqlStatement) => on.query?.(s, stub);
            if (p === 'logBatch' && on.batch) return (list: SqlStatement[]) => on.batch?.(list, stub);
            return Reflect.get(stub, p);
          },
        });
    },
  });
}

/** Rows of the agent in a table: a log table in its Durable Object, any other in D1. */
export async function count(table: string, agent: string): Promise<number> {
  const db = (LOG_TABLES as readonly string[]).includes(table) ? logDb(agent) : env.DB;
  const row = await db
    .prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE agent = ?1`)
    .bind(agent)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

export { tool } from './builders.ts';
