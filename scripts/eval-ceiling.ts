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
  type EmbeddedTool,
  embeddingParts,
  embeddingText,
  lexicalShare,
  rankTools,
  toolVector,
  type RoutingIndex,
  vectorScores,
} from '../src/core/routing.ts';
import { createLogMasker } from '../src/core/log-masker.ts';
import type { TurnRecord } from '../src/core/records.ts';
import { withoutPlaceholders } from '../src/core/scrub.ts';
import { tokenize } from '../src/core/text.ts';
import { DEFAULT_SETTINGS } from '../src/schemas.ts';
import { measureRecall, type Recall } from './eval-common.ts';
import { planTraffic, type Plan } from './eval-traffic.ts';

/**
 * Wordings per tool measured: the budgets of the routing memory sweep (2, 5, the headline protocol's
 * 10, the default `max_queries`, twice it, all).
 */
const COUNTS: (number | null)[] = [2, 5, 10, DEFAULT_SETTINGS.max_queries, 2 * DEFAULT_SETTINGS.max_queries, null];

export interface CeilingRow {
  /** Wordings per tool made examples (null: every training wording). */
  wordings: number | null;
  /** Examples per tool, on average. */
  examples: number;
  learned: Recall;
  bm25: Recall;
  /**
   * The same wordings after the privacy rule, as learning would keep them: each wording its own
   * conversation, so a word no other wording of the toolbox uses (a rare token) is masked and
   * dropped. Learning may not keep more than this; BM25 over these is the fair peer.
   */
  masked: Recall;
  masked_bm25: Recall;
  /** Wordings the privacy rule changed, of all wordings given. */
  masked_wordings: number;
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

/**
 * The tools' wordings after the privacy rule as a review applies it to a log of these requests
 * alone (each wording its own conversation, `min_conversations` of the defaults): rare tokens
 * masked, placeholders dropped, a wording left with fewer than two words not kept.
 */
function masked(tools: ReturnType<typeof withWordings>): { tools: ReturnType<typeof withWordings>; changed: number } {
  const turns: TurnRecord[] = tools.flatMap((t) =>
    t.examples.map((e, i) => ({
      seq: 0,
      turn_id: `${t.name}:${i}`,
      conversation_id: `${t.name}:${i}`,
      request: e.text,
      routed: true,
      offered: [],
      created_at: '',
    })),
  );
  const masker = createLogMasker(
    { turns, calls: [] },
    tools.map((t) => ({ name: t.name, description: t.docstring, parameters: t.parameters })),
    DEFAULT_SETTINGS.min_conversations,
  );
  let changed = 0;
  const out = tools.map((t) => ({
    ...t,
    examples: t.examples.flatMap((e) => {
      const text = withoutPlaceholders(masker.mask(e.text, t.name, []));
      if (text !== e.text) changed++;
      return tokenize(text).length >= 2 ? [{ ...e, text }] : [];
    }),
  }));
  return { tools: out, changed };
}

/** Rows embedded as apply embeds them (head, examples), the row vector weighing examples `exampleWeight`. */
export async function indexOf(
  tools: readonly EmbeddedTool[],
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

const bm25Ranker =
  (index: RoutingIndex) =>
  (text: string): string[] =>
    index.lexical.top(text, 5).map((h) => h.id);

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
    const privacy = masked(tools);
    const maskedIndex = await indexOf(privacy.tools, embedder);
    rows.push({
      wordings: count,
      examples: tools.reduce((n, t) => n + t.examples.length, 0) / Math.max(1, tools.length),
      learned: measureRecall(`ceiling ${label}: fused`, plan.measured, fusedRanker(index, vectors)),
      bm25: measureRecall(`ceiling ${label}: bm25`, plan.measured, bm25Ranker(index)),
      masked: measureRecall(`ceiling ${label}, privacy rule: fused`, plan.measured, fusedRanker(maskedIndex, vectors)),
      masked_bm25: measureRecall(`ceiling ${label}, privacy rule: bm25`, plan.measured, bm25Ranker(maskedIndex)),
      masked_wordings: privacy.changed,
    });
  }
  return rows;
}

/** One way of scoring memory's wordings, at one budget, and its recall. */
export interface ScoringRow {
  wordings: number | null;
  /** The wordings after the privacy rule (as the ceiling's masked columns). */
  privacy: boolean;
  scoring: string;
  recall: Recall;
}

/** Budgets the per-wording comparison is measured at: the headline protocol's, twice the default cap, all. */
const SCORING_COUNTS: (number | null)[] = [10, 2 * DEFAULT_SETTINGS.max_queries, null];
/** How much the per-wording score weighs beside a document's fused score. */
const WORDING_WEIGHTS = [0.5, 1, 2];

/**
 * Per-wording scoring against one document per tool. Each wording is scored on its own as `/route`
 * scores a row (cosine of hash vectors + the fusion's weight × BM25 over the wordings as documents,
 * divided by the query's best), and a tool gets the best of its wordings, or the mean of its best
 * two, times a weight, added to either its whole document's fused score (examples inside) or its
 * head's alone (examples only as separate wordings).
 */
export async function compareScoring(split: 'held-out' | 'validation'): Promise<ScoringRow[]> {
  const plan = planTraffic(split);
  const embedder = createHashEmbedder();
  const queries = plan.measured;
  const queryVectors = await embedder.embed(queries.map((q) => q.text));
  const out: ScoringRow[] = [];
  for (const count of SCORING_COUNTS) {
    for (const privacy of [false, true]) {
      const given = withWordings(plan, count);
      const tools = privacy ? masked(given).tools : given;
      const whole = await indexOf(tools, embedder);
      const heads = await indexOf(
        tools.map((t) => ({ ...t, examples: [] })),
        embedder,
      );
      const owners = tools.flatMap((t, i) => t.examples.map(() => i));
      const texts = tools.flatMap((t) => t.examples.map((e) => e.text));
      const wordingVectors = await embedder.embed(texts);
      const wordings = buildRoutingIndex(
        texts.map((text, j) => ({
          name: String(j),
          text,
          vector: wordingVectors[j] ?? new Float32Array(embedder.dimensions),
        })),
        new Map(),
      );
      const hits = new Map<string, { at1: number; at5: number }>();
      const label = `${count === null ? 'all' : String(count)}${privacy ? ', privacy rule' : ''}`;
      queries.forEach((q, qi) => {
        const vector = queryVectors[qi] ?? new Float32Array(embedder.dimensions);
        const perWording = fused(wordings, q.text, vector);
        const best = new Float64Array(tools.length).fill(Number.NEGATIVE_INFINITY);
        const second = new Float64Array(tools.length).fill(Number.NEGATIVE_INFINITY);
        perWording.forEach((score, j) => {
          const t = owners[j] ?? 0;
          if (score > (best[t] ?? 0)) {
            second[t] = best[t] ?? 0;
            best[t] = score;
          } else if (score > (second[t] ?? 0)) second[t] = score;
        });
        const topWording = (t: number): number => (Number.isFinite(best[t]) ? (best[t] ?? 0) : 0);
        const topTwo = (t: number): number =>
          (topWording(t) + (Number.isFinite(second[t]) ? (second[t] ?? 0) : topWording(t))) / 2;
        const documents = { whole: fused(whole, q.text, vector), head: fused(heads, q.text, vector) };
        const truth = tools.findIndex((t) => t.name === q.tool);
        const count = (name: string, score: (t: number) => number): void => {
          let above = 0;
          const mine = score(truth);
          for (let t = 0; t < tools.length; t++) if (score(t) > mine) above++;
          const h = hits.get(name) ?? { at1: 0, at5: 0 };
          if (above === 0) h.at1++;
          if (above < 5) h.at5++;
          hits.set(name, h);
        };
        count('one document per tool (today)', (t) => documents.whole[t] ?? 0);
        for (const w of WORDING_WEIGHTS) {
          count(`document + ${w} × best wording`, (t) => (documents.whole[t] ?? 0) + w * topWording(t));
          count(`document + ${w} × mean of best two`, (t) => (documents.whole[t] ?? 0) + w * topTwo(t));
          count(`head + ${w} × best wording`, (t) => (documents.head[t] ?? 0) + w * topWording(t));
          count(`head + ${w} × mean of best two`, (t) => (documents.head[t] ?? 0) + w * topTwo(t));
        }
        if ((qi + 1) % 2000 === 0 || qi + 1 === queries.length)
          process.stderr.write(`\rscoring ${label}: ${qi + 1}/${queries.length}   `);
      });
      process.stderr.write('\n');
      const n = Math.max(1, queries.length);
      for (const [scoring, h] of hits)
        out.push({
          wordings: count,
          privacy,
          scoring,
          recall: { queries: queries.length, at1: h.at1 / n, at5: h.at5 / n },
        });
    }
  }
  return out;
}

/** `/route`'s fused score of every row of an index (no cut to k): cosine + weight × BM25 ÷ the best BM25. */
function fused(index: RoutingIndex, text: string, vector: Float32Array): Float64Array {
  const scores = vectorScores(index, vector);
  for (const [p, s] of lexicalShare(index, text)) scores[p] = (scores[p] ?? 0) + s;
  return scores;
}

export function formatScoring(split: string, rows: readonly ScoringRow[]): string {
  const budgets = [...new Set(rows.map((r) => r.wordings))];
  const lines = [
    `per-wording scoring against one document per tool (every training wording of N given); ${split} wordings measured`,
    '| wordings per tool | scoring | R@1 | R@5 |',
    '|---|---|---:|---:|',
  ];
  for (const budget of budgets)
    for (const privacy of [false, true]) {
      const mine = rows.filter((r) => r.wordings === budget && r.privacy === privacy);
      const today = mine.find((r) => r.scoring.endsWith('(today)'));
      const best = [...mine].sort((a, b) => b.recall.at5 - a.recall.at5).slice(0, 3);
      for (const r of today && !best.includes(today) ? [today, ...best] : best)
        lines.push(
          `| ${budget ?? 'all'}${privacy ? ', privacy rule' : ''} | ${r.scoring} | ${pct(r.recall.at1)} | ${pct(r.recall.at5)} |`,
        );
    }
  return lines.join('\n');
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
    '| wordings per tool | examples per tool | fused R@1 | fused R@5 | BM25 R@5 | privacy rule: fused R@5 | privacy rule: BM25 R@5 | wordings masked |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.wordings ?? 'all'} | ${r.examples.toFixed(1)} | ${pct(r.learned.at1)} | ${pct(r.learned.at5)} | ${pct(r.bm25.at5)} | ${pct(r.masked.at5)} | ${pct(r.masked_bm25.at5)} | ${r.masked_wordings} |`,
    ),
  ].join('\n');
}
