/**
 * Ports: the small interfaces the core needs from the platform, and the records the stores read and
 * write, so a service names what it stores without importing the adapter that stores it. Adapters
 * live in src/adapters/; src/env.ts is the only module that picks them from bindings.
 */
import type { KeyRole, ModelTool, Revision, SettingsPatch } from '../schemas.ts';
import type { AgentLine, ExportLine, ImportBundle } from './agent-export.ts';
import type { CallRecord, OfferedTool, OutcomeRecord, StoredTool, TurnRecord } from './records.ts';
import type { DefinitionFinding, ToolFlag } from './definition-check.ts';
import type { BeforeAfter, QualityHour, QualityPair, RevisionWindow, WindowTotals } from './quality-math.ts';
import type { ToolActivity } from './review-selection.ts';
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

// The stores services reach storage through. src/env.ts fills each with its adapter; each adapter
// declares the port it implements, so the compiler checks the two agree.

/** An agent key as stored: its hash and salt, never the key itself. */
export interface KeyRecord {
  key_id: string;
  agent: string;
  role: KeyRole;
  salt: string;
  hash: string;
  revoked_at: string | null;
  /** The key's tool lists as JSON text (docs/integrations.md "Who may call what"), or null = every tool. */
  tool_access: string | null;
}

/** One entry of a tool's version history: the definition written and what wrote it. */
export interface ToolVersion {
  version: number;
  definition: Record<string, unknown>;
  source: string;
  created_at: string;
}

/**
 * Agents, their tool rows and versions, and their keys. `Write` is a write a store prepares for a
 * batch (a D1 statement for the D1 adapters): the revision store's writes join `writeTools`, so the
 * tool row and the revision's status land together or not at all.
 */
export interface ToolStore<Write = unknown> {
  /** Creates the agent row when it is missing. */
  ensureAgent(agent: string, now: string): Promise<void>;
  /** The agent row's creation for a caller's batch, so a new agent exists only if the batch lands. */
  ensureAgentStatement(agent: string, now: string): Write;
  /**
   * Writes that wrap a batch so it only lands while a revision has status `status`: `before` goes
   * first and `after` last; when the status has moved on, the whole batch is rolled back.
   */
  revisionStatusGuard(agent: string, revisionId: string, status: string): { before: Write; after: Write };
  getAgent(agent: string): Promise<AgentRecord | null>;
  /** Every agent with its tool count and the calls its log holds. */
  listAgents(): Promise<(AgentRecord & { tools: number; calls: number })[]>;
  putSettings(agent: string, settings: SettingsPatch): Promise<void>;
  /** Every tool row of the agent, by name; `vectors: false` leaves the stored vectors out. */
  listTools(agent: string, opts?: { vectors?: boolean }): Promise<StoredTool[]>;
  /** The names of the agent's registered tools, by name. */
  toolNames(agent: string): Promise<string[]>;
  getTool(agent: string, name: string): Promise<StoredTool | null>;
  /** A tool's test endpoint as stored (JSON `{url, token_sealed}`), or null: none, or no such tool. */
  getTestEndpoint(agent: string, name: string): Promise<string | null>;
  /** Sets (or, with null, removes) a tool's test endpoint; false when the tool is not registered. */
  setTestEndpoint(agent: string, name: string, value: string | null): Promise<boolean>;
  /** The highest version ever written for each name (rows deleted since keep their history). */
  lastVersions(agent: string): Promise<Map<string, number>>;
  /**
   * Writes rows with their version entries and `extra` writes in one batch, and moves the agent's
   * tools_gen. Throws VersionConflict when another writer got there first: nothing was written.
   */
  writeTools(agent: string, writes: readonly ToolWrite[], now: string, extra?: Write[]): Promise<void>;
  /** Removes a tool's row (its versions stay); false when it was not registered. */
  deleteTool(agent: string, name: string): Promise<boolean>;
  /** Every row of the agent, in every table, all or nothing; true when the agent existed. */
  deleteAgent(agent: string): Promise<boolean>;
  /** A tool's versions, newest first. */
  listVersions(agent: string, name: string): Promise<ToolVersion[]>;
  insertKey(key: Omit<KeyRecord, 'tool_access'> & { tool_access?: string | null }, now: string): Promise<void>;
  getKey(keyId: string): Promise<KeyRecord | null>;
  /** Revokes a key of the agent; false when it has no such key or it was revoked already. */
  revokeKey(agent: string, keyId: string, now: string): Promise<boolean>;
  /**
   * Calls `listener` after every write made through this isolate that can move an agent's tools_gen
   * or settings, through this store or any other over the same database (src/services/agent-rows.ts
   * drops its copy of the row).
   */
  onAgentWrite(listener: (agent: string) => void): void;
}

/** A revision with what the store keeps beside the API shape. */
export interface RevisionRecord {
  revision: Revision;
  /** The row's learned state before apply, as JSON text (undo restores it); null until applied. */
  before_row: string | null;
  /** The key id (or 'admin') that applied or dismissed it. */
  approved_key: string | null;
  /** The key id (or 'admin') that undid it. */
  undone_key: string | null;
  review_id: string | null;
}

/** The status columns an apply, dismiss or undo writes (absent = unchanged). */
export interface RevisionUpdate {
  status: Revision['status'];
  applied_at?: string | null;
  approved_by?: string | null;
  approved_key?: string | null;
  reason?: string | null;
  before_row?: string | null;
  applied_version?: number | null;
  /** Who took an applied revision back, kept apart from who applied it. */
  undone_at?: string | null;
  undone_by?: string | null;
  undone_key?: string | null;
  /** The new body fields (queries_withdrawn, displaced, queries_displaced, refused …), merged over the stored body. */
  body?: Partial<RevisionBody>;
}

/** The part of a Revision kept in the `body` JSON column. */
export type RevisionBody = Omit<
  Revision,
  | 'revision_id'
  | 'tool'
  | 'status'
  | 'created_at'
  | 'applied_at'
  | 'approved_by'
  | 'applied_version'
  | 'dismiss_reason'
  | 'undone_at'
  | 'undone_by'
>;

/** One stored review, for the dashboard and the cron's record of failures. */
export interface ReviewRecord {
  review_id: string;
  created_at: string;
  trigger: 'api' | 'cron';
  summary: Record<string, unknown>;
}

/** An agent with calls since its last review (the cron's candidates). */
export interface AgentDue {
  agent: string;
  /** The agent's stored settings overrides (validated by the caller). */
  settings: Record<string, unknown>;
  last_review_at: string | null;
  last_review_seq: number;
  last_seq: number;
}

/** Which revisions a list reads: of one tool, of one status, at most `limit`. */
export interface RevisionFilter {
  tool?: string | undefined;
  status?: Revision['status'] | undefined;
  limit?: number;
}

/**
 * Revisions, reviews, the agents' review and call marks, and the cron cursor. `Write` is a write
 * prepared for a batch, as for ToolStore: `commit` runs several, `ToolStore.writeTools` takes them.
 */
export interface RevisionStore<Write = unknown> {
  /** The insertion of one new `proposed` revision, for a caller's batch. */
  insertRevisionStatement(agent: string, rev: NewRevision, reviewId: string | null): Write;
  /** Stores new `proposed` revisions, all or none. */
  insertRevisions(agent: string, revisions: readonly NewRevision[], reviewId: string | null): Promise<void>;
  /** One revision of an agent, or null (another agent's id is not found either). */
  getRevision(agent: string, id: string): Promise<Revision | null>;
  /** One revision with what the store keeps beside it (before_row for undo). */
  getRevisionRecord(agent: string, id: string): Promise<RevisionRecord | null>;
  /** An agent's revisions, newest first (ties: the later insert first). */
  listRevisions(agent: string, filter?: RevisionFilter): Promise<Revision[]>;
  /**
   * One page of an agent's revisions, newest first, after the position `after` (the previous page's
   * `next`); `next` is this page's last position when more follow.
   */
  pageRevisions(
    agent: string,
    filter: RevisionFilter,
    after: [string, number] | null,
  ): Promise<{ revisions: Revision[]; next: [string, number] | null }>;
  /** tool → the id of its newest revision of lines waiting (`proposed`): such a tool is not reviewed again. */
  waitingRevisions(agent: string): Promise<Map<string, string>>;
  /**
   * The update of a revision's status, for a batch that lands only while the revision has status
   * `expected`; null when there is no such revision.
   */
  updateRevisionStatement(
    agent: string,
    id: string,
    expected: Revision['status'],
    update: RevisionUpdate,
  ): Promise<Write | null>;
  /** Runs writes this store prepared, all or none. */
  commit(statements: readonly Write[]): Promise<void>;
  /** The insertion of a review's record, for a caller's batch. */
  insertReviewStatement(agent: string, review: ReviewRecord): Write;
  /** Moves a tool's review mark forward to `seq` (never back), for a caller's batch. */
  markToolReviewed(agent: string, tool: string, seq: number): Write;
  /** Records a finished review on the agent row, for a caller's batch. */
  markAgentReviewed(agent: string, now: string, seq: number): Write;
  /** Agents after `cursor` (by id) with calls since their last review, at most `limit`. */
  agentsWithNewCalls(cursor: string, limit: number): Promise<AgentDue[]>;
  /** Notes a write of `added` new calls to an agent's log, whose newest call seq is then `lastSeq`. */
  noteCalls(agent: string, lastSeq: number, added: number): Promise<void>;
  /** Notes that retention removed `removed` calls from an agent's log. */
  noteCallsPruned(agent: string, removed: number): Promise<void>;
  /** Where the last cron tick stopped ('' = from the start). */
  getCronCursor(): Promise<string>;
  setCronCursor(cursor: string, now: string): Promise<void>;
}

/** The turns, calls and outcomes of each agent's log (docs/learning.md). */
export interface CallLog {
  /** Records a turn once, for a batch of the same log; a route's turn completes a trace's. */
  insertTurn(agent: string, t: NewTurn): LogStatement;
  /** Records many turns as insertTurn does, in one write. */
  writeTurns(agent: string, turns: readonly NewTurn[]): Promise<void>;
  /**
   * Inserts calls, with `extra` statements of the same log before them, all or none; a call already
   * logged (by call_id) is skipped. Answers how many were new and the newest call seq after it (0: none).
   */
  insertCalls(
    agent: string,
    calls: readonly NewCall[],
    extra?: LogStatement[],
  ): Promise<{ accepted: number; lastSeq: number }>;
  /** The newest call seq of an agent (0 when it has none). */
  lastCallSeq(agent: string): Promise<number>;
  /** The newest `limit` turns and calls of the agent, with the outcomes of those turns. */
  recentLog(agent: string, limit: number): Promise<LogSlice>;
  /** The turns and calls since `since` (the newest `limit` of each) and their outcomes; `truncated` when a cap was hit. */
  windowLog(agent: string, since: string, limit: number): Promise<LogSlice & { truncated: boolean }>;
  /** The turns and calls in [from, to) (the oldest `limit` of each) and their outcomes; `truncated` when a cap was hit. */
  rangeLog(agent: string, from: string, to: string, limit: number): Promise<LogSlice & { truncated: boolean }>;
  /** The hour of the agent's first logged turn or call at or after `from` (ISO), or null. */
  nextLogHour(agent: string, from: string): Promise<string | null>;
  getTurn(agent: string, turnId: string): Promise<TurnRecord | null>;
  /** Records a turn's reported outcome; a later report replaces it. */
  upsertOutcome(agent: string, o: OutcomeRecord): Promise<void>;
}

/** The bounded log reads of a tool-learning review (docs/learning.md): each costs the same whatever the log's size. */
export interface ReviewLogReads {
  /** What the review chooses by, for each of the agent's registered `tools` (counts over the newest `perTool`). */
  toolActivity(
    agent: string,
    tools: readonly { name: string; reviewed_seq: number }[],
    perTool: number,
  ): Promise<ToolActivity[]>;
  /** The newest `perTool` calls of each tool. */
  recentCalls(agent: string, tools: readonly string[], perTool: number): Promise<CallRecord[]>;
  /** The newest `perTool` routed turns where routing ranked each tool first. */
  rankedFirstTurns(agent: string, tools: readonly string[], perTool: number): Promise<TurnRecord[]>;
  turnsById(agent: string, turnIds: readonly string[]): Promise<TurnRecord[]>;
  /** The previous and the next turn of the same conversation, for each turn. */
  neighbourTurns(agent: string, turnIds: readonly string[]): Promise<TurnRecord[]>;
  /** For each call whose run has no recorded turn, the calls of its conversation before and after it that can start a run. */
  neighbourCalls(agent: string, callSeqs: readonly number[]): Promise<CallRecord[]>;
  /** The newest `perTurn` calls of each turn. */
  callsOfTurns(agent: string, turnIds: readonly string[], perTurn?: number): Promise<CallRecord[]>;
  outcomesOf(agent: string, turnIds: readonly string[]): Promise<OutcomeRecord[]>;
}

/** A tool name seen in calls or traces that no tool row has. */
export interface UnregisteredRow {
  name: string;
  call_count: number;
  failure_count: number;
  last_seen_at: string;
  /** The newest `tools=[…]` definition a trace sent for the name, or null. */
  definition: AuthorDefinition | null;
}

/** Usage reads of the log (docs/learning.md "Usage flags") and the definitions traces send. */
export interface UsageStore {
  /** Every registered tool with 1 when it was ever called, else 0. */
  registeredCallCounts(agent: string, registered: readonly string[]): Promise<{ tool: string; calls: number }[]>;
  /** Names called or traced with no tool row, most failures first, then most calls, then by name; at most `limit`. */
  unregisteredTools(agent: string, registered: readonly string[], limit: number): Promise<UnregisteredRow[]>;
  /** The arguments of each tool's most recent `perTool` calls. */
  recentArguments(
    agent: string,
    tools: readonly string[],
    perTool: number,
  ): Promise<Map<string, Record<string, unknown>[]>>;
  /** Records the definitions a trace sent (the newest wins), for the trace's batch of the log. */
  traceToolStatements(agent: string, definitions: readonly AuthorDefinition[], now: string): LogStatement[];
}

/** Settled routing-quality hours (docs/api.md "Quality"): what settling writes once an hour and a report sums. */
export interface QualityStore {
  /** The first hour not yet settled (hours before it are stored), or null before the first settle. */
  settledThrough(agent: string): Promise<string | null>;
  /** Agents whose cursor is before `target` (or who have none), least settled first. */
  laggingAgents(target: string, limit: number): Promise<string[]>;
  /**
   * Stores the counts of the hours [from, to) in place of what was stored for them, drops the hours
   * before `keepFrom`, and moves the agent's cursor to `to`, all or none.
   */
  writeHours(
    agent: string,
    from: string,
    to: string,
    hours: readonly QualityHour[],
    pairs: readonly QualityPair[],
    keepFrom: string,
  ): Promise<void>;
  /** The stored hours [from, to) of one tool (EVERY_TOOL: the whole agent). */
  hoursOf(agent: string, tool: string, from: string, to: string): Promise<QualityHour[]>;
  /** Over the stored hours [from, to): misses per tool and confused requests per pair, of every tool or of `tool`. */
  totals(agent: string, from: string, to: string, tool?: string): Promise<WindowTotals>;
  /** Each revision's before and after, summed over the stored hours before `through`. */
  revisionCounts(
    agent: string,
    revisions: readonly RevisionWindow[],
    days: number,
    through: string,
  ): Promise<BeforeAfter[]>;
}

/** Counts per time bucket for the dashboard's charts; a bucket is the first `keyChars` characters of an ISO time. */
export interface ActivityStore {
  callCounts(
    agent: string,
    tool: string,
    from: string,
    keyChars: number,
  ): Promise<Map<string, { calls: number; failures: number }>>;
  /** Routed turns that offered `tool` (an unrouted turn offered nothing). */
  offerCounts(agent: string, tool: string, from: string, keyChars: number): Promise<Map<string, number>>;
}

/** Whole-agent export and import (docs/api.md "Export and import"). */
export interface AgentTransferStore {
  /** The agent line, or null when the agent does not exist. */
  agentLine(agent: string): Promise<AgentLine | null>;
  /** Every line of the agent after the agent line, a page of one table at a time. */
  lines(agent: string): AsyncGenerator<ExportLine[]>;
  /** Which of `ids` (revision and review ids, unique across agents) are taken already. */
  takenIds(ids: readonly string[]): Promise<Set<string>>;
  /** Creates the agent row with the imported settings; false when the agent exists already. */
  claimAgent(agent: string, line: AgentLine, now: string): Promise<boolean>;
  /** Writes the log (turns and calls in their exported order, so their new seqs keep it). */
  insertLog(agent: string, b: ImportBundle): Promise<void>;
  /** call_id → the seq the imported call was given. */
  callSeqs(agent: string): Promise<Map<string, number>>;
  /** Writes tool rows as exported (their own updated_at), vectors included. */
  insertTools(agent: string, tools: readonly StoredTool[]): Promise<void>;
  /** Writes tool versions, revisions, reviews and pins. */
  insertHistory(agent: string, b: ImportBundle): Promise<void>;
  /** The agent's review mark, newest-call mark and call count, and a new tools_gen. */
  finishImport(agent: string, lastReviewSeq: number, calls: ReadonlyMap<string, number>): Promise<void>;
}

/** The tables of a log an earlier version kept in D1. */
export type LegacyTable = 'turns' | 'calls' | 'outcomes' | 'trace_tools';

/** A log kept in D1 by an earlier version, moved into each agent's log (docs/capacity.md "Where the log lives"). */
export interface LegacyLogStore {
  /** The tables the move empties, in the order it moves them. */
  readonly tables: readonly LegacyTable[];
  /** Moves the `limit` oldest rows of `table` into their agents' logs; answers how many moved. */
  move(table: LegacyTable, limit: number): Promise<number>;
}

/** How a sync attempt went: the upstream's status and when it is tried next. */
export type SyncStatus = Pick<SyncOutcome, 'status' | 'last_error' | 'failures' | 'next_sync_at'>;

/** The MCP gateway's upstreams, the tools they serve, what is held back, and the gateway's sessions. */
export interface UpstreamStore {
  get(agent: string, name: string): Promise<UpstreamRecord | null>;
  list(agent: string): Promise<UpstreamRecord[]>;
  /** Creates or replaces an upstream's settings; a replaced one is synced again from scratch. */
  put(u: Omit<UpstreamRecord, 'status' | 'last_error' | 'failures' | 'last_sync_at'>): Promise<void>;
  /** Removes an upstream; the tools it served stay but are no longer available. True when it existed. */
  delete(agent: string, name: string): Promise<boolean>;
  /** Every tool of the agent that came from an upstream, available or not, by name. */
  tools(agent: string): Promise<UpstreamToolRecord[]>;
  /** The upstream tool row of one agent tool, or null for the agent's own tools. */
  tool(agent: string, tool: string): Promise<UpstreamToolRecord | null>;
  /** Names of the agent's tools an upstream no longer serves: never routed. */
  unavailable(agent: string): Promise<Set<string>>;
  /** A successful sync: the tools served now are available, this upstream's others are not. */
  recordSync(agent: string, name: string, outcome: SyncOutcome, now: string): Promise<void>;
  /** A failed sync: the status and backoff only; the tools stay as the last good sync left them. */
  recordFailure(agent: string, name: string, outcome: SyncStatus, now: string): Promise<void>;
  /** Held and released definitions of one upstream (or of all the agent's), by upstream and name. */
  quarantine(agent: string, upstream?: string): Promise<QuarantineRecord[]>;
  /** One upstream tool's held (or released) definition, by the name the upstream lists. */
  quarantined(agent: string, upstream: string, remoteName: string): Promise<QuarantineRecord | null>;
  /** A held (not released) definition a call names: by its agent-level name or the upstream's. */
  heldNamed(agent: string, name: string): Promise<QuarantineRecord | null>;
  /**
   * Releases a held definition (only the one with this hash, only while still held) and, when
   * `served`, serves it now. False when nothing was held under that hash.
   */
  release(
    q: { agent: string; upstream: string; remote_name: string; definition_hash: string },
    by: { released_by: string; actor: string },
    now: string,
    served: ServedTool | null,
  ): Promise<boolean>;
  /** Upstreams whose next sync is due at `now`, oldest due first, at most `limit`. */
  due(now: string, limit: number): Promise<UpstreamRecord[]>;
  setSessionTurn(agent: string, sessionId: string, turn: SessionTurn, now: string): Promise<void>;
  /** A gateway session's last search_tools turn, or null. */
  sessionTurn(agent: string, sessionId: string): Promise<SessionTurn | null>;
}

/** A webhook delivery's state: delivered, being retried, or in the dead-letter queue. */
export interface DeliveryRow {
  event_id: string;
  webhook_id: string;
  type: string;
  status: 'delivered' | 'retrying' | 'failed';
  attempts: number;
  last_error: string | null;
  updated_at: string;
}

/** Each agent's webhooks and their deliveries (docs/integrations.md "Webhooks"). */
export interface WebhookStore {
  /** The agent's webhooks in the order the last replace listed them. */
  list(agent: string): Promise<StoredWebhook[]>;
  get(agent: string, webhookId: string): Promise<StoredWebhook | null>;
  /** Replaces the agent's webhooks with `hooks`, all or none. */
  replace(agent: string, hooks: readonly StoredWebhook[]): Promise<void>;
  /** True when this event already reached this webhook (a message the queue hands over again). */
  delivered(eventId: string, webhookId: string): Promise<boolean>;
  /** Records a delivery's state; `failed` keeps the last error a retry recorded and the larger attempt count. */
  record(agent: string, d: DeliveryRow): Promise<void>;
  /** The agent's deliveries that reached the dead-letter queue, newest first. */
  failures(agent: string, limit: number): Promise<DeliveryRow[]>;
}
