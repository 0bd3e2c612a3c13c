/**
 * `npm run eval -- --ceiling`: how far learning examples can take routing at all. Each tool is
 * given, as learned examples, EVERY one of the first N training wordings its traffic draws from
 * (`--wordings N` of the learning simulation sees exactly these): no miss needed, nothing withdrawn,
 * no cap. The rows are built as apply builds them (embedding text, head + examples vector) and
 * ranked by `/route`'s own fused ranking, in process; beside it, BM25 over description + the same
 * wordings. Whatever a learning rule does, with N wordings per tool it cannot beat this ranking of
 * them, so the figure says whether a recall target is a matter of learning or of ranking.
 */
import { createHashEmbedder } from '../src/adapters/hash-embedder.ts';
import type { Embedder } from '../src/core/ports.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../src/core/lexical.ts';
import {
  buildRoutingIndex,
  DEFAULT_FUSION,
  EXAMPLE_WEIGHT,
  embeddingParts,
  embeddingText,
  rankTools,
  toolVector,
  type RoutingIndex,
} from '../src/core/routing.ts';
import { DEFAULT_SETTINGS } from '../src/schemas.ts';
import { measureRecall, type Recall } from './eval-common.ts';
import { planTraffic, type Plan } from './eval-traffic.ts';

/** Wordings per tool measured: the headline protocol's, the default `max_queries`, twice it, all. */
const COUNTS: (number | null)[] = [10, DEFAULT_SETTINGS.max_queries, 2 * DEFAULT_SETTINGS.max_queries, null];

export interface CeilingRow {
  /** Wordings per tool made examples (null: every training wording). */
  wordings: number | null;
  /** Examples per tool, on average. */
  examples: number;
  learned: Recall;
  bm25: Recall;
}

/** The measured wordings' vectors, embedded once. */
async function queryVectors(texts: readonly string[], embedder: Embedder): Promise<Map<string, Float32Array>> {
  const unique = [...new Set(texts)];
  const vectors = await embedder.embed(unique);
  return new Map(unique.map((t, i) => [t, vectors[i] ?? new Float32Array(embedder.dimensions)]));
}

/** The tools with the first `count` (null: all) wordings of their traffic as learned examples. */
function withWordings(plan: Plan, count: number | null) {
  const wordings = new Map<string, string[]>();
  for (const stream of plan.streams) {
    for (const q of stream.slice(0, count ?? stream.length))
      wordings.set(q.tool, [...new Set([...(wordings.get(q.tool) ?? []), q.text])]);
  }
  return plan.tools.map((t) => ({
    name: t.name,
    docstring: t.description,
    description: null,
    parameters: {},
    examples: (wordings.get(t.name) ?? []).map((text) => ({ text, source: 'learned' as const })),
  }));
}

/** Rows embedded as apply embeds them (head, examples), the row vector weighing examples `exampleWeight`. */
async function indexOf(
  tools: ReturnType<typeof withWordings>,
  embedder: Embedder,
  exampleWeight = EXAMPLE_WEIGHT,
  bm25 = DEFAULT_BM25,
): Promise<RoutingIndex> {
  const parts = tools.map(embeddingParts);
  const heads = await embedder.embed(parts.map((p) => p.head));
  const examples = await embedder.embed(parts.map((p) => p.examples ?? ''));
  const docs = tools.map((t, i) => ({
    name: t.name,
    text: embeddingText(t),
    vector: toolVector(
      heads[i] ?? new Float32Array(embedder.dimensions),
      parts[i]?.examples == null ? null : (examples[i] ?? null),
      exampleWeight,
    ),
  }));
  const index = buildRoutingIndex(docs);
  return bm25 === DEFAULT_BM25
    ? index
    : {
        ...index,
        lexical: buildLexicalIndex(
          docs.map((d) => ({ id: d.name, text: d.text })),
          bm25,
        ),
      };
}

const fusedRanker =
  (index: RoutingIndex, vectors: ReadonlyMap<string, Float32Array>, lexicalWeight = DEFAULT_FUSION.lexicalWeight) =>
  (text: string): string[] =>
    rankTools(index, { text, vector: vectors.get(text) ?? new Float32Array(index.dimensions) }, 5, undefined, {
      lexicalWeight,
    }).map((t) => t.name);

export async function runCeiling(split: 'held-out' | 'validation'): Promise<CeilingRow[]> {
  const plan = planTraffic(split);
  const embedder = createHashEmbedder();
  const vectors = await queryVectors(
    plan.measured.map((q) => q.text),
    embedder,
  );
  const rows: CeilingRow[] = [];
  for (const count of COUNTS) {
    const tools = withWordings(plan, count);
    const index = await indexOf(tools, embedder);
    const label = count === null ? 'all' : String(count);
    rows.push({
      wordings: count,
      examples: tools.reduce((n, t) => n + t.examples.length, 0) / Math.max(1, tools.length),
      learned: measureRecall(`ceiling ${label}: fused`, plan.measured, fusedRanker(index, vectors)),
      bm25: measureRecall(`ceiling ${label}: bm25`, plan.measured, (text) =>
        index.lexical.top(text, 5).map((h) => h.id),
      ),
    });
  }
  return rows;
}

/** One weighting of the ranking and its recall at the headline's 10 wordings per tool. */
export interface SweepRow {
  lexical_weight: number;
  example_weight: number;
  bm25_b: number;
  recall: Recall;
}

/**
 * The ranking's weights swept at 10 wordings per tool, on the VALIDATION carve only (the split
 * constants may be chosen on): the BM25 weight of the fusion, the examples' weight in a row's
 * vector, BM25's length normalisation `b`.
 */
export async function sweepCeiling(): Promise<SweepRow[]> {
  const plan = planTraffic('validation');
  const embedder = createHashEmbedder();
  const vectors = await queryVectors(
    plan.measured.map((q) => q.text),
    embedder,
  );
  const tools = withWordings(plan, 10);
  const out: SweepRow[] = [];
  for (const example_weight of [0.1, 0.25, 0.5, 1]) {
    for (const bm25_b of [0.3, 0.5, 0.75, 1]) {
      const index = await indexOf(tools, embedder, example_weight, { ...DEFAULT_BM25, b: bm25_b });
      for (const lexical_weight of [0.5, 0.7, 1, 1.5, 2]) {
        const label = `sweep lexical ${lexical_weight}, examples ${example_weight}, b ${bm25_b}`;
        const recall = measureRecall(label, plan.measured, fusedRanker(index, vectors, lexical_weight));
        out.push({ lexical_weight, example_weight, bm25_b, recall });
      }
    }
  }
  return out;
}

export function formatSweep(rows: readonly SweepRow[]): string {
  const sorted = [...rows].sort((a, b) => b.recall.at5 - a.recall.at5);
  const row = (r: SweepRow) =>
    `| ${r.lexical_weight} | ${r.example_weight} | ${r.bm25_b} | ${pct(r.recall.at1)} | ${pct(r.recall.at5)} |`;
  const defaults = rows.find(
    (r) =>
      r.lexical_weight === DEFAULT_FUSION.lexicalWeight &&
      r.example_weight === EXAMPLE_WEIGHT &&
      r.bm25_b === DEFAULT_BM25.b,
  );
  return [
    `${rows.length} weightings at 10 wordings per tool, validation carve: best three, the defaults, worst`,
    '| BM25 weight | example weight | BM25 b | R@1 | R@5 |',
    '|---:|---:|---:|---:|---:|',
    ...sorted.slice(0, 3).map(row),
    ...(defaults ? [`${row(defaults)} (defaults)`] : []),
    ...sorted.slice(-1).map(row),
  ].join('\n');
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

export function formatCeiling(split: string, rows: readonly CeilingRow[]): string {
  return [
    `every training wording an example on its tool (no miss needed, nothing withdrawn, no cap); ${split} wordings measured`,
    '| wordings per tool | examples per tool | fused R@1 | fused R@5 | BM25 R@5 |',
    '|---|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.wordings ?? 'all'} | ${r.examples.toFixed(1)} | ${pct(r.learned.at1)} | ${pct(r.learned.at5)} | ${pct(r.bm25.at5)} |`,
    ),
  ].join('\n');
}
