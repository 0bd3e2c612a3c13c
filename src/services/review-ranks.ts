/**
 * `ranks` of a revision (docs/api.md Revision): for each missed request it rests on, where routing
 * ranks the tool now and where it would rank it with the proposed examples. Computed from the stored
 * vectors (src/services/route-serving.ts `routingDocs`) with the exact in-process ranking, so it never
 * waits for a vector index to catch up; only the changed row and the requests are embedded.
 */
import { mergeExamples } from '../core/displacement.ts';
import type { StoredTool } from '../core/records.ts';
import { buildRoutingIndex, routingDoc, rankTools, type RoutingDoc, type RoutingIndex } from '../core/routing.ts';
import { withoutPlaceholders } from '../core/scrub.ts';
import type { Services } from '../env.ts';
import type { Evidence, Revision, Settings } from '../schemas.ts';
import { embedTools } from './tool-vectors.ts';

/** The agent's toolbox as routing sees it now: built once per review and shared by every tool. */
export interface Toolbox {
  docs: RoutingDoc[];
  index: RoutingIndex;
}

/** The routing index of the agent's documents as they are now. */
export function toolboxOf(docs: RoutingDoc[]): Toolbox {
  return { docs, index: buildRoutingIndex(docs) };
}

/**
 * Rank before and after for each missed request. The request is ranked as the evidence quotes it,
 * argument values removed (the stored text never holds them). Ranks run over the whole toolbox, so
 * a tool outside the offered `top_k` still has a rank; null only when the tool is not in it.
 */
export async function rankChanges(
  svc: Services,
  box: Toolbox,
  tool: StoredTool,
  queriesAdded: readonly string[],
  missed: readonly Evidence[],
  settings: Pick<Settings, 'max_queries'>,
): Promise<Revision['ranks']> {
  if (missed.length === 0) return [];
  const texts = missed.map((e) => withoutPlaceholders(e.text));
  const examples = mergeExamples(
    tool.examples,
    queriesAdded.map((text) => ({ text, revision_id: '' })),
    settings.max_queries,
  ).examples;
  const changed = { ...tool, examples };
  const vectors = await svc.embedder.embed(texts);
  const [changedVector] = queriesAdded.length > 0 ? await embedTools(svc.embedder, [changed]) : [];
  const after = changedVector
    ? buildRoutingIndex(box.docs.map((d) => (d.name === tool.name ? routingDoc(changed, changedVector) : d)))
    : box.index;
  return missed.map((e, i) => {
    const query = { text: texts[i] ?? '', vector: vectors[i] ?? new Float32Array(box.index.dimensions) };
    return { request: e.text, before: rankOf(box.index, query, tool.name), after: rankOf(after, query, tool.name) };
  });
}

function rankOf(index: RoutingIndex, query: { text: string; vector: Float32Array }, name: string): number | null {
  return rankTools(index, query, index.names.length).find((t) => t.name === name)?.rank ?? null;
}
