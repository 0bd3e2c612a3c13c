import type { VectorIndex } from '../core/ports.ts';

/** Vectorize caps one upsert or delete call at 1,000 vectors. */
const VECTORIZE_BATCH = 1000;
/** Vectorize caps topK at 100 when values and metadata are not returned. */
const VECTORIZE_MAX_TOP_K = 100;
/** Vectorize ids are at most 64 bytes. */
const VECTORIZE_ID_BYTES = 64;

/**
 * Cloudflare Vectorize, one namespace per agent (docs/configuration.md). Eventually consistent: an upsert is
 * visible to queries after a few seconds, so re-checks read the vectors kept in D1 instead (docs/learning.md).
 * Ids are tool names; a name over 64 bytes is stored under a hash and resolved back on query.
 */
export function createVectorizeIndex(index: VectorizeIndex): VectorIndex {
  const longNames = new Map<string, string>();
  const idOf = (tool: string): string => {
    const id = vectorIdFor(tool);
    if (id !== tool) longNames.set(id, tool);
    return id;
  };
  return {
    consistent: false,
    async upsert(agent, items) {
      for (let i = 0; i < items.length; i += VECTORIZE_BATCH) {
        const chunk = items.slice(i, i + VECTORIZE_BATCH);
        await index.upsert(chunk.map((it) => ({ id: idOf(it.id), namespace: agent, values: Array.from(it.vector) })));
      }
    },
    async remove(agent, ids) {
      const all = ids.map(idOf);
      for (let i = 0; i < all.length; i += VECTORIZE_BATCH) await index.deleteByIds(all.slice(i, i + VECTORIZE_BATCH));
    },
    async query(agent, vector, topK) {
      const res = await index.query(Array.from(vector), {
        topK: Math.min(topK, VECTORIZE_MAX_TOP_K),
        namespace: agent,
      });
      return res.matches.map((m) => ({ id: longNames.get(m.id) ?? m.id, score: m.score }));
    },
  };
}

/** The Vectorize id of a tool: its name, or `h:` + a 64-bit FNV-1a hash when the name is too long. */
export function vectorIdFor(tool: string): string {
  if (new TextEncoder().encode(tool).length <= VECTORIZE_ID_BYTES) return tool;
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < tool.length; i++) {
    const c = tool.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x811c9dc5) >>> 0;
  }
  return `h:${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`;
}
