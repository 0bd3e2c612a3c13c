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
import { parseArgs } from 'node:util';
import { DEFAULT_FEATURES, createHashEmbedder } from '../src/adapters/hash-embedder.ts';
import type { Embedder } from '../src/core/ports.ts';
import { DEFAULT_BM25 } from '../src/core/lexical.ts';
import { DEFAULT_FUSION, rankTools, type RoutingIndex } from '../src/core/routing.ts';
import { compareScoring, formatCeiling, formatScoring, formatSweep, runCeiling, sweepCeiling } from './eval-ceiling.ts';
import { buildColdIndex, miniSearchRanker, measureRecall, type Ranker, type Recall, TOP_K } from './eval-common.ts';
import { type EvalQuery, type EvalTool, firstWordings, loadToolE, splitQueries } from './eval-data.ts';
import { learnMain } from './eval-learn.ts';
import { realisticMain } from './eval-realistic.ts';

/** The cold-routing target (docs/evaluation.md): the first wording of each tool ranks it in the top 5 for at least this share. */
const FIRST_WORDING_TARGET = 0.4;

/** Query vectors by text, embedded once up front (the embedder is deterministic). */
async function embedQueries(queries: readonly EvalQuery[], embedder: Embedder): Promise<Map<string, Float32Array>> {
  const texts = [...new Set(queries.map((q) => q.text))];
  const vectors = await embedder.embed(texts);
  return new Map(texts.map((t, i) => [t, vectors[i] ?? new Float32Array(embedder.dimensions)]));
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
      rows: { type: 'string' },
      curve: { type: 'boolean' },
      privacy: { type: 'string' },
    },
  });
  if (values.ceiling) {
    const split = values.validate ? 'validation' : 'held-out';
    const rows = await runCeiling(split);
    process.stdout.write(`${formatCeiling(split, rows)}\n`);
    const scoring = await compareScoring(split);
    process.stdout.write(`\n${formatScoring(split, scoring)}\n`);
    if (split === 'validation') process.stdout.write(`\n${formatSweep(await sweepCeiling())}\n`);
    if (split === 'held-out') {
      mkdirSync(new URL('../bench/', import.meta.url), { recursive: true });
      const out = { generated_at: new Date().toISOString(), split, rows, scoring };
      writeFileSync(new URL('../bench/eval-ceiling.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
      process.stderr.write('wrote bench/eval-ceiling.json\n');
    }
    return;
  }
  if (values.privacy !== undefined && values.agent !== 'realistic')
    throw new Error('--privacy is an option of the realistic agent (--agent realistic)');
  if (!values.cold && values.agent === 'realistic') {
    await realisticMain(values);
    return;
  }
  if (!values.cold) {
    await learnMain(values);
    return;
  }
  const report = await runCold(values.train ? 'training' : 'held-out');
  process.stdout.write(`${formatColdReport(report)}\n`);
  writeReport(report);
  if (!report.first_wording.pass) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
