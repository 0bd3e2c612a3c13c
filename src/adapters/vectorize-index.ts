import type { VectorIndex } from '../core/ports.ts';
import { fnv64Hex } from '../core/text.ts';

/** Vectorize caps one upsert or delete call at 1,000 vectors. */
const VECTORIZE_BATCH = 1000;
/** Vectorize caps topK at 100 when values and metadata are not returned (they never are here). */
const VECTORIZE_MAX_TOP_K = 100;
/** Vectorize ids are at most 64 bytes. */
const VECTORIZE_ID_BYTES = 64;

/**
 * Cloudflare Vectorize, one namespace per agent (docs/configuration.md). Eventually consistent: an
 * upsert is visible to queries after a few seconds, so re-checks read the vectors kept in D1 instead
 * (docs/learning.md). A vector id is unique in the whole index, namespaces or not, so it names the
 * agent as well as the tool (`vectorIdFor`): two agents' tools of one name are two vectors.
 */
export function createVectorizeIndex(index: VectorizeIndex): VectorIndex {
  return {
    consistent: false,
    maxTopK: VECTORIZE_MAX_TOP_K,
    idOf: vectorIdFor,
    async upsert(agent, items) {
      for (let i = 0; i < items.length; i += VECTORIZE_BATCH) {
        const chunk = items.slice(i, i + VECTORIZE_BATCH);
        await index.upsert(
          chunk.map((it) => ({ id: vectorIdFor(agent, it.id), namespace: agent, values: Array.from(it.vector) })),
        );
      }
    },
    async remove(agent, tools) {
      const ids = tools.map((t) => vectorIdFor(agent, t));
      for (let i = 0; i < ids.length; i += VECTORIZE_BATCH) await index.deleteByIds(ids.slice(i, i + VECTORIZE_BATCH));
    },
    async query(agent, vector, topK) {
      const res = await index.query(Array.from(vector), {
        topK: Math.min(topK, VECTORIZE_MAX_TOP_K),
        namespace: agent,
      });
      return res.matches.map((m) => ({ id: m.id, score: m.score }));
    },
  };
}

/**
 * The Vectorize id of an agent's tool: `agent/tool` (agent ids hold no `/`), or `h:` + a 64-bit
 * FNV-1a hash of it when that is over 64 bytes. Computed, so any isolate maps ids back to tools.
 */
export function vectorIdFor(agent: string, tool: string): string {
  const id = `${agent}/${tool}`;
  if (new TextEncoder().encode(id).length <= VECTORIZE_ID_BYTES) return id;
  return `h:${fnv64Hex(id)}`;
}
