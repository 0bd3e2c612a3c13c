/**
 * Offline evaluation on ToolE (`npm run eval -- --cold`).
 *
 * --cold     cold routing: the 199 tools registered with their ToolE description only (no examples,
 *            no learning), held-out wordings routed by hash vectors alone, BM25 alone (ours and
 *            MiniSearch's as an outside baseline) and the fused ranking of src/core/routing.ts.
 * --train    report the training split instead (printed, not written): the ONLY split the
 *            constants (hash features, dimensions, fusion weight) may be chosen on.
 * (no mode)  the learning simulation through the real Worker (scripts/eval-learn.ts): held-out
 *            recall before and after learning, bench/eval-learn.json. `--validate` runs it on a
 *            validation carve of the training split instead (printed, not written).
 * --ceiling  what the learning simulation could reach at most: every training wording of N per
 *            tool an example on its tool, ranked in process (scripts/eval-ceiling.ts),
 *            bench/eval-ceiling.json; with `--validate` on the validation carve, and the ranking's
 *            weights swept there (printed only).
 *
 * Progress goes to stderr, the table to stdout, the figures to bench/eval-cold.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import MiniSearch from 'minisearch';
import { DEFAULT_FEATURES, createHashEmbedder } from '../src/adapters/hash-embedder.ts';
import type { Embedder } from '../src/core/ports.ts';
import { DEFAULT_BM25 } from '../src/core/lexical.ts';
import { tokenize } from '../src/core/text.ts';
import { DEFAULT_FUSION, buildRoutingIndex, embeddingText, rankTools, type RoutingIndex } from '../src/core/routing.ts';
import { type EvalQuery, type EvalTool, firstWordings, loadToolE, splitQueries } from './eval-data.ts';

/** How many tools a routed turn offers (docs/configuration.md `top_k` default): recall@5 is the figure that matters. */
const TOP_K = 5;
/** The cold-routing target (docs/evaluation.md): the first wording of each tool ranks it in the top 5 for at least this share. */
const FIRST_WORDING_TARGET = 0.4;

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

/** Query vectors by text, embedded once up front (the embedder is deterministic). */
async function embedQueries(queries: readonly EvalQuery[], embedder: Embedder): Promise<Map<string, Float32Array>> {
  const texts = [...new Set(queries.map((q) => q.text))];
  const vectors = await embedder.embed(texts);
  return new Map(texts.map((t, i) => [t, vectors[i] ?? new Float32Array(embedder.dimensions)]));
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

/** The cold rankers, by label. Hash alone = the fused ranking with BM25 weighted 0 (same ties). */
function coldRankers(
  index: RoutingIndex,
  tools: readonly EvalTool[],
  vectors: ReadonlyMap<string, Float32Array>,
): Record<string, Ranker> {
  const query = (text: string) => ({ text, vector: vectors.get(text) ?? new Float32Array(index.dimensions) });
  const names = (ranked: readonly { name: string }[]) => ranked.map((t) => t.name);
  return {
    hash: (text) => names(rankTools(index, query(text), TOP_K, undefined, { lexicalWeight: 0 })),
    bm25: (text) => index.lexical.top(text, TOP_K).map((h) => h.id),
    minisearch: miniSearchRanker(tools, false),
    'minisearch+tok': miniSearchRanker(tools, true),
    fused: (text) => names(rankTools(index, query(text), TOP_K)),
  };
}

export interface ColdReport {
  split: 'held-out' | 'training';
  tools: number;
  config: {
    embedder: string;
    features: typeof DEFAULT_FEATURES;
    bm25: typeof DEFAULT_BM25;
    fusion: typeof DEFAULT_FUSION;
  };
  recall: Record<string, Recall>;
  first_wording: { tools: number; top5_share: Record<string, number>; target: number; pass: boolean };
}

/** Runs the cold evaluation on one split and returns the report. */
export async function runCold(split: 'held-out' | 'training'): Promise<ColdReport> {
  const data = loadToolE();
  const halves = splitQueries(data.queries);
  const queries = split === 'training' ? halves.training : halves.heldOut;
  const first = firstWordings(data.queries);
  const embedder = createHashEmbedder();
  process.stderr.write(`embedding ${data.tools.length} tools and ${queries.length + first.length} requests…\n`);
  const index = await buildColdIndex(data.tools, embedder);
  const vectors = await embedQueries([...queries, ...first], embedder);
  const rankers = coldRankers(index, data.tools, vectors);
  const recall: Record<string, Recall> = {};
  const firstShare: Record<string, number> = {};
  for (const [label, rank] of Object.entries(rankers)) {
    recall[label] = measureRecall(`${label} (${split})`, queries, rank);
    firstShare[label] = measureRecall(`${label} (first wordings)`, first, rank).at5;
  }
  const fusedShare = firstShare.fused ?? 0;
  return {
    split,
    tools: data.tools.length,
    config: { embedder: embedder.id, features: DEFAULT_FEATURES, bm25: DEFAULT_BM25, fusion: DEFAULT_FUSION },
    recall,
    first_wording: {
      tools: first.length,
      top5_share: firstShare,
      target: FIRST_WORDING_TARGET,
      pass: fusedShare >= FIRST_WORDING_TARGET,
    },
  };
}

/** The stdout table: one row per ranker. */
export function formatColdReport(report: ColdReport): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(8);
  const lines = [
    `ToolE cold routing, ${report.tools} tools, ${report.split} split (${report.config.embedder}, fusion weight ${report.config.fusion.lexicalWeight})`,
    `${'ranker'.padEnd(16)}${'queries'.padStart(8)}${'R@1'.padStart(8)}${'R@5'.padStart(8)}${'first@5'.padStart(9)}`,
  ];
  for (const [label, r] of Object.entries(report.recall)) {
    lines.push(
      `${label.padEnd(16)}${String(r.queries).padStart(8)}${pct(r.at1)}${pct(r.at5)} ${pct(report.first_wording.top5_share[label] ?? 0)}`,
    );
  }
  const fw = report.first_wording;
  lines.push(
    `first wording of each tool in top 5 (fused): ${pct(fw.top5_share.fused ?? 0).trim()} of ${fw.tools} tools — target ≥ ${100 * fw.target}%: ${fw.pass ? 'PASS' : 'FAIL'}`,
  );
  return lines.join('\n');
}

/** Held-out figures only are kept (the data set's rule); a training run just prints. */
function writeReport(report: ColdReport): void {
  if (report.split !== 'held-out') return;
  const dir = new URL('../bench/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const rounded = (_key: string, v: unknown) => (typeof v === 'number' ? Math.round(v * 1e4) / 1e4 : v);
  writeFileSync(new URL('eval-cold.json', dir), `${JSON.stringify(report, rounded, 2)}\n`);
  process.stderr.write('wrote bench/eval-cold.json\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cold: { type: 'boolean' },
      ceiling: { type: 'boolean' },
      train: { type: 'boolean' },
      validate: { type: 'boolean' },
      'per-round': { type: 'string' },
      config: { type: 'string' },
      agent: { type: 'string' },
      wordings: { type: 'string' },
      passes: { type: 'string' },
      seed: { type: 'string' },
      seeds: { type: 'string' },
      labels: { type: 'string' },
      curve: { type: 'boolean' },
      privacy: { type: 'string' },
    },
  });
  if (values.ceiling) {
    const { runCeiling, formatCeiling, sweepCeiling, formatSweep } = await import('./eval-ceiling.ts');
    const split = values.validate ? 'validation' : 'held-out';
    const rows = await runCeiling(split);
    process.stdout.write(`${formatCeiling(split, rows)}\n`);
    if (split === 'validation') process.stdout.write(`\n${formatSweep(await sweepCeiling())}\n`);
    if (split === 'held-out') {
      mkdirSync(new URL('../bench/', import.meta.url), { recursive: true });
      const out = { generated_at: new Date().toISOString(), split, rows };
      writeFileSync(new URL('../bench/eval-ceiling.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
      process.stderr.write('wrote bench/eval-ceiling.json\n');
    }
    return;
  }
  if (values.privacy !== undefined && values.agent !== 'realistic')
    throw new Error('--privacy is an option of the realistic agent (--agent realistic)');
  if (!values.cold && values.agent === 'realistic') {
    const { realisticMain } = await import('./eval-realistic.ts');
    await realisticMain(values);
    return;
  }
  if (!values.cold) {
    // Imported here, not at the top: eval-learn.ts imports this module's helpers.
    const { learnMain } = await import('./eval-learn.ts');
    await learnMain(values);
    return;
  }
  const report = await runCold(values.train ? 'training' : 'held-out');
  process.stdout.write(`${formatColdReport(report)}\n`);
  writeReport(report);
  if (!report.first_wording.pass) process.exitCode = 1;
}

// Run only when executed (`tsx scripts/eval.ts`), so the learning mode can import these helpers.
// Not a top-level await: the learning mode's module imports this one, and an import cycle through
// a module still awaiting at top level never settles.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
