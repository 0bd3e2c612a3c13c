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
import { AGENT_LOG_SCHEMA, seqFloorStatements } from './adapters/agent-log-schema.ts';
import { legacySeqFloor } from './adapters/legacy-log.ts';
import type { AgentObjectRpc, SqlResult, SqlStatement, SqlValue } from './adapters/agent-object-rpc.ts';
import type { OfferCounts, RateRefusal } from './core/ports.ts';
import { type Bucket, spendBudget, takeToken } from './core/rate-limit.ts';
import type { Bindings } from './env.ts';

/** Bucket names beside the keys' (key ids are hex, so a name with `*` is never a key's). */
const AGENT_BUCKET = '*agent';
const AUTH_FAILURE_BUCKET = '*auth_failures';
const MODEL_BUCKET = '*model_calls';
const HOUR_MS = 3_600_000;

export class AgentObject extends DurableObject<Bindings> implements AgentObjectRpc {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#schema();
    void ctx.blockConcurrencyWhile(() => this.#seqFloor());
  }

  /**
   * Once per object (and again after `forget`), before any request: its log's seqs start above
   * every seq a D1 log of an earlier version gave, so the rows the scheduled move brings here
   * (src/services/legacy-log.ts) keep their seqs, older than anything written here, and review
   * marks (seqs) stay right.
   */
  async #seqFloor(): Promise<void> {
    if (this.#get('seq_floor_set') === 1) return;
    const floor = await legacySeqFloor(this.env.DB);
    this.ctx.storage.transactionSync(() => {
      for (const statement of seqFloorStatements(floor)) this.#run(statement);
      this.#sql.exec("INSERT OR REPLACE INTO counters (name, value) VALUES ('seq_floor_set', 1)");
    });
  }

  /** Idempotent DDL: runs on every start of the object, and after `forget`. */
  #schema(): void {
    this.#sql.exec(`
      CREATE TABLE IF NOT EXISTS offers (tool TEXT PRIMARY KEY, offered INTEGER NOT NULL DEFAULT 0, since_turn INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, until_ms INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS rate (principal TEXT PRIMARY KEY, tokens REAL NOT NULL, at_ms INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS dry_runs (holder TEXT PRIMARY KEY, until_ms INTEGER NOT NULL);
    `);
    this.#sql.exec(AGENT_LOG_SCHEMA);
  }

  /** One statement of the agent's log (src/adapters/log-db.ts builds them; SQL lives in the adapters). */
  logQuery(statement: SqlStatement): SqlResult {
    return this.#run(statement);
  }

  /** Statements of the agent's log in order, in one transaction: all of them or none. */
  logBatch(statements: readonly SqlStatement[]): SqlResult[] {
    return this.ctx.storage.transactionSync(() => statements.map((s) => this.#run(s)));
  }

  /** Runs one statement; `changes` counts the rows it inserted, updated or deleted (0 for a read). */
  #run({ sql, params }: SqlStatement): SqlResult {
    const before = this.#totalChanges();
    const results = this.#sql.exec<Record<string, SqlValue>>(sql, ...params).toArray();
    return { results, meta: { changes: this.#totalChanges() - before } };
  }

  #totalChanges(): number {
    return this.#sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n;
  }

  /** Forgets everything this agent's object stores (its log, offer counts, lease, rate buckets): the agent is deleted. */
  async forget(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.#schema();
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
    const offers = new Map<string, { count: number; first: number }>();
    turns.forEach((tools, i) => {
      for (const tool of new Set(tools)) {
        const o = offers.get(tool);
        if (o) o.count += 1;
        else offers.set(tool, { count: 1, first: i });
      }
    });
    this.ctx.storage.transactionSync(() => {
      const before = this.#get('routed_turns');
      this.#sql.exec(
        'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value',
        'routed_turns',
        turns.length,
      );
      for (const [tool, o] of offers) {
        this.#sql.exec(
          `INSERT INTO offers (tool, offered, since_turn) VALUES (?, ?, ?)
           ON CONFLICT (tool) DO UPDATE SET offered = offered + excluded.offered`,
          tool,
          o.count,
          before + o.first,
        );
      }
    });
  }

  /** Tools registered now start their `never_retrieved` window at the current routed-turn count. */
  toolsRegistered(tools: readonly string[]): void {
    const turns = this.#get('routed_turns');
    for (const tool of tools) {
      this.#sql.exec(
        'INSERT INTO offers (tool, offered, since_turn) VALUES (?, 0, ?) ON CONFLICT (tool) DO NOTHING',
        tool,
        turns,
      );
    }
  }

  offers(): OfferCounts {
    const routed = this.#get('routed_turns');
    const offered: Record<string, number> = {};
    const observed: Record<string, number> = {};
    for (const row of this.#sql.exec<{ tool: string; offered: number; since_turn: number }>(
      'SELECT tool, offered, since_turn FROM offers',
    )) {
      offered[row.tool] = row.offered;
      observed[row.tool] = routed - row.since_turn;
    }
    return { routed_turns: routed, offered, observed };
  }

  /**
   * Takes the review lease for `holder` until `nowMs + ttlMs`, unless another holder has it.
   * A lease (not a lock) so a crashed review cannot block the agent forever.
   */
  acquireReviewLease(holder: string, nowMs: number, ttlMs: number): boolean {
    const current = this.#sql
      .exec<{ holder: string; until_ms: number }>('SELECT holder, until_ms FROM lease WHERE id = 1')
      .toArray()[0];
    if (current && current.holder !== holder && current.until_ms > nowMs) return false;
    this.#sql.exec('INSERT OR REPLACE INTO lease (id, holder, until_ms) VALUES (1, ?, ?)', holder, nowMs + ttlMs);
    return true;
  }

  releaseReviewLease(holder: string): void {
    this.#sql.exec('DELETE FROM lease WHERE id = 1 AND holder = ?', holder);
  }

  /**
   * Takes a dry-run slot for `holder` until `nowMs + ttlMs` unless `max` live slots are held: dry
   * runs do not take the review lease (they store nothing), but each makes model calls, so at most
   * `max` run at once. Slots expire like the lease, so a crashed dry run frees its slot.
   */
  acquireDryRun(holder: string, nowMs: number, ttlMs: number, max: number): boolean {
    this.#sql.exec('DELETE FROM dry_runs WHERE until_ms <= ?', nowMs);
    const held = this.#sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM dry_runs').one().n;
    if (held >= max) return false;
    this.#sql.exec('INSERT OR REPLACE INTO dry_runs (holder, until_ms) VALUES (?, ?)', holder, nowMs + ttlMs);
    return true;
  }

  releaseDryRun(holder: string): void {
    this.#sql.exec('DELETE FROM dry_runs WHERE holder = ?', holder);
  }

  /**
   * One request of a key under the per-key and per-agent limits (0 = that limit off): null when it
   * may go on (a token taken from both buckets), else which limit refused it and the milliseconds
   * until it may (nothing taken). The bucket math is src/core/rate-limit.ts; this only keeps buckets.
   */
  takeRequest(principal: string, perKey: number, perAgent: number, nowMs: number): RateRefusal | null {
    const takes = [
      { name: principal, limit: 'key' as const, perMinute: perKey },
      { name: AGENT_BUCKET, limit: 'agent' as const, perMinute: perAgent },
    ]
      .filter((b) => b.perMinute > 0)
      .map((b) => ({ ...b, take: takeToken(this.#bucket(b.name), b.perMinute, nowMs) }));
    const refused = takes.find((t) => !t.take.allowed);
    if (refused && !refused.take.allowed) return { limit: refused.limit, waitMs: refused.take.retryAfterMs };
    for (const t of takes) this.#keep(t.name, t.take.bucket);
    return null;
  }

  /** One failed authentication from this object's client address: 0 = answer it, else ms until another is heard. */
  takeAuthFailure(perMinute: number, nowMs: number): number {
    const take = takeToken(this.#bucket(AUTH_FAILURE_BUCKET), perMinute, nowMs);
    this.#keep(AUTH_FAILURE_BUCKET, take.bucket);
    return take.allowed ? 0 : take.retryAfterMs;
  }

  /** Up to `wanted` model calls from the agent's budget of `perHour` an hour (docs/configuration.md `model_calls_per_hour`). */
  takeModelCalls(wanted: number, perHour: number, nowMs: number): { granted: number; nextInMs: number } {
    const spend = spendBudget(this.#bucket(MODEL_BUCKET), perHour, HOUR_MS, wanted, nowMs);
    this.#keep(MODEL_BUCKET, spend.spent);
    return { granted: spend.granted, nextInMs: spend.nextInMs };
  }

  #bucket(name: string): Bucket | null {
    const row = this.#sql
      .exec<{ tokens: number; at_ms: number }>('SELECT tokens, at_ms FROM rate WHERE principal = ?', name)
      .toArray()[0];
    return row ? { tokens: row.tokens, atMs: row.at_ms } : null;
  }

  #keep(name: string, bucket: Bucket): void {
    this.#sql.exec(
      'INSERT OR REPLACE INTO rate (principal, tokens, at_ms) VALUES (?, ?, ?)',
      name,
      bucket.tokens,
      bucket.atMs,
    );
  }

  #get(name: string): number {
    const row = this.#sql.exec<{ value: number }>('SELECT value FROM counters WHERE name = ?', name).toArray()[0];
    return row?.value ?? 0;
  }
}
