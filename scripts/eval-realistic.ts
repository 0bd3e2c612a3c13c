/**
 * The learning evaluation with the realistic agent (`npm run eval -- --agent realistic --seed N`,
 * or `--seeds 1,2,3`): the ToolE tools plus the generated lookup and notification tools
 * (scripts/eval-realistic-data.ts) registered on a real Worker, 10 training wordings per ToolE tool,
 * 3 passes, the traffic of scripts/eval-realistic-agent.ts, reviews with `auto_apply` after each
 * round; then the measures of scripts/eval-realistic-measure.ts and held-out R@5 (ToolE wordings
 * only) cold → learned. Writes bench/eval-learn-realistic-10-seed<N>.json per seed and, for
 * bench/eval-learn-realistic-10.json (the figures of every seed measured so far). `--labels DIR` also
 * writes each seed's labels, generated values and the rows it ended with there (large; not kept in the repository).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { type BenchWorker, startWorker } from './bench/worker.ts';
import { type EvalQuery, loadToolE } from './eval-data.ts';
import { api, postCalls, progressBar, type Routed, TRAFFIC_CONCURRENCY } from './eval-http.ts';
import { AGENT_EVAL_SETTINGS, CURVE_SAMPLE, measure, reviewRound, seededSample } from './eval-learn.ts';
import { PLANTED_ARGUMENT, RealisticAgent } from './eval-realistic-agent.ts';
import { GENERATED_TOOLS, TOOLE_PROPERTIES, ValueBook } from './eval-realistic-data.ts';
import { type Learned, type LearnedRevision, type LearnedRow, measureRealistic } from './eval-realistic-measure.ts';
import type { RealisticQuality } from './eval-realistic-measure.ts';
import { planTraffic } from './eval-traffic.ts';
import type { Recall } from './eval-common.ts';

/** The protocol: distinct training wordings per ToolE tool, passes over them (as the fallible agent's headline). */
export const WORDINGS = 10;
export const PASSES = 3;
/** Generated customers per seed: each comes back in a few conversations of a run. */
export const PERSONAS = 1500;
const AGENT = 'eval-learn';
/** Leaks printed on stdout and kept in the report JSON; `--labels` writes them all. */
const MAX_LEAKS_PRINTED = 200;
const MAX_LEAKS_KEPT = 200;

export interface RealisticReport {
  generated_at: string;
  seed: number;
  split: 'held-out';
  setup: {
    toole_tools: number;
    generated_tools: string[];
    wordings: number;
    passes: number;
    personas: number;
    embedder: string;
    model: string;
    spec_defaults: boolean;
    /** The privacy rule the Worker ran (`--privacy`). */
    privacy: PrivacyMode;
    agent_config: Record<string, number | boolean>;
    measured_wordings: number;
  };
  recall: { cold: Recall; learned: Recall };
  rounds: {
    round: number;
    runs: number;
    conversations: number;
    offered_share: number;
    model_calls: number;
    revisions: number;
    seconds: number;
    /** Routing the round's conversations (the agent waits for each answer), and its reviews. */
    traffic_seconds: number;
    review_seconds: number;
    /** Review requests sent again (eval-http.ts `review`): 0 in a run whose figures the seed fixes. */
    review_retries: number;
  }[];
  curve: { round: number; at5: number | null; examples: number; not_for: number }[];
  quality: RealisticQuality;
  wall_seconds: number;
}

/** Registers the ToolE tools (every kind of value as an optional argument; the planted argument where planted) and the generated ones. */
async function register(
  w: BenchWorker,
  agent: string,
  tools: readonly { name: string; description: string }[],
  planted: (t: string) => boolean,
): Promise<void> {
  const defs = [
    ...tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: {
        type: 'object',
        properties: { ...TOOLE_PROPERTIES, ...(planted(t.name) ? { [PLANTED_ARGUMENT]: { type: 'string' } } : {}) },
      },
    })),
    ...GENERATED_TOOLS.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: { type: 'object', properties: t.properties },
    })),
  ];
  await api(w, 'PUT', `/v1/agents/${agent}/tools`, { tools: defs, augment: false });
}

/** What the Worker learned: its rows now, and every revision and refusal the reviews answered. */
async function learnedState(
  w: BenchWorker,
  revisions: LearnedRevision[],
  refused: Learned['refused'],
): Promise<Learned> {
  const { tools } = await api<{ tools: LearnedRow[] }>(w, 'GET', `/v1/agents/${AGENT}/tools`);
  return { rows: tools, revisions, refused };
}

/** Runs one seed against a fresh Worker. */
export async function runRealistic(
  seed: number,
  config: Record<string, number | boolean>,
  withCurve: boolean,
  privacy: PrivacyMode = 'whole',
): Promise<{
  report: RealisticReport;
  labels: unknown;
}> {
  const started = performance.now();
  const plan = planTraffic('held-out');
  const data = loadToolE();
  const streams: EvalQuery[][] = plan.streams.map((s) => s.slice(0, WORDINGS));
  for (const t of GENERATED_TOOLS) streams.push(t.wordings.map((text) => ({ text, tool: t.name, index: -1 })));
  const book = new ValueBook(
    seed,
    [...data.tools.map((t) => t.description), ...data.queries.map((q) => q.text)],
    PERSONAS,
  );
  const agent = new RealisticAgent(seed, streams, book);
  const sample = seededSample(plan.measured, CURVE_SAMPLE);
  process.stderr.write(
    `seed ${seed}: ${plan.tools.length} ToolE tools + ${GENERATED_TOOLS.length} generated, realistic agent, ${WORDINGS} wordings per tool, ${PASSES} passes, ${agent.labels.planted.length} tools with a planted mistake\n`,
  );
  const vars = privacy === 'argument-values-only' ? ['PRIVACY_RULE:argument-values-only'] : [];
  const w = await startWorker((line) => process.stderr.write(`${line}\n`), vars);
  try {
    const planted = (t: string) => agent.isPlanted(t);
    await register(w, 'eval-cold', plan.tools, planted);
    await register(w, AGENT, plan.tools, planted);
    if (Object.keys(config).length > 0) await api(w, 'PUT', `/v1/agents/${AGENT}/config`, config);
    await api(w, 'PUT', `/v1/agents/${AGENT}/config`, AGENT_EVAL_SETTINGS);
    const cold = await measure(w, 'eval-cold', plan.measured, 'cold: held-out');
    const revisions: LearnedRevision[] = [];
    const refused: Learned['refused'] = [];
    const rounds: RealisticReport['rounds'] = [];
    // Held-out R@5 on a sample after each round only with --curve: it costs a held-out pass.
    const curveAt5 = async (round: number): Promise<number | null> =>
      withCurve ? (await measure(w, AGENT, sample, `curve: round ${round}`, TRAFFIC_CONCURRENCY)).at5 : null;
    const curve: RealisticReport['curve'] = [{ round: 0, at5: await curveAt5(0), examples: 1, not_for: 1 }];
    for (let round = 1; round <= PASSES; round++) {
      const t0 = performance.now();
      const conversations = agent.plan(round);
      const firstRun = agent.labels.runs.length;
      let done = 0;
      const route = async (request: string, conversation: string): Promise<Routed> => {
        const res = await api<{ turn_id: string; tools: { name: string }[] }>(w, 'POST', `/v1/agents/${AGENT}/route`, {
          request,
          conversation_id: conversation,
        });
        return { turn_id: res.turn_id, offered: res.tools.map((t) => t.name) };
      };
      let next = 0;
      const label = `round ${round}: ${conversations.length} conversations`;
      // One conversation at a time (eval-http.ts TRAFFIC_CONCURRENCY): the log then holds the turns
      // in the same order in every run, and the customers and values the conversations draw come
      // from the seeded book in that order too.
      await Promise.all(
        Array.from({ length: TRAFFIC_CONCURRENCY }, async () => {
          for (let i = next++; i < conversations.length; i = next++) {
            const c = conversations[i];
            if (c) await agent.converse(round, i, c, route);
            done++;
            if (done % 50 === 0 || done === conversations.length) progressBar(label, done, conversations.length);
          }
        }),
      );
      const routed = performance.now();
      // Calls in conversation order, each conversation's runs in the order they were routed.
      const runs = agent.labels.runs.slice(firstRun);
      const ordered = [...runs].sort((a, b) =>
        a.conversation === b.conversation ? a.run - b.run : a.conversation < b.conversation ? -1 : 1,
      );
      await postCalls(
        w,
        AGENT,
        ordered.flatMap((r) => r.calls),
      );
      for (const r of runs.filter((x) => x.outcome !== null))
        await api(w, 'POST', `/v1/agents/${AGENT}/outcomes`, { turn_id: r.turn_id, ok: r.outcome });
      process.stderr.write(`round ${round}: reviewing…\r`);
      const reviewStart = performance.now();
      const reviews = await reviewRound(w, AGENT);
      const reviewSeconds = (performance.now() - reviewStart) / 1000;
      for (const r of reviews) {
        revisions.push(...(r.revisions as unknown as LearnedRevision[]));
        refused.push(...(r.refused as unknown as Learned['refused']));
      }
      const offered =
        runs.filter((r) => r.served_by.length > 0 && r.served_by.every((t) => r.offered.includes(t))).length /
        Math.max(1, runs.length);
      const modelCalls = reviews.reduce((n, r) => n + r.model_calls, 0);
      rounds.push({
        round,
        runs: runs.length,
        conversations: conversations.length,
        offered_share: offered,
        model_calls: modelCalls,
        revisions: reviews.reduce((n, r) => n + r.revisions.length, 0),
        seconds: (performance.now() - t0) / 1000,
        traffic_seconds: (routed - t0) / 1000,
        review_seconds: reviewSeconds,
        review_retries: reviews.reduce((n, r) => n + r.retries, 0),
      });
      const q = measureRealistic(agent.labels, await learnedState(w, revisions, refused), book.used, false);
      curve.push({
        round,
        at5: await curveAt5(round),
        examples: q.examples.precision,
        not_for: q.not_for.precision,
      });
      process.stderr.write(
        `round ${round}: ${runs.length} runs, ${modelCalls} model calls; examples ${q.examples.learned} (precision ${(100 * q.examples.precision).toFixed(1)}%), Not-for ${q.not_for.lines}, notes ${q.notes.notes}, leaks ${q.leaks.values_leaked}\n`,
      );
    }
    const learned = await measure(w, AGENT, plan.measured, 'learned: held-out');
    const final = await learnedState(w, revisions, refused);
    const quality = measureRealistic(agent.labels, final, book.used);
    const report: RealisticReport = {
      generated_at: new Date().toISOString(),
      seed,
      split: 'held-out',
      setup: {
        toole_tools: plan.tools.length,
        generated_tools: GENERATED_TOOLS.map((t) => t.name),
        wordings: WORDINGS,
        passes: PASSES,
        personas: PERSONAS,
        embedder: 'hash (offline default)',
        model: 'extractive (offline default)',
        spec_defaults: Object.keys(config).length === 0,
        privacy,
        agent_config: config,
        measured_wordings: plan.measured.length,
      },
      recall: { cold, learned },
      rounds,
      curve,
      quality,
      wall_seconds: (performance.now() - started) / 1000,
    };
    return { report, labels: { seed, ...agent.labels, values: book.used, learned: final.rows } };
  } finally {
    w.stop();
  }
}

const pct = (x: number | null): string => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);

/** The stdout summary of one seed, with every leak and where it was found. */
export function formatRealistic(r: RealisticReport, maxLeaks = Number.POSITIVE_INFINITY): string {
  const q = r.quality;
  const t = q.traffic;
  const lines = [
    `ToolE learning, realistic agent, seed ${r.seed}: ${r.setup.toole_tools} ToolE tools + ${r.setup.generated_tools.join(', ')}; ${r.setup.wordings} wordings per tool, ${r.setup.passes} passes; privacy rule: ${r.setup.privacy}; ${r.setup.spec_defaults ? 'default settings' : `NOT the defaults: ${JSON.stringify(r.setup.agent_config)}`}`,
    `traffic: ${t.runs} runs in ${t.conversations} conversations (${Object.entries(t.by_kind)
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}); ${t.calls} calls, ${t.failed_calls} failed; ${t.served_none} runs nothing served, ${t.outcomes_false} outcomes ok:false`,
    `held-out R@5 (ToolE, ${r.recall.cold.queries} wordings): cold ${pct(r.recall.cold.at5)} → learned ${pct(r.recall.learned.at5)} (R@1 ${pct(r.recall.cold.at1)} → ${pct(r.recall.learned.at1)})`,
    `example precision ${pct(q.examples.precision)} (${q.examples.right} of ${q.examples.learned}; ${q.examples.unmatched} matched no run); wrong by tool: ${
      Object.entries(q.examples.wrong_by_tool)
        .slice(0, 8)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
    `examples by the miss they came from (right / learned): ${Object.entries(q.examples.by_how)
      .map(([how, n]) => `${how} ${n.right}/${n.learned}`)
      .join(', ')}`,
    `example requests refused (truly the tool's / refused): ${
      Object.entries(q.examples.refused)
        .sort((a, b) => b[1].refused - a[1].refused)
        .map(([reason, n]) => `${reason} ${n.right}/${n.refused}`)
        .join(', ') || 'none'
    }`,
    `Not-for precision ${pct(q.not_for.precision)} (${q.not_for.right} of ${q.not_for.lines}); contradictions ${q.contradictions}`,
    `routing memory precision ${pct(q.memory.precision)} (${q.memory.right} of ${q.memory.wordings} wordings; ${q.memory.unmatched} matched no run); wrong: ${
      q.memory.wrong
        .slice(0, 5)
        .map((m) => `${m.tool}: "${m.text}" (served by ${m.served_by.join(' + ') || 'none'})`)
        .join(' | ') || 'none'
    }`,
    `notes: precision ${pct(q.notes.precision)} (${q.notes.right} of ${q.notes.notes}), recall ${pct(q.notes.recall)} (${q.notes.planted_with_note} of ${q.notes.planted_tools} tools with a planted mistake)`,
    `re-ask decision (attribution replayed) on ${q.reask.pairs} labelled pairs: precision ${pct(q.reask.precision)}, recall ${pct(q.reask.recall)} (${q.reask.true_positives} of ${q.reask.labelled_reasks} re-asks, ${q.reask.predicted_reasks} said re-ask); by kind: ${Object.entries(
      q.reask.by_kind,
    )
      .map(([k, v]) => `${k} ${v.said_reask}/${v.pairs}`)
      .join(', ')}`,
    `personal values leaked: ${q.leaks.values_leaked} of ${q.leaks.values_used} generated values (${q.leaks.findings} findings; by kind ${JSON.stringify(q.leaks.by_kind)}; by place ${JSON.stringify(q.leaks.by_place)})`,
    ...q.leaks.list
      .slice(0, maxLeaks)
      .map((l) => `  leak: ${l.kind} "${l.form}" (${l.match}) in ${l.where}: ${l.text}`),
    ...(q.leaks.list.length > maxLeaks
      ? [`  … ${q.leaks.list.length - maxLeaks} more (every one with --labels DIR)`]
      : []),
    `wrong notes: ${q.notes.wrong
      .slice(0, 5)
      .map((n) => `${n.tool}: ${n.note}`)
      .join(' | ')}`,
    `wall time ${r.wall_seconds.toFixed(0)} s`,
  ];
  return lines.join('\n');
}

/**
 * Which privacy rule the Worker runs (docs/security.md "Personal values"): the whole rule, or
 * `argument-values-only` (the Worker's PRIVACY_RULE), which masks only the argument values of the
 * conversation, to measure what the rest of the rule costs held-out R@5. Never a deployment's setting.
 */
export type PrivacyMode = 'whole' | 'argument-values-only';

/** `npm run eval -- --agent realistic [--seed N | --seeds 1,2,3] [--config '{…}'] [--labels DIR] [--curve] [--privacy argument-values-only]`. */
export async function realisticMain(args: {
  seed?: string;
  seeds?: string;
  config?: string;
  labels?: string;
  curve?: boolean;
  privacy?: string;
}): Promise<void> {
  if (args.privacy !== undefined && args.privacy !== 'argument-values-only')
    throw new Error('--privacy: the only value is argument-values-only (without it, the whole rule runs)');
  const privacy: PrivacyMode = args.privacy === 'argument-values-only' ? 'argument-values-only' : 'whole';
  const config = args.config === undefined ? {} : (JSON.parse(args.config) as Record<string, number | boolean>);
  const seeds = (args.seeds ?? args.seed ?? '1').split(',').map((s) => Number(s.trim()));
  if (seeds.some((s) => !Number.isInteger(s) || s < 0)) throw new Error('--seed / --seeds: non-negative integers');
  const dir = new URL('../bench/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  // A run on other settings, or on the narrowed privacy rule, is written beside the headline, never over it.
  const custom = `${Object.keys(config).length > 0 ? '-custom' : ''}${privacy === 'whole' ? '' : '-argument-values-only'}`;
  const rounded = (_key: string, v: unknown) => (typeof v === 'number' ? Math.round(v * 1e4) / 1e4 : v);
  for (const seed of seeds) {
    const { report, labels } = await runRealistic(seed, config, args.curve === true, privacy);
    process.stdout.write(`${formatRealistic(report, MAX_LEAKS_PRINTED)}\n\n`);
    const name = `eval-learn-realistic-${WORDINGS}-seed${seed}${custom}.json`;
    // Every leak is in the labels folder (--labels); the report keeps the first ones.
    const leaks = report.quality.leaks;
    const kept = {
      ...report,
      quality: { ...report.quality, leaks: { ...leaks, list: leaks.list.slice(0, MAX_LEAKS_KEPT) } },
    };
    writeFileSync(new URL(name, dir), `${JSON.stringify(kept, rounded, 2)}\n`);
    process.stderr.write(`wrote bench/${name}\n`);
    if (args.labels !== undefined) {
      mkdirSync(args.labels, { recursive: true });
      const file = `${args.labels.replace(/\/$/, '')}/realistic-labels-seed${seed}.json`;
      writeFileSync(file, JSON.stringify({ ...(labels as object), leaks: leaks.list }));
      process.stderr.write(`wrote ${file}\n`);
    }
  }
  // The summary holds every seed measured so far (each file of this protocol in bench/), so seeds
  // run one at a time add up.
  const files = readdirSync(dir).filter((f) =>
    new RegExp(`^eval-learn-realistic-${WORDINGS}-seed\\d+${custom}\\.json$`).test(f),
  );
  const rows = files
    .map((f) => summaryOf(JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as RealisticReport))
    .sort((a, b) => a.seed - b.seed);
  const name = `eval-learn-realistic-${WORDINGS}${custom}.json`;
  writeFileSync(
    new URL(name, dir),
    `${JSON.stringify({ generated_at: new Date().toISOString(), seeds: rows }, rounded, 2)}\n`,
  );
  process.stderr.write(`wrote bench/${name} (seeds ${rows.map((r) => r.seed).join(', ')})\n`);
  process.stdout.write(`${formatSeedTable(rows)}\n`);
}

/** The headline figures of one seed (a row of the docs' table). */
export function summaryOf(r: RealisticReport) {
  const q = r.quality;
  return {
    seed: r.seed,
    cold_at5: r.recall.cold.at5,
    learned_at5: r.recall.learned.at5,
    example_precision: q.examples.precision,
    examples: q.examples.learned,
    not_for_precision: q.not_for.precision,
    not_for_lines: q.not_for.lines,
    // Seeds measured before memory was measured have no such figure.
    memory_precision: q.memory?.precision ?? null,
    memory_wordings: q.memory?.wordings ?? null,
    contradictions: q.contradictions,
    note_precision: q.notes.precision,
    notes: q.notes.notes,
    note_recall: q.notes.recall,
    reask_precision: q.reask.precision,
    reask_recall: q.reask.recall,
    values_leaked: q.leaks.values_leaked,
    leak_findings: q.leaks.findings,
    values_used: q.leaks.values_used,
    runs: q.traffic.runs,
    wall_seconds: r.wall_seconds,
  };
}

/** The markdown table of several seeds (docs/evaluation.md). */
export function formatSeedTable(rows: readonly ReturnType<typeof summaryOf>[]): string {
  const p = (x: number | null) => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);
  return [
    '| seed | R@5 cold → learned | example precision | Not-for precision | memory precision | contradictions | note precision | note recall | re-ask P / R | values leaked | run time |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.seed} | ${p(r.cold_at5)} → ${p(r.learned_at5)} | ${p(r.example_precision)} (${r.examples}) | ${p(r.not_for_precision)} (${r.not_for_lines}) | ${p(r.memory_precision)} (${r.memory_wordings ?? 'n/a'}) | ${r.contradictions} | ${p(r.note_precision)} (${r.notes}) | ${p(r.note_recall)} | ${p(r.reask_precision)} / ${p(r.reask_recall)} | ${r.values_leaked} of ${r.values_used} | ${r.wall_seconds.toFixed(0)} s |`,
    ),
  ].join('\n');
}
