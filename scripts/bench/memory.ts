/**
 * The routing index's memory at each toolbox size, measured on a Node-side replica: the same
 * `routingSnapshot` code the Worker runs (src/services/route-serving.ts over src/core/routing.ts and the
 * hash embedder), fed rows shaped exactly as D1 returns them, inside the same engine (V8) workerd
 * uses. Measured as the growth of V8 heap + ArrayBuffer memory between two full collections, with
 * the snapshots the only things kept alive; several copies are built and the growth divided, so
 * the collector's noise (a few hundred KiB) does not swamp a small toolbox. workerd's RSS is not
 * used: its D1 page cache and allocator arenas move with everything else the bench does.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createHashEmbedder } from '../../src/adapters/hash-embedder.ts';
import type { StoredTool } from '../../src/core/records.ts';
import type { MemoryWording } from '../../src/core/routing-memory.ts';
import { buildRoutingIndex, rankTools, routingDoc } from '../../src/core/routing.ts';
import type { Services } from '../../src/env.ts';
import { dropSnapshot, routingSnapshot, type RoutingSnapshot } from '../../src/services/route-serving.ts';
import { embedTools } from '../../src/services/tool-vectors.ts';
import type { BenchTool } from './data.ts';

/** Memory figures of one toolbox's routing snapshot. */
export interface MemoryFigures {
  tools: number;
  /** The Float32 vector matrix alone (tools × dimensions × 4 bytes). */
  matrix_bytes: number;
  /** Everything the cached snapshot keeps: rows, matrix, BM25 postings, model views. */
  snapshot_bytes: number;
  /** What the snapshot cache counts it as (`snapshotBytes`), which its byte budget is held to. */
  estimated_bytes: number;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function used(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * Rows as the D1 adapter maps them, vectors written by the hash embedder at registration. Each row
 * goes through JSON as D1's do (its text columns arrive as fresh strings, parameters parsed), so
 * the snapshot owns its strings as in the Worker instead of sharing the generator's.
 */
async function storedRows(
  tools: readonly BenchTool[],
  agent: string,
  memories: readonly MemoryWording[][] | null,
): Promise<StoredTool[]> {
  const embedder = createHashEmbedder();
  const now = new Date(0).toISOString();
  const rows: StoredTool[] = tools.map((t, i) =>
    fromD1({
      name: t.name,
      docstring: t.description,
      description: null,
      parameters: t.parameters,
      examples: [],
      notes: [],
      avoid: [],
      call_example: null,
      memory: memories?.[i] ?? [],
      queries_source: null,
      version: 1,
      definition_hash: agent,
      vector: null,
      embedder: embedder.id,
      reviewed_seq: 0,
      created_at: now,
      updated_at: now,
    }),
  );
  // A row's vector as registration and apply write it: head and learned wordings (here: memory).
  const vectors = await embedTools(embedder, rows);
  rows.forEach((r, i) => {
    r.vector = vectors[i] ?? null;
  });
  return rows;
}

/** A copy of a row sharing no string or object with the original, as a D1 result is. */
function fromD1(row: StoredTool): StoredTool {
  return JSON.parse(JSON.stringify(row)) as StoredTool;
}

/**
 * Stands for a Vectorize binding: building a snapshot only asks it for vector ids (the routing
 * snapshot then keeps no vectors; dense candidates come from the binding at query time).
 */
const boundIndex = { consistent: false, maxTopK: 100, idOf: (agent: string, tool: string) => `${agent}/${tool}` };

async function buildSnapshot(
  tools: readonly BenchTool[],
  agent: string,
  bound: boolean,
  memories: readonly MemoryWording[][] | null,
): Promise<RoutingSnapshot> {
  const svc = {
    embedder: createHashEmbedder(),
    vectorIndex: bound ? boundIndex : null,
    // Every tool's upstream lists it (or it has none): all of them are routed.
    upstreams: { unavailable: () => Promise.resolve(new Set<string>()) },
    store: {
      // A replica is never written: no write reaches the agent-row cache kept for this store.
      onAgentWrite: () => {},
      getAgent: () =>
        Promise.resolve({
          agent,
          created_at: '',
          settings: {},
          tools_gen: 1,
          last_review_at: null,
          last_review_seq: 0,
        }),
      listTools: async () => storedRows(tools, agent, memories),
    },
  } as unknown as Services;
  return routingSnapshot(svc, agent);
}

/** About 20,000 tools' worth of copies per measurement (100 of 200 tools, 2 of 10,000). */
const TOOLS_MEASURED = 20_000;

/**
 * Measures one toolbox (`memories[i]`: tool i's routing memory, none when null); the snapshots are built, measured and released. A small snapshot is built
 * and dropped first so lazily compiled code and module state are not counted as index memory.
 */
export async function measureSnapshot(
  tools: readonly BenchTool[],
  bound = false,
  memories: readonly MemoryWording[][] | null = null,
): Promise<MemoryFigures> {
  dropSnapshot('memory-warm-up');
  await buildSnapshot(tools.slice(0, 10), 'memory-warm-up', bound, memories);
  dropSnapshot('memory-warm-up');
  const copies = Math.max(1, Math.round(TOOLS_MEASURED / tools.length));
  const agents = Array.from({ length: copies }, (_, i) => `memory-${tools.length}-${i}`);
  const before = used();
  const kept: RoutingSnapshot[] = [];
  for (const agent of agents) kept.push(await buildSnapshot(tools, agent, bound, memories));
  const after = used();
  const matrix = kept[0]?.index.matrix.byteLength ?? 0;
  agents.forEach(dropSnapshot);
  return {
    tools: tools.length,
    matrix_bytes: matrix,
    snapshot_bytes: Math.max(0, Math.round((after - before) / copies)),
    estimated_bytes: kept[0]?.bytes ?? 0,
  };
}

/** Build and ranking times of one toolbox's routing index, in this process (no Worker, no D1). */
export interface IndexFigures {
  /** BM25 postings ((word, tool) pairs) and distinct words. */
  postings: number;
  terms: number;
  /** `buildRoutingIndex`, median of three builds. */
  build_ms: number;
  /** `rankTools` for one request (k 5), the mean over `requests` requests ranked twice. */
  rank_ms: number;
}

/** Times the index of `tools` with `memories` (none when null) as `/route` builds and ranks it. */
export async function measureIndex(
  tools: readonly BenchTool[],
  memories: readonly MemoryWording[][] | null,
  requests: readonly string[],
): Promise<IndexFigures> {
  const rows = await storedRows(tools, 'index-figures', memories);
  const docs = rows.map((r) => routingDoc(r, r.vector ?? new Float32Array(0)));
  const builds: number[] = [];
  let index = buildRoutingIndex(docs);
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    index = buildRoutingIndex(docs);
    builds.push(performance.now() - t0);
  }
  const vectors = await createHashEmbedder().embed([...requests]);
  const queries = requests.map((text, i) => ({ text, vector: vectors[i] ?? new Float32Array(0) }));
  for (const q of queries) rankTools(index, q, 5);
  const t0 = performance.now();
  for (let pass = 0; pass < 2; pass++) for (const q of queries) rankTools(index, q, 5);
  const rank = (performance.now() - t0) / (2 * queries.length);
  builds.sort((a, b) => a - b);
  return {
    postings: index.lexical.postings,
    terms: index.lexical.terms,
    build_ms: Math.round((builds[1] ?? NaN) * 10) / 10,
    rank_ms: Math.round(rank * 1000) / 1000,
  };
}
