/**
 * The embedded default VectorIndex (SPEC §2: no VECTORIZE binding → exact in-process index).
 * Exact cosine as a dot product of normalised vectors over one contiguous Float32Array per agent.
 */
import type { VectorIndex, VectorMatch } from '../core/ports.ts';
import { compareIds } from '../core/lexical.ts';

/** One agent's vectors: row i of `matrix` belongs to `ids[i]`; capacity grows by doubling. */
interface AgentVectors {
  ids: string[];
  rows: Map<string, number>;
  dimensions: number;
  matrix: Float32Array;
}

/**
 * Per-isolate state, shared by every index this module builds, so an adapter built per request
 * still sees what an earlier request upserted in the same isolate.
 */
const agents = new Map<string, AgentVectors>();

function vectorsOf(agent: string, dimensions: number): AgentVectors {
  let entry = agents.get(agent);
  if (entry === undefined || (entry.ids.length === 0 && entry.dimensions !== dimensions)) {
    entry = { ids: [], rows: new Map(), dimensions, matrix: new Float32Array(dimensions * 16) };
    agents.set(agent, entry);
  }
  if (entry.dimensions !== dimensions) {
    throw new RangeError(`agent ${agent} holds ${entry.dimensions}-dimension vectors, got ${dimensions}`);
  }
  return entry;
}

function upsertOne(entry: AgentVectors, id: string, vector: Float32Array): void {
  let row = entry.rows.get(id);
  if (row === undefined) {
    row = entry.ids.length;
    if ((row + 1) * entry.dimensions > entry.matrix.length) {
      const grown = new Float32Array(entry.matrix.length * 2);
      grown.set(entry.matrix);
      entry.matrix = grown;
    }
    entry.ids.push(id);
    entry.rows.set(id, row);
  }
  entry.matrix.set(vector, row * entry.dimensions);
}

/** Removes by moving the last row into the hole, so the matrix stays dense. */
function removeOne(entry: AgentVectors, id: string): void {
  const row = entry.rows.get(id);
  if (row === undefined) return;
  const last = entry.ids.length - 1;
  const lastId = entry.ids[last];
  if (row !== last && lastId !== undefined) {
    const d = entry.dimensions;
    entry.matrix.copyWithin(row * d, last * d, (last + 1) * d);
    entry.ids[row] = lastId;
    entry.rows.set(lastId, row);
  }
  entry.ids.pop();
  entry.rows.delete(id);
}

/** True when `a` ranks before `b`: higher score, then id order (deterministic ties). */
function before(a: VectorMatch, b: VectorMatch): boolean {
  return a.score > b.score || (a.score === b.score && compareIds(a.id, b.id) < 0);
}

/** The non-zero dimensions of a query: a short request leaves about half of a hash vector at zero. */
function nonZero(vector: Float32Array): { dims: Int32Array; values: Float64Array } {
  const dims: number[] = [];
  vector.forEach((x, j) => {
    if (x !== 0) dims.push(j);
  });
  return { dims: Int32Array.from(dims), values: Float64Array.from(dims, (j) => vector[j] ?? 0) };
}

/** The best `topK` rows by dot product, best first; a bounded insertion list, not a full sort. */
function nearest(entry: AgentVectors, vector: Float32Array, topK: number): VectorMatch[] {
  const k = Math.max(0, Math.floor(topK));
  const { dims, values } = nonZero(vector);
  const d = entry.dimensions;
  const m = entry.matrix;
  const best: VectorMatch[] = [];
  for (let row = 0; k > 0 && row < entry.ids.length; row++) {
    let dot = 0;
    const base = row * d;
    for (let t = 0; t < dims.length; t++) dot += (m[base + (dims[t] ?? 0)] ?? 0) * (values[t] ?? 0);
    const last = best[best.length - 1];
    if (last !== undefined && best.length === k && dot < last.score) continue;
    const match = { id: entry.ids[row] ?? '', score: dot };
    if (last !== undefined && best.length === k && !before(match, last)) continue;
    let at = best.length;
    while (at > 0 && before(match, best[at - 1] ?? match)) at--;
    best.splice(at, 0, match);
    if (best.length > k) best.pop();
  }
  return best;
}

/**
 * Exact in-process index. Cost: a full scan per query, O(tools × non-zero query dimensions)
 * (measured ≈ 0.2 ms at 200 tools, ≈ 9 ms at 10,000 tools × 512 on the shared 2-core dev box),
 * 2 KiB per 512-d tool; consistent (a query sees every upsert at once) but per isolate, so each
 * isolate fills its own copy from the stored vectors.
 */
export function createExactIndex(): VectorIndex {
  return {
    consistent: true,
    async upsert(agent, items) {
      for (const item of items) upsertOne(vectorsOf(agent, item.vector.length), item.id, item.vector);
    },
    async remove(agent, ids) {
      const entry = agents.get(agent);
      if (entry !== undefined) for (const id of ids) removeOne(entry, id);
    },
    async query(agent, vector, topK) {
      const entry = agents.get(agent);
      if (entry === undefined || entry.ids.length === 0) return [];
      if (vector.length !== entry.dimensions) {
        throw new RangeError(`query has ${vector.length} dimensions, agent ${agent} ${entry.dimensions}`);
      }
      return nearest(entry, vector, topK);
    },
  };
}
