/**
 * The per-agent Durable Object (one per agent, `idFromName(agent)`): the agent's log (turns,
 * calls, outcomes, trace-seen definitions; docs/capacity.md "Where the log lives"), offer counts
 * for the usage flags (docs/learning.md), the review lease that serialises reviews of one agent,
 * the slots that bound its dry runs, its rate-limit buckets and its model-call budget. An object
 * named `client:<address>` (never an agent id) holds that address's failed authentications.
 * Its SQLite storage survives restarts; each RPC runs alone (input gate), so counts are exact
 * under any concurrency.
 */
import { DurableObject } from 'cloudflare:workers';
import type { AgentObjectRpc } from './adapters/agent-object-rpc.ts';
import { createAgentSqliteStore } from './adapters/agent-sqlite.ts';
import { legacySeqFloor } from './adapters/d1-legacy-log.ts';
import { offersOfTurns } from './core/offer-counts.ts';
import type { AgentObjectStore, OfferCounts, RateRefusal, SqlResult, SqlStatement } from './core/ports.ts';
import { spendBudget, takeToken } from './core/token-bucket.ts';
import type { Bindings } from './env.ts';

/** Bucket names beside the keys' (key ids are hex, so a name with `*` is never a key's). */
const AGENT_BUCKET = '*agent';
const AUTH_FAILURE_BUCKET = '*auth_failures';
const MODEL_BUCKET = '*model_calls';
const HOUR_MS = 3_600_000;

export class AgentObject extends DurableObject<Bindings> implements AgentObjectRpc {
  /** Every statement the object runs is in this store (src/adapters/agent-sqlite.ts). */
  readonly #store: AgentObjectStore;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.#store = createAgentSqliteStore(ctx.storage);
    this.#store.create();
    void ctx.blockConcurrencyWhile(() => this.#seqFloor());
  }

  /**
   * Once per object (and again after `forget`), before any request: its log's seqs start above
   * every seq a D1 log of an earlier version gave, so the rows the scheduled move brings here
   * (src/services/legacy-log-move.ts) keep their seqs, older than anything written here, and review
   * marks (seqs) stay right.
   */
  async #seqFloor(): Promise<void> {
    if (this.#store.seqFloorSet()) return;
    this.#store.setSeqFloor(await legacySeqFloor(this.env.DB));
  }

  /** One statement of the agent's log (src/adapters/log-db.ts builds them; SQL lives in the adapters). */
  logQuery(statement: SqlStatement): SqlResult {
    return this.#store.logQuery(statement);
  }

  /** Statements of the agent's log in order, in one transaction: all of them or none. */
  logBatch(statements: readonly SqlStatement[]): SqlResult[] {
    return this.#store.transaction(() => statements.map((s) => this.#store.logQuery(s)));
  }

  /** Forgets everything this agent's object stores (its log, offer counts, lease, rate buckets): the agent is deleted. */
  async forget(): Promise<void> {
    await this.#store.clear();
    this.#store.create();
    await this.#seqFloor();
  }

  /** One routed turn: +1 to the agent's routed turns and to each offered tool. */
  countOffers(tools: readonly string[]): void {
    this.countTurns([tools]);
  }

  /**
   * Several routed turns in one RPC and one transaction, counted exactly as that many countOffers
   * calls in order (/route sends the turns an isolate gathered together). One write per
   * distinct tool: a tool first seen here starts its window at the turn that first offered it.
   */
  countTurns(turns: readonly (readonly string[])[]): void {
    this.#store.transaction(() => this.#store.addOffers(turns.length, offersOfTurns(turns, this.#store.routedTurns())));
  }

  /** Tools registered now start their `never_retrieved` window at the current routed-turn count. */
  toolsRegistered(tools: readonly string[]): void {
    this.#store.registerTools(tools, this.#store.routedTurns());
  }

  offers(): OfferCounts {
    const routed = this.#store.routedTurns();
    const offered: Record<string, number> = {};
    const observed: Record<string, number> = {};
    for (const row of this.#store.offerRows()) {
      offered[row.tool] = row.offered;
      observed[row.tool] = routed - row.sinceTurn;
    }
    return { routed_turns: routed, offered, observed };
  }

  /**
   * Takes the review lease for `holder` until `nowMs + ttlMs`, unless another holder has it.
   * A lease (not a lock) so a crashed review cannot block the agent forever.
   */
  acquireReviewLease(holder: string, nowMs: number, ttlMs: number): boolean {
    return this.#store.takeLease(holder, nowMs, nowMs + ttlMs);
  }

  releaseReviewLease(holder: string): void {
    this.#store.releaseLease(holder);
  }

  /**
   * Takes a dry-run slot for `holder` until `nowMs + ttlMs` unless `max` live slots are held: dry
   * runs do not take the review lease (they store nothing), but each makes model calls, so at most
   * `max` run at once. Slots expire like the lease, so a crashed dry run frees its slot.
   */
  acquireDryRun(holder: string, nowMs: number, ttlMs: number, max: number): boolean {
    return this.#store.takeDryRun(holder, nowMs, nowMs + ttlMs, max);
  }

  releaseDryRun(holder: string): void {
    this.#store.releaseDryRun(holder);
  }

  /**
   * One request of a key under the per-key and per-agent limits (0 = that limit off): null when it
   * may go on (a token taken from both buckets), else which limit refused it and the milliseconds
   * until it may (nothing taken). The bucket math is src/core/token-bucket.ts; this only keeps buckets.
   */
  takeRequest(principal: string, perKey: number, perAgent: number, nowMs: number): RateRefusal | null {
    const takes = [
      { name: principal, limit: 'key' as const, perMinute: perKey },
      { name: AGENT_BUCKET, limit: 'agent' as const, perMinute: perAgent },
    ]
      .filter((b) => b.perMinute > 0)
      .map((b) => ({ ...b, take: takeToken(this.#store.bucket(b.name), b.perMinute, nowMs) }));
    const refused = takes.find((t) => !t.take.allowed);
    if (refused && !refused.take.allowed) return { limit: refused.limit, waitMs: refused.take.retryAfterMs };
    for (const t of takes) this.#store.keepBucket(t.name, t.take.bucket);
    return null;
  }

  /** One failed authentication from this object's client address: 0 = answer it, else ms until another is heard. */
  takeAuthFailure(perMinute: number, nowMs: number): number {
    const take = takeToken(this.#store.bucket(AUTH_FAILURE_BUCKET), perMinute, nowMs);
    this.#store.keepBucket(AUTH_FAILURE_BUCKET, take.bucket);
    return take.allowed ? 0 : take.retryAfterMs;
  }

  /** Up to `wanted` model calls from the agent's budget of `perHour` an hour (docs/configuration.md `model_calls_per_hour`). */
  takeModelCalls(wanted: number, perHour: number, nowMs: number): { granted: number; nextInMs: number } {
    const spend = spendBudget(this.#store.bucket(MODEL_BUCKET), perHour, HOUR_MS, wanted, nowMs);
    this.#store.keepBucket(MODEL_BUCKET, spend.spent);
    return { granted: spend.granted, nextInMs: spend.nextInMs };
  }
}
