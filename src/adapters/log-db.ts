/**
 * The agent's log database: the SQLite storage of its Durable Object, reached by RPC
 * (docs/capacity.md "Where the log lives"). Statements are built and bound like D1's, and run in
 * the object: `all`/`first`/`run` are one RPC, `batch` is one RPC and one transaction. Strongly
 * consistent (one object serialises its agent's log); one round trip to the object per read.
 */
import type { LogStatement } from '../core/ports.ts';
import type { AgentNamespace, SqlResult, SqlStatement, SqlValue } from './agent-object-rpc.ts';

export type { LogStatement, SqlResult, SqlStatement, SqlValue };

/** One agent's log database. */
export interface LogDb {
  prepare(sql: string): LogStatement;
  /** Runs the statements in order in one transaction: all of them or none. */
  batch<T = Record<string, SqlValue>>(statements: readonly LogStatement[]): Promise<SqlResult<T>[]>;
}

/** Where an agent's log is: `logOf(agent)`. */
export type LogOf = (agent: string) => LogDb;

/** The log of each agent in its Durable Object (`idFromName(agent)`). */
export function createDurableLog(ns: AgentNamespace): LogOf {
  return (agent) => {
    const stub = () => ns.get(ns.idFromName(agent));
    const statement = (s: SqlStatement): LogStatement => ({
      statement: s,
      bind: (...params) => statement({ sql: s.sql, params }),
      all: async <T>() => (await stub().logQuery(s)) as unknown as SqlResult<T>,
      first: async <T>() => ((await stub().logQuery(s)).results[0] as T | undefined) ?? null,
      run: async () => (await stub().logQuery(s)) as SqlResult,
    });
    return {
      prepare: (sql) => statement({ sql, params: [] }),
      batch: async <T>(statements: readonly LogStatement[]) =>
        (await stub().logBatch(statements.map((s) => s.statement))) as unknown as SqlResult<T>[],
    };
  };
}
