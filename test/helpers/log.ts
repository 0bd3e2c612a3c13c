/** An agent's log as the Worker reads and writes it: its Durable Object's tables, and row counts. */
import { env } from 'cloudflare:workers';
import type { AgentObject } from '../../src/agent-object.ts';
import { createDurableLog, type LogDb, type SqlStatement } from '../../src/adapters/log-db.ts';
import { eventually } from './eventually.ts';

/** The tables of an agent's log, kept in its Durable Object (docs/capacity.md "Where the log lives"). */
export const LOG_TABLES = ['turns', 'calls', 'outcomes', 'trace_tools'] as const;

/** The agent's log database (its Durable Object), read and written as the Worker does. */
export function logDb(agent: string): LogDb {
  return createDurableLog(env.AGENTS)(agent);
}

type Stub = DurableObjectStub<AgentObject>;

/**
 * The agent namespace with the methods `on(stub)` names put in front of each object's own (to
 * record a call, or to break one); every other method goes to the object as it is.
 */
export function interceptObject(
  ns: DurableObjectNamespace<AgentObject>,
  on: (stub: Stub) => Record<string, unknown>,
): DurableObjectNamespace<AgentObject> {
  return new Proxy(ns, {
    get(target, prop) {
      if (prop !== 'get') return Reflect.get(target, prop).bind(target);
      return (id: DurableObjectId) =>
        new Proxy(target.get(id), {
          get(stub, p) {
            const own = typeof p === 'string' ? on(stub)[p] : undefined;
            return own ?? Reflect.get(stub, p);
          },
        });
    },
  });
}

/** The agent namespace with each object's log RPCs passed through `on` first (to record them, or to break one). */
export function interceptLog(
  ns: DurableObjectNamespace<AgentObject>,
  on: {
    query?: (s: SqlStatement, stub: Stub) => unknown;
    batch?: (list: SqlStatement[], stub: Stub) => unknown;
  },
): DurableObjectNamespace<AgentObject> {
  return interceptObject(ns, (stub) => ({
    logQuery: on.query && ((s: SqlStatement) => on.query?.(s, stub)),
    logBatch: on.batch && ((list: SqlStatement[]) => on.batch?.(list, stub)),
  }));
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

/**
 * The agent's turn `turnId` once it is stored (a route answers first and writes its turn after):
 * its `columns`, polled with `eventually` until the row is there.
 */
export function storedTurn<T = Record<string, unknown>>(agent: string, turnId: string, columns = '*'): Promise<T> {
  return eventually(() =>
    logDb(agent)
      .prepare(`SELECT ${columns} FROM turns WHERE agent = ?1 AND turn_id = ?2`)
      .bind(agent, turnId)
      .first<T>()
      .then((r) => r ?? undefined),
  );
}
