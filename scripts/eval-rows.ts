/**
 * `npx tsx scripts/eval-rows.ts FILE`: ranks the held-out half in process (`/route`'s fused ranking,
 * hash vectors) over a learning run's rows as `npm run eval -- --rows FILE` wrote them, and over the
 * same rows changed: memory emptied, memory's wordings of more than eight content words left out,
 * and every training wording of a tool in its memory as typed. It says whether what memory holds
 * or how routing ranks it caps the learned figure (docs/evaluation.md "What binds with every wording").
 */
import { readFileSync } from 'node:fs';
import { createHashEmbedder } from '../src/adapters/hash-embedder.ts';
import { type EmbeddedTool, rankTools } from '../src/core/routing.ts';
import { contentWords } from '../src/core/text.ts';
import { indexOf } from './eval-ceiling.ts';
import { TOP_K } from './eval-common.ts';
import { planTraffic, wordingsByTool } from './eval-traffic.ts';

type Row = Omit<EmbeddedTool, 'memory'> & { memory?: string[] };

const file = process.argv[2];
if (file === undefined) throw new Error('usage: npx tsx scripts/eval-rows.ts ROWS.json (from npm run eval -- --rows)');
const rows = JSON.parse(readFileSync(file, 'utf8')) as Row[];
const plan = planTraffic('held-out');
const embedder = createHashEmbedder();
const queries = await embedder.embed(plan.measured.map((q) => q.text));

/** Held-out R@5 over `tools` embedded as apply embeds a row (head, examples and memory). */
async function recallAt5(tools: readonly EmbeddedTool[]): Promise<number> {
  const index = await indexOf(tools, embedder);
  let hits = 0;
  plan.measured.forEach((q, i) => {
    const vector = queries[i] ?? new Float32Array(embedder.dimensions);
    if (rankTools(index, { text: q.text, vector }, TOP_K).some((t) => t.name === q.tool)) hits++;
  });
  return hits / plan.measured.length;
}

const training = wordingsByTool(plan.streams);
const withMemory = (texts: (row: Row) => readonly string[]): EmbeddedTool[] =>
  rows.map((r) => ({ ...r, memory: texts(r).map((text) => ({ text })) }));
const variants: [string, EmbeddedTool[]][] = [
  ['as learned', withMemory((r) => r.memory ?? [])],
  ['memory emptied', withMemory(() => [])],
  [
    'memory, wordings of at most 8 content words',
    withMemory((r) => (r.memory ?? []).filter((t) => contentWords(t).size <= 8)),
  ],
  ['every training wording in memory, as typed', withMemory((r) => training.get(r.name) ?? [])],
];
for (const [label, tools] of variants)
  console.log(`${label.padEnd(46)} R@5 ${(100 * (await recallAt5(tools))).toFixed(2)}%`);
