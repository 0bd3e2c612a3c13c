/**
 * `npm run eval:companions`: does offering the first tool's companion (src/core/companions.ts) put
 * every tool a multi-tool request needs among the 5 offered (COMP@5), and what does it cost requests
 * that need one tool (R@5)? In process, with `/route`'s own ranking and the hash embedder.
 *
 * The ToolE tools are paired at random (seeded), each tool with one partner, as an agent's users
 * keep asking for the same things together (a flight and a hotel). Each tool's routing memory holds
 * its first 10 training wordings, as served alone; each pair also served JOINED training requests
 * together ("<wording of a> and <wording of b>"), remembered by both, as the service remembers a
 * request served together. Measured on the held-out half (or, with `--validation`, the validation
 * carve): joined held-out wordings of every pair (COMP@5), and the single held-out wordings (R@5),
 * with the companion rule and without (the same memory, companions not derived). A control run
 * joins each training request with a different random partner, so no pair recurs and no companion
 * is derived: the rule must change nothing there.
 */
import { createHashEmbedder } from '../src/adapters/hash-embedder.ts';
import {
  buildRoutingIndex,
  rankTools,
  routingDoc,
  type RoutingIndex,
  toolVector,
  embeddingParts,
} from '../src/core/routing.ts';
import { measureRecall, TOP_K } from './eval-common.ts';
import { mulberry32, shuffled, type EvalQuery } from './eval-data.ts';
import { planTraffic } from './eval-traffic.ts';

/** Wordings each tool served alone, as the headline protocol's 10 per tool. */
const ALONE = 10;
/** Joined requests each pair served together during training, and joined requests measured per pair. */
const JOINED = [2, 3, 5];
const MEASURED_PER_PAIR = 5;

const args = process.argv.slice(2);
const split = args.includes('--validation') ? 'validation' : 'held-out';
const seed = Number(args[args.indexOf('--seed') + 1] ?? 1) || 1;

const plan = planTraffic(split);
const embedder = createHashEmbedder();
const random = mulberry32(seed);
const names = plan.tools.map((t) => t.name);
const order = shuffled(names, random);
const partner = new Map<string, string>();
for (let i = 0; i + 1 < order.length; i += 2) {
  partner.set(order[i] as string, order[i + 1] as string);
  partner.set(order[i + 1] as string, order[i] as string);
}
const training = new Map(plan.streams.map((s) => [s[0]?.tool ?? '', s.map((q) => q.text)]));
const measuredBy = new Map<string, string[]>();
for (const q of plan.measured) measuredBy.set(q.tool, [...(measuredBy.get(q.tool) ?? []), q.text]);

const join = (a: string, b: string) => `${a.replace(/[.?!]+$/, '')} and ${b.charAt(0).toLowerCase()}${b.slice(1)}`;

/** Memory per tool: ALONE wordings, plus `joined` requests with its partner (or, as control, random partners). */
function memories(joined: number, control: boolean): Map<string, string[]> {
  const out = new Map(names.map((n) => [n, (training.get(n) ?? []).slice(0, ALONE)]));
  const pick = mulberry32(seed + 7919 * joined + (control ? 1 : 0));
  for (const a of names) {
    const b = partner.get(a);
    if (b === undefined || a > b) continue;
    for (let i = 0; i < joined; i++) {
      const mate = control ? (names[Math.floor(pick() * names.length)] as string) : b;
      if (mate === a) continue;
      const wa = training.get(a)?.[ALONE + i] ?? training.get(a)?.[i];
      const wb = training.get(mate)?.[ALONE + i] ?? training.get(mate)?.[i];
      if (wa === undefined || wb === undefined) continue;
      const text = join(wa, wb);
      out.get(a)?.push(text);
      out.get(mate)?.push(text);
    }
  }
  return out;
}

async function indexOf(memory: Map<string, string[]>, companions: boolean): Promise<RoutingIndex> {
  const tools = plan.tools.map((t) => ({
    name: t.name,
    docstring: t.description,
    description: null,
    parameters: {},
    examples: [],
    memory: (memory.get(t.name) ?? []).map((text) => ({ text })),
  }));
  const parts = tools.map(embeddingParts);
  const heads = await embedder.embed(parts.map((p) => p.head));
  const examples = await embedder.embed(parts.map((p) => p.examples ?? ''));
  return buildRoutingIndex(
    tools.map((t, i) => {
      const doc = routingDoc(
        t,
        toolVector(
          heads[i] ?? new Float32Array(embedder.dimensions),
          parts[i]?.examples == null ? null : (examples[i] ?? null),
        ),
      );
      return companions ? doc : { ...doc, memory: [] };
    }),
  );
}

/** Held-out joined requests: the i-th measured wordings of a pair joined, at most MEASURED_PER_PAIR. */
const multi: { text: string; tools: [string, string] }[] = [];
for (const a of names) {
  const b = partner.get(a);
  if (b === undefined || a > b) continue;
  const wa = measuredBy.get(a) ?? [];
  const wb = measuredBy.get(b) ?? [];
  for (let i = 0; i < Math.min(MEASURED_PER_PAIR, wa.length, wb.length); i++)
    multi.push({ text: join(wa[i] as string, wb[i] as string), tools: [a, b] });
}

const texts = [...new Set([...plan.measured.map((q) => q.text), ...multi.map((m) => m.text)])];
const vectors = new Map((await embedder.embed(texts)).map((v, i) => [texts[i] as string, v]));
const ranker = (index: RoutingIndex) => (text: string) =>
  rankTools(index, { text, vector: vectors.get(text) ?? new Float32Array(index.dimensions) }, TOP_K).map((t) => t.name);

function compAt5(index: RoutingIndex): number {
  const rank = ranker(index);
  let both = 0;
  for (const m of multi) {
    const top = rank(m.text);
    if (m.tools.every((t) => top.includes(t))) both++;
  }
  return both / Math.max(1, multi.length);
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const rows: string[] = [];
for (const control of [false, true]) {
  for (const joined of JOINED) {
    const memory = memories(joined, control);
    const row: string[] = [
      control ? `${joined} joined, random partners (control)` : `${joined} joined with the partner`,
    ];
    for (const companions of [false, true]) {
      const index = await indexOf(memory, companions);
      const single = measureRecall(
        `${row[0]}, companions ${companions ? 'on' : 'off'}`,
        plan.measured as EvalQuery[],
        ranker(index),
      );
      row.push(pct(compAt5(index)), pct(single.at5));
      if (companions) row.push(String(index.companions.size));
    }
    rows.push(`| ${row.join(' | ')} |`);
  }
}
console.log(
  [
    `companions, ${split} split, seed ${seed}: ${names.length} tools in ${names.length >> 1} pairs, ${ALONE} wordings alone per tool, ${multi.length} joined requests measured, ${plan.measured.length} single`,
    '| training | COMP@5 off | R@5 off | COMP@5 on | R@5 on | tools with a companion |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n'),
);
