/**
 * Embeds tool rows (docs/learning.md): each row's head and, when it has any, its example requests are two
 * texts of ONE embedder call for all rows, combined by `toolVector` (src/core/routing.ts). Every
 * place that writes or re-checks a row's vector goes through here — registration, apply, the
 * displacement re-check, review ranks, a snapshot's re-embedding of stale rows — so `/route` and
 * the checks that predict it rank with the same vectors.
 */
import { embeddingParts, toolVector, type EmbeddedTool } from '../core/routing.ts';
import type { Embedder } from '../core/ports.ts';
import { ApiError } from '../errors.ts';

/** The vectors of `tools`, in order; a provider answering the wrong count is a 502. */
export async function embedTools(embedder: Embedder, tools: readonly EmbeddedTool[]): Promise<Float32Array[]> {
  const parts = tools.map(embeddingParts);
  const texts: string[] = [];
  const slots = parts.map((p) => {
    const head = texts.push(p.head) - 1;
    const examples = p.examples === null ? null : texts.push(p.examples) - 1;
    return { head, examples };
  });
  const vectors = texts.length > 0 ? await embedder.embed(texts) : [];
  if (vectors.length !== texts.length)
    throw new ApiError('upstream_error', `embedder returned ${vectors.length} vectors for ${texts.length} texts`);
  return slots.map(({ head, examples }) => {
    const h = vectors[head] ?? new Float32Array(embedder.dimensions);
    return toolVector(h, examples === null ? null : (vectors[examples] ?? null));
  });
}
