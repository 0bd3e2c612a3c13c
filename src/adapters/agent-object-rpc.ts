/**
 * What the adapters and services call on the per-agent Durable Object (src/agent-object.ts), as
 * types only: the class implements this interface, and everything that talks to the object names
 * this module rather than the class, so the object's module, the wiring and the adapters that
 * reach the object never import each other in a circle.
 */
import type { OfferCounts, RateRefusal, SqlResult, SqlStatement } from '../core/ports.ts';

export type { SqlResult, SqlStatement, SqlValue } from '../core/ports.ts';

/** The RPC methods of the agent's object; each runs alone in the object (input gate). */
export interface AgentObjectRpc extends Rpc.DurableObjectBranded {
  /** One statement of the agent's log. */
  logQuery(statement: SqlStatement): SqlResult;
  /** Statements of the agent's log in order, in one transaction: all of them or none. */
  logBatch(statements: readonly SqlStatement[]): SqlResult[];
  /** Deletes everything the object holds. */
  forget(): Promise<void>;
  countOffers(tools: readonly string[]): void;
  countTurns(turns: readonly (readonly string[])[]): void;
  toolsRegistered(tools: readonly string[]): void;
  offers(): OfferCounts;
  acquireReviewLease(holder: string, nowMs: number, ttlMs: number): boolean;
  releaseReviewLease(holder: string): void;
  acquireDryRun(holder: string, nowMs: number, ttlMs: number, max: number): boolean;
  releaseDryRun(holder: string): void;
  takeRequest(principal: string, perKey: number, perAgent: number, nowMs: number): RateRefusal | null;
  takeAuthFailure(perMinute: number, nowMs: number): number;
  takeModelCalls(wanted: number, perHour: number, nowMs: number): { granted: number; nextInMs: number };
}

/**
 * What is used of the binding of the agents' objects (`idFromName(agent)`, or `client:<address>`);
 * the binding itself (`DurableObjectNamespace<AgentObject>`) is one.
 */
export type AgentNamespace = Pick<DurableObjectNamespace<AgentObjectRpc>, 'get' | 'idFromName'>;
