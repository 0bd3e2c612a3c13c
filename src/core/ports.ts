/**
 * Ports: the small interfaces the core needs from the platform, and the records the stores read and
 * write, so a service names what it stores without importing the adapter that stores it. Adapters
 * live in src/adapters/; src/env.ts is the only module that picks them from bindings.
 */
import type { ModelTool, Revision, SettingsPatch } from '../schemas.ts';
import type { CallRecord, OfferedTool, OutcomeRecord, StoredTool, TurnRecord } from './records.ts';
import type { DefinitionFinding, ToolFlag } from './definition-check.ts';
import type { Bucket } from './token-bucket.ts';
import type { AuthorDefinition } from './tooldef.ts';
import type { WebhookEventType } from './webhook-events.ts';

/** Turns text into L2-normalised vectors of a fixed dimension. */
export interface Embedder {
  /** Stable id written next to every stored vector (a vector from another embedder is re-embedded). */
  readonly id: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export interface VectorMatch {
  id: string;
  score: number;
}

/**
 * Nearest-neighbour search over one agent's tool vectors (namespace = agent id). Upsert and remove
 * take tool names; a query answers vector ids (`idOf`), which the caller maps back to its tools.
 */
export interface VectorIndex {
  /** True when a query sees an upsert at once (the exact index); Vectorize is eventually consistent. */
  readonly consistent: boolean;
  /** At most this many matches a query answers. */
  readonly maxTopK: number;
  /** The id of an agent's tool in the index: unique across agents, computed (no lookup). */
  idOf(agent: string, tool: string): string;
  upsert(agent: string, items: readonly { id: string; vector: Float32Array }[]): Promise<void>;
  remove(agent: string, tools: readonly string[]): Promise<void>;
  query(agent: string, vector: Float32Array, topK: number): Promise<VectorMatch[]>;
}

/** One chat message for a background model. */
export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/**
 * The background model (docs/configuration.md). `complete` returns the model's raw text reply, or null when the
 * model has nothing to say (the extractive model for augmentation). A reply is data: callers parse
 * it with zod and run the checks of docs/learning.md before anything reaches the store.
 */
export interface ChatModel {
  readonly id: string;
  /**
   * The longest one `complete` can take: every attempt timing out, plus the waits between them.
   * A review's lease is sized from it (src/services/review.ts `reviewLeaseMs`).
   */
  readonly longestCallMs: number;
  complete(task: ModelTask): Promise<string | null>;
  /**
   * Which of the offered tools the model calls for one request, with its arguments; null when it
   * answers without a call. Only a model that can call tools has it (an OpenAI-compatible one):
   * a try run of a revision (src/services/try.ts) says so when it is absent rather than guess.
   */
  pickTool?(request: string, tools: readonly ModelTool[]): Promise<ToolPick | null>;
}

/** A model's tool call: the tool's name and the arguments it wrote (parsed JSON; `{}` when unreadable). */
export interface ToolPick {
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * What a model is asked. The messages are what an LLM sees; `evidence` carries the same facts as
 * plain data so the offline extractive model can write its proposal from the evidence itself.
 */
export type ModelTask =
  | { kind: 'augment'; messages: ChatMessage[]; tool: AugmentInput }
  | { kind: 'review'; messages: ChatMessage[]; input: ReviewInput };

export interface AugmentInput {
  name: string;
  docstring: string;
  argument_names: string[];
}

export interface ReviewInput {
  tool: string;
  docstring: string;
  /** Registered tools other than this one, for "Not for … use <tool>" lines. */
  other_tools: string[];
  /** `why_no_note`: the failure was not the caller's fault (an outage, a business outcome): no note may cite it. */
  failed_calls: { id: string; error: string; arguments: string[]; why_no_note?: string }[];
  missed_requests: { id: string; text: string }[];
  confused_requests: { id: string; text: string; served_by: string }[];
  /**
   * Example requests the tool keeps already (learned or written by its author; synthetic ones give
   * way to real wording, so they are not listed): a proposal saying the same would be refused
   * (`already_kept`), and would take one of the review's `max_new_queries` places. Absent = none.
   */
  kept_examples?: string[];
  /** How much evidence each kind of line must cite (docs/configuration.md), for models that write from evidence. */
  thresholds?: {
    min_failures: number;
    min_misses: number;
    min_confusions: number;
    max_new_queries: number;
    max_avoid: number;
  };
}

/** Per-agent offer counts (docs/learning.md "Usage flags"), kept in the agent's Durable Object. */
export interface OfferCounter {
  /** Adds one offered turn to each tool and one routed turn to the agent. */
  countOffers(agent: string, tools: readonly string[]): Promise<void>;
  /** Several routed turns at once, each counted as by countOffers, in order (one round trip). */
  countTurns(agent: string, turns: readonly (readonly string[])[]): Promise<void>;
  /** Marks tools as registered now, so `never_retrieved` counts routed turns from this point on. */
  toolsRegistered(agent: string, tools: readonly string[]): Promise<void>;
  offers(agent: string): Promise<OfferCounts>;
}

export interface OfferCounts {
  routed_turns: number;
  /** tool name → routed turns it was offered in */
  offered: Record<string, number>;
  /** tool name → routed turns observed since the tool was first seen by the counter */
  observed: Record<string, number>;
}

/** Requests per minute (a burst of that many, then one every 60 s / limit); 0 = off. */
export interface RateLimits {
  /** Requests of one agent key. */
  perKey: number;
  /** Requests of all the keys of one agent together. */
  perAgent: number;
  /** Failed authentications from one client address. */
  authFailures: number;
}

/** Which limit refused a request, and the milliseconds until it may be sent again. */
export interface RateRefusal {
  limit: 'key' | 'agent';
  waitMs: number;
}

/** Request limits (docs/api.md 429): per key and per agent in the agent's Durable Object, per client address for failed authentications. */
export interface RateLimiter {
  readonly limits: RateLimits;
  /** Counts one request of key `principal` of `agent` against both limits: null = go on. */
  take(agent: string, principal: string, nowMs: number): Promise<RateRefusal | null>;
  /** Counts one failed authentication from `client`: 0 = answer it (401), else ms until another is heard. */
  failedAuth(client: string, nowMs: number): Promise<number>;
}

/** An agent's model calls an hour (docs/configuration.md `model_calls_per_hour`), kept in its Durable Object. */
export interface ModelBudget {
  /**
   * Takes up to `wanted` model calls from the agent's hour of `perHour`: how many may be made, and
   * when the next one could be when that is fewer than wanted.
   */
  take(agent: string, wanted: number, perHour: number, nowMs: number): Promise<{ granted: number; nextInMs: number }>;
}

/** An operator's pin (docs/tool-delivery.md): the tool is always loaded, never deferred. */
export interface Pin {
  tool: string;
  pinned_at: string;
  pinned_by: string;
}

/** Each agent's pinned tools. */
export interface PinStore {
  /** The names pinned for an agent. */
  pinned(agent: string): Promise<Set<string>>;
  /** Every pin of an agent, by tool name. */
  list(agent: string): Promise<Pin[]>;
  /** Pins a tool; pinning a pinned tool changes nothing (its first pin is kept). */
  pin(agent: string, tool: string, at: string, by: string): Promise<void>;
  /** Unpins a tool: false when it was not pinned. */
  unpin(agent: string, tool: string): Promise<boolean>;
}

/** What log retention (docs/configuration.md `log_retention_days`) reads and removes. */
export interface RetentionStore {
  /** The dated tables of an agent's log, in the order `prune` answers them. */
  readonly tables: readonly string[];
  /** Every agent and its stored settings (JSON text), by name. */
  agents(): Promise<{ agent: string; settings: string }[]>;
  /**
   * Removes the agent's rows dated before `cutoff`, oldest first, at most `limit` per table, all
   * tables in one batch: the rows removed from each of `tables`, in that order.
   */
  prune(agent: string, cutoff: string, limit: number): Promise<number[]>;
}

/** What a bound parameter or a column holds in an agent's log. */
export type SqlValue = string | number | null;

/** A statement of an agent's log as it travels to its Durable Object (the adapters build them). */
export interface SqlStatement {
  sql: string;
  params: SqlValue[];
}

/** Rows a statement read, and rows it changed (SQLite's `changes()`). */
export interface SqlResult<T = Record<string, SqlValue>> {
  results: T[];
  meta: { changes: number };
}

/** A statement of the log, bound like a D1 prepared statement. */
export interface LogStatement {
  readonly statement: SqlStatement;
  bind(...params: SqlValue[]): LogStatement;
  all<T = Record<string, SqlValue>>(): Promise<SqlResult<T>>;
  first<T = Record<string, SqlValue>>(): Promise<T | null>;
  run(): Promise<SqlResult>;
}

/** One tool's offers in a group of routed turns, and the routed turn that first offered it. */
export interface ToolOffers {
  tool: string;
  count: number;
  /** The agent's routed-turn count at the turn that first offered it: where a new tool's window starts. */
  sinceTurn: number;
}

/** One tool's stored offer count and the routed turn its window started at. */
export interface OfferRow {
  tool: string;
  offered: number;
  sinceTurn: number;
}

/**
 * The storage of one agent's Durable Object (src/agent-object.ts): its log, routed-turn and offer
 * counts, review lease, dry-run slots and rate buckets (src/adapters/agent-sqlite.ts keeps them in
 * the object's SQLite). Synchronous: the object runs one call at a time, so each is exact.
 */
export interface AgentObjectStore {
  /** Creates what is missing (idempotent): on every start of the object, and after `clear`. */
  create(): void;
  /** Removes everything the object stores. */
  clear(): Promise<void>;
  /** Runs `fn` in one transaction: all of its writes or none. */
  transaction<T>(fn: () => T): T;
  /** One statement of the log; `changes` counts the rows it inserted, updated or deleted (0 for a read). */
  logQuery(statement: SqlStatement): SqlResult;
  /** True once the log's seqs start above those of the D1 log of an earlier version. */
  seqFloorSet(): boolean;
  /** Starts the log's seqs above `floor` (the highest seqs D1 gave), and remembers that it did. */
  setSeqFloor(floor: { turns: number; calls: number }): void;
  /** How many turns were routed for the agent. */
  routedTurns(): number;
  /** Adds `turns` routed turns and each tool's offers; a tool not seen before starts its window at its `sinceTurn`. */
  addOffers(turns: number, offers: readonly ToolOffers[]): void;
  /** Starts the window of each tool not seen before at routed turn `sinceTurn`; a tool seen keeps its own. */
  registerTools(tools: readonly string[], sinceTurn: number): void;
  /** Every tool's offer count. */
  offerRows(): OfferRow[];
  /** Takes the review lease for `holder` until `untilMs` unless another holder's lease lasts past `nowMs`. */
  takeLease(holder: string, nowMs: number, untilMs: number): boolean;
  /** Gives the lease back, if `holder` has it. */
  releaseLease(holder: string): void;
  /** Takes a dry-run slot for `holder` until `untilMs` unless `max` slots live past `nowMs`. */
  takeDryRun(holder: string, nowMs: number, untilMs: number, max: number): boolean;
  releaseDryRun(holder: string): void;
  /** A rate bucket by name (src/core/token-bucket.ts), null when none is kept. */
  bucket(name: string): Bucket | null;
  keepBucket(name: string, bucket: Bucket): void;
}

// What the stores read and write: services build and read these; the adapters keep them.

/** What a store throws when another writer changed a tool row first (its version moved): nothing was written. */
export class VersionConflict extends Error {
  constructor(readonly tool: string) {
    super(`tool ${tool} was written by someone else`);
    this.name = 'VersionConflict';
  }
}

/**
 * Rows one read of the log returns: an answer of a few MiB, far under what one RPC message carries
 * (32 MiB), however many rows a caller asks for.
 */
export const LOG_PAGE_ROWS = 5_000;

/** An agent's row: its settings, its tools' generation (a route's cache key) and its last review. */
export interface AgentRecord {
  agent: string;
  created_at: string;
  settings: SettingsPatch;
  tools_gen: number;
  last_review_at: string | null;
  last_review_seq: number;
}

/** One row write: the full new row plus the version entry that guards it. */
export interface ToolWrite {
  tool: StoredTool;
  /** The version the writer read, or null when the row must not exist yet. */
  expected_version: number | null;
  /** The author's definition as registered; a learning write adds the learned state beside it. */
  definition: AuthorDefinition & { learned?: unknown };
  source: string;
}

/** A turn as a route, a trace or a loose call writes it into the log. */
export interface NewTurn {
  turn_id: string;
  request: string | null;
  conversation_id: string | null;
  routed: boolean;
  offered: OfferedTool[];
  source: 'route' | 'trace' | 'call';
  created_at: string;
}

export type NewCall = Omit<CallRecord, 'seq'>;

/** Turns, calls and the outcomes reported for those turns: a slice of the log the core attributes. */
export interface LogSlice {
  turns: TurnRecord[];
  calls: CallRecord[];
  outcomes: OutcomeRecord[];
}

/** What a review stores for one revision; the status columns start as `proposed`. */
export type NewRevision = Omit<
  Revision,
  'status' | 'applied_at' | 'approved_by' | 'applied_version' | 'dismiss_reason' | 'undone_at' | 'undone_by'
>;

/** How a webhook's body is written: Whetstone's JSON, or a Slack message. */
export type WebhookKind = 'json' | 'slack';

/** A webhook as stored, its secret included: only the delivery reads the secret. */
export interface StoredWebhook {
  webhook_id: string;
  url: string;
  kind: WebhookKind;
  secret: string | null;
  events: WebhookEventType[];
  created_at: string;
}

/** An upstream's last sync: not yet tried, served, or failing (and retried later). */
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
  /** Why a person should read it; empty when nothing was found. */
  flags: ToolFlag[];
  /** The definition in force, as the upstream listed it (null for a row pinned before this was kept). */
  definition: ListedDefinition | null;
}

/** A tool a sync or a release serves; `definition` null keeps the one in force (a held change). */
export interface ServedTool {
  tool: string;
  remote_name: string;
  flags: ToolFlag[];
  definition: ListedDefinition | null;
}

/** A tool definition as an upstream listed it: what a release registers. */
export interface ListedDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One upstream tool held back by the definition check, or released by a person. */
export interface QuarantineRecord {
  agent: string;
  upstream: string;
  remote_name: string;
  tool: string;
  definition: ListedDefinition;
  definition_hash: string;
  findings: DefinitionFinding[];
  quarantined_at: string;
  released_by: string | null;
  released_key: string | null;
  released_at: string | null;
}

/** A session's last search_tools turn: the request a forwarded call answers. */
export interface SessionTurn {
  turn_id: string;
  request: string;
  conversation_id: string | null;
}

/** What a sync writes: the tools this upstream now serves, and how the attempt went. */
export interface SyncOutcome {
  served: ServedTool[];
  /** Definitions held now (new or changed ones replace the row; the same one keeps its release). */
  held: Omit<QuarantineRecord, 'agent' | 'upstream' | 'released_by' | 'released_key' | 'released_at'>[];
  /**
   * The names whose quarantine rows stay: those held now and released ones served under their
   * release; the rows of every other name (listed clean, or no longer listed) are removed.
   */
  keep: string[];
  status: UpstreamStatus;
  last_error: string | null;
  failures: number;
  next_sync_at: string;
}
