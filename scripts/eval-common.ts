/**
 * What the evaluation scripts share (scripts/eval*.ts): recall over labelled requests, the cold
 * routing index of ToolE's tools, MiniSearch as an outside baseline, and the figures the learning
 * report and its curve are made of. Each script imports this module, and none imports another's
 * entry point, so the scripts import one another in one direction only.
 */
import MiniSearch from 'minisearch';
import type { Embedder } from '../src/core/ports.ts';
import { buildRoutingIndex, embeddingText, type RoutingIndex } from '../src/core/routing.ts';
import { tokenize } from '../src/core/text.ts';
import type { EvalQuery, EvalTool } from './eval-data.ts';

/** How many tools a routed turn offers (docs/configuration.md `top_k` default): recall@5 is the figure that matters. */
export const TOP_K = 5;

/** A ranker answers the best names for a request, best first. */
export type Ranker = (text: string) => readonly string[];

export interface Recall {
  queries: number;
  at1: number;
  at5: number;
}

/** Counts recall@1 and recall@5 of one ranker over labelled requests, with a progress line on stderr. */
export function measureRecall(label: string, queries: readonly EvalQuery[], rank: Ranker): Recall {
  let at1 = 0;
  let at5 = 0;
  queries.forEach((q, i) => {
    const top = rank(q.text);
    if (top[0] === q.tool) at1++;
    if (top.slice(0, TOP_K).includes(q.tool)) at5++;
    if ((i + 1) % 2000 === 0 || i + 1 === queries.length)
      process.stderr.write(`\r${label}: ${i + 1}/${queries.length}   `);
  });
  process.stderr.write('\n');
  const n = Math.max(1, queries.length);
  return { queries: queries.length, at1: at1 / n, at5: at5 / n };
}

/** The embedding text of a ToolE tool registered cold: its description as the docstring, nothing else. */
export function coldEmbeddingText(tool: EvalTool): string {
  return embeddingText({
    name: tool.name,
    description: null,
    docstring: tool.description,
    parameters: {},
    examples: [],
  });
}

/** Embeds every tool and builds the routing index, as `/route` would after `PUT …/tools`. */
export async function buildColdIndex(tools: readonly EvalTool[], embedder: Embedder): Promise<RoutingIndex> {
  const texts = tools.map(coldEmbeddingText);
  const vectors = await embedder.embed(texts);
  return buildRoutingIndex(
    tools.map((t, i) => ({
      name: t.name,
      text: texts[i] ?? '',
      vector: vectors[i] ?? new Float32Array(embedder.dimensions),
    })),
  );
}

/**
 * MiniSearch as an outside BM25 baseline: out of the box (its own tokenizer, no stemming, BM25+),
 * and with our tokenizer, which checks our BM25 arithmetic against an independent implementation.
 */
export function miniSearchRanker(tools: readonly EvalTool[], ourTokenizer: boolean): Ranker {
  const options = ourTokenizer ? { tokenize, processTerm: (term: string) => term } : {};
  const search = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], ...options });
  search.addAll(tools.map((t) => ({ id: t.name, text: coldEmbeddingText(t) })));
  return (text) =>
    search
      .search(text)
      .slice(0, TOP_K)
      .map((r) => String(r.id));
}

/** Precision of what learning kept, against ToolE's labels (scripts/eval-quality.ts). */
export interface Precision {
  /** Share of learned examples labelled with their tool (1 when there are none). */
  examples: number;
  /** Share of kept "Not for" lines whose every request is labelled with the named tool (1 when none). */
  not_for: number;
  contradictions: number;
  /** Share of tools with a planted mistake whose notes name the failing argument. */
  note_recall: number;
  learned_examples: number;
  not_for_lines: number;
  planted_tools: number;
  /** Learned examples whose wording is not a ToolE wording (counted as wrong). */
  unlabelled_examples: number;
  /** Share of routing memory's wordings labelled with the tool that keeps them (1 when none; unlabelled count wrong). */
  memory: number;
  memory_wordings: number;
  /** Memory's wrong wordings (at most 50): the tool that keeps one, and the tools ToolE labels it with (none: no ToolE wording). */
  memory_wrong: { tool: string; text: string; labels: string[] }[];
}

/** One point of the learning curve: held-out R@5 (a sample) and precision after a round. */
export interface CurvePoint {
  round: number;
  at5: number;
  examples: number;
  not_for: number;
}
