/**
 * `/route` (docs/learning.md). The hot path: the agent row (its tools_gen and settings, kept per isolate:
 * src/services/agent-rows.ts), the routing index cached per isolate and rebuilt only when
 * tools_gen moves (one build however many routes ask at once), the request embedded and ranked in
 * memory. The turn and the offer counts are written after the answer (`waitUntil`, grouped:
 * src/services/turn-writer.ts). `npm run bench` measures it (docs/performance.md).
 */
import { routingWindow, storedRequest } from '../core/long-request.ts';
import type { NewTurn } from '../core/ports.ts';
import type { StoredTool } from '../core/records.ts';
import { modelView, toolboxTokens } from '../core/render.ts';
import { buildRoutingIndex, routingDoc, rankTools, type RoutingDoc, type RoutingIndex } from '../core/routing.ts';
import type { VectorIndex, VectorMatch } from '../core/ports.ts';
import type { Services } from '../env.ts';
import { logError } from '../logger.ts';
import { notFound } from '../errors.ts';
import { DEFAULT_SETTINGS, type ModelTool, type RouteResult, type Settings } from '../schemas.ts';
import { agentRow } from './agent-rows.ts';
import { Batcher } from './batcher.ts';
import { embedTools } from './tool-vectors.ts';
import { recordTurn } from './turn-writer.ts';

export interface RoutingSnapshot {
  key: string;
  settings: Settings;
  /**
   * The lexical index and, without a vector index binding, the vectors; with one (Vectorize) it
   * holds no vectors (`dimensions` 0): dense candidates come from the binding.
   */
  index: RoutingIndex;
  /** With a vector index: its vector ids → tool names. */
  vectorNames: Map<string, string> | null;
  views: Map<string, ModelTool>;
  /** Every tool's model view sorted by name, and its size in tokens (the stable-list rule). */
  allViews: ModelTool[];
  tokens: number;
  /** What the snapshot holds in memory, estimated (`snapshotBytes`). */
  bytes: number;
}

/**
 * Routing snapshots an isolate keeps, bounded by bytes (`svc.routingCacheBytes`, docs/performance.md
 * "Memory"), the least recently used dropped first. The snapshot just built is never the one dropped:
 * one larger than the budget is kept alone (it is in memory for its request anyway, and dropping it
 * would rebuild it on every route of its agent).
 */
const snapshots = new Map<string, RoutingSnapshot>();
let cachedBytes = 0;

/**
 * A snapshot's memory, estimated from what it holds, per V8's layout: the vector matrix (4 bytes a
 * number); the model views about as large as their JSON (ASCII strings take a byte a character);
 * the lexical index per word (its map entry, string and two postings arrays) and per posting (a
 * document position and a count, with the arrays' spare capacity). `npm run measure:snapshot`
 * prints this beside the measured heap: within 0.9-1.3× of it from 1,000 to 50,000 tools.
 */
export const LEXICAL_BYTES_PER_TERM = 400;
export const LEXICAL_BYTES_PER_POSTING = 32;
const BYTES_PER_DOCUMENT = 64;

export function snapshotBytes(index: RoutingIndex, allViews: readonly ModelTool[]): number {
  const views = allViews.reduce((n, v) => n + JSON.stringify(v).length, 0);
  const lexical =
    LEXICAL_BYTES_PER_TERM * index.lexical.terms +
    LEXICAL_BYTES_PER_POSTING * index.lexical.postings +
    BYTES_PER_DOCUMENT * index.names.length;
  return index.matrix.byteLength + views + lexical;
}

/** What the isolate's snapshot cache holds now. */
export function snapshotCache(): { agents: number; bytes: number } {
  return { agents: snapshots.size, bytes: cachedBytes };
}

function keepSnapshot(agent: string, snap: RoutingSnapshot, budget: number): void {
  forget(agent);
  snapshots.set(agent, snap);
  cachedBytes += snap.bytes;
  for (const oldest of snapshots.keys()) {
    if (cachedBytes <= budget || oldest === agent) break;
    forget(oldest);
  }
}

function forget(agent: string): void {
  const snap = snapshots.get(agent);
  if (!snap) return;
  snapshots.delete(agent);
  cachedBytes -= snap.bytes;
}

/** Merged settings of an agent row (docs/configuration.md defaults under the agent's own). */
export function settingsOf(stored: Partial<Settings>): Settings {
  return { ...DEFAULT_SETTINGS, ...stored };
}

interface SnapshotBuild {
  svc: Services;
  agent: string;
  key: string;
  settings: Settings;
}

/**
 * Builds the snapshots a batch asks for, once per (agent, key): concurrent first routes of a
 * 10,000-tool agent would otherwise each load every row and build the index (a stampede that
 * holds the isolate's CPU and memory for seconds). A snapshot cached meanwhile is reused.
 */
async function buildSnapshots(items: SnapshotBuild[]): Promise<RoutingSnapshot[]> {
  const builds = new Map<string, Promise<RoutingSnapshot>>();
  return Promise.all(
    items.map((item) => {
      const id = `${item.agent}\n${item.key}`;
      const build = builds.get(id) ?? cachedSnapshot(item.agent, item.key) ?? buildSnapshot(item);
      builds.set(id, build);
      return build;
    }),
  );
}

/** Building a 10,000-tool snapshot loads ~25 MB of rows; a waiter gives another request's build this long. */
const BUILD_PATIENCE_MS = 30_000;
const snapshotBuilds = new Batcher<SnapshotBuild, RoutingSnapshot>(buildSnapshots, { patienceMs: BUILD_PATIENCE_MS });

function cachedSnapshot(agent: string, key: string): Promise<RoutingSnapshot> | undefined {
  const hit = snapshots.get(agent);
  if (!hit || hit.key !== key) return undefined;
  // Most recently used last: the eviction walks from the front.
  snapshots.delete(agent);
  snapshots.set(agent, hit);
  return Promise.resolve(hit);
}

/** The agent's routing snapshot, from this isolate's cache when tools and settings are unchanged. */
export async function routingSnapshot(
  svc: Services,
  agent: string,
  waitUntil?: (p: Promise<unknown>) => void,
): Promise<RoutingSnapshot> {
  const row = await agentRow(svc, agent, Date.now(), waitUntil);
  if (!row) throw notFound(`agent ${agent}`);
  const settings = settingsOf(row.settings);
  const key = `${row.tools_gen}|${settings.show_learned_examples}|${svc.embedder.id}|${svc.vectorIndex ? 'bound' : 'exact'}`;
  const snap = (await cachedSnapshot(agent, key)) ?? (await snapshotBuilds.submit({ svc, agent, key, settings }));
  return { ...snap, settings };
}

/**
 * Loads and indexes every row; the rows themselves are not kept (the matrix holds the vectors).
 * With a vector index binding no vector is kept or embedded: the index answers the dense side.
 */
async function buildSnapshot({ svc, agent, key, settings }: SnapshotBuild): Promise<RoutingSnapshot> {
  const bound = svc.vectorIndex;
  // A tool its upstream no longer lists keeps its row (history, learned lines) but is never routed.
  const [rows, unavailable] = await Promise.all([
    svc.store.listTools(agent, { vectors: bound === null }),
    svc.upstreams.unavailable(agent),
  ]);
  const tools = unavailable.size === 0 ? rows : rows.filter((t) => !unavailable.has(t.name));
  const none = new Float32Array(0);
  const docs = bound ? tools.map((t) => routingDoc(t, none)) : await routingDocs(svc, tools);
  const index = buildRoutingIndex(docs);
  const vectorNames = bound ? new Map(tools.map((t) => [bound.idOf(agent, t.name), t.name])) : null;
  const views = new Map(tools.map((t) => [t.name, modelView(t, settings.show_learned_examples)]));
  const allViews = [...views.values()];
  const bytes = snapshotBytes(index, allViews);
  const snap = { key, settings, index, vectorNames, views, allViews, tokens: toolboxTokens(allViews), bytes };
  keepSnapshot(agent, snap, svc.routingCacheBytes);
  return snap;
}

/**
 * The routing documents of stored rows, from their stored vectors. A vector written by another
 * embedder (or none) is re-embedded in memory; the row keeps its own until it is next written
 * (reference: "rows already embedded keep their vector").
 */
export async function routingDocs(svc: Services, tools: readonly StoredTool[]): Promise<RoutingDoc[]> {
  const stale = tools.filter(
    (t) => !t.vector || t.embedder !== svc.embedder.id || t.vector.length !== svc.embedder.dimensions,
  );
  const fresh = stale.length > 0 ? await embedTools(svc.embedder, stale) : [];
  const vectors = new Map(stale.map((t, i) => [t.name, fresh[i]]));
  return tools.map((t) => routingDoc(t, vectors.get(t.name) ?? t.vector ?? new Float32Array(svc.embedder.dimensions)));
}

/** Forgets an agent's snapshot in this isolate (other isolates notice tools_gen). */
export function dropSnapshot(agent: string): void {
  forget(agent);
}

export interface RouteInput {
  request: string;
  conversation_id?: string | undefined;
  k?: number | undefined;
}

/** Ranks the agent's tools for one request and records the turn after answering. */
export async function route(
  svc: Services,
  agent: string,
  input: RouteInput,
  now: string,
  waitUntil: (p: Promise<unknown>) => void,
): Promise<RouteResult> {
  const snap = await routingSnapshot(svc, agent, waitUntil);
  const turn_id = crypto.randomUUID();
  const stable = snap.settings.stable_tool_list_tokens > 0 && snap.tokens <= snap.settings.stable_tool_list_tokens;
  if (stable) {
    const tools = snap.allViews.map((v, i) => ({ name: v.function.name, rank: i + 1, score: 0 }));
    waitUntil(recordTurn(svc, agent, turnRow({ turn_id, input, routed: false, offered: tools, now })));
    return { turn_id, routed: false, tools, model_tools: snap.allViews };
  }
  const k = input.k ?? snap.settings.top_k;
  const text = routingWindow(input.request);
  const [vector] = await svc.embedder.embed([text]);
  const query = { text, vector: vector ?? new Float32Array(svc.embedder.dimensions) };
  const matches = svc.vectorIndex ? await denseCandidates(svc.vectorIndex, snap, agent, query.vector, k) : undefined;
  const tools = rankTools(snap.index, query, k, matches);
  waitUntil(recordTurn(svc, agent, turnRow({ turn_id, input, routed: true, offered: tools, now })));
  return { turn_id, routed: true, tools, model_tools: tools.flatMap((t) => snap.views.get(t.name) ?? []) };
}

/**
 * The vector index's nearest tools, by name, as many as it answers (Vectorize: 100; its price does
 * not depend on topK). The fewer, the more often a tool only BM25 found is scored above its true
 * cosine: on ToolE, 50 candidates give the exact top 5 for 95.0% of requests, 100 for 99.1%
 * (`npm run measure:vectorize`). When the index fails, routing goes on with the lexical side alone
 * and the failure is logged: a turn is never lost to it.
 */
async function denseCandidates(
  index: VectorIndex,
  snap: RoutingSnapshot,
  agent: string,
  vector: Float32Array,
  k: number,
): Promise<VectorMatch[]> {
  try {
    const matches = await index.query(agent, vector, Math.max(k, index.maxTopK));
    return matches.flatMap((m) => {
      const name = snap.vectorNames?.get(m.id);
      return name === undefined ? [] : [{ id: name, score: m.score }];
    });
  } catch (err) {
    logError('vector_index_failed', { agent, error: err instanceof Error ? err.message : String(err) });
    return [];
  }
}

interface TurnToRecord {
  turn_id: string;
  input: RouteInput;
  routed: boolean;
  offered: RouteResult['tools'];
  now: string;
}

function turnRow(t: TurnToRecord): NewTurn {
  return {
    turn_id: t.turn_id,
    request: storedRequest(t.input.request),
    conversation_id: t.input.conversation_id ?? null,
    routed: t.routed,
    offered: t.offered,
    source: 'route',
    created_at: t.now,
  };
}
