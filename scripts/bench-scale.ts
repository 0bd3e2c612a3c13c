/**
 * `npm run bench:scale`: the routing quality report and log retention at a million log rows
 * (docs/performance.md "At scale"). Builds and migrates the Worker, starts it once to register the
 * agents (each agent's log is its Durable Object's SQLite file), stops it and fills those files
 * straight from SQLite (scripts/bench/fill-log.py: the rows the API would write), starts it again,
 * then over HTTP:
 *
 * 1. quality: an agent with SCALE_SMALL_TURNS turns and one with SCALE_TURNS, spread over the last
 *    30 days — the first `GET …/quality?days=30` (nothing settled yet), the cron ticks it takes to
 *    settle both, and the report once settled (median of REPORT_RUNS);
 * 2. retention: an agent with SCALE_PRUNE_ROWS rows older than its window (turns, calls, outcomes)
 *    — `/route` p50 and p99 for a SCALE_ROUTE_TOOLS-tool agent without ticks, with one tick per
 *    10-second window and with ticks back to back, then ticks until nothing is left;
 * 3. routing memory: two agents of SCALE_MEMORY_TOOLS tools, one with empty memories and one whose
 *    every tool's memory is full to the default byte budget (`fullMemory` in scripts/bench/data.ts:
 *    ToolE requests, distinct per tool; written into D1 with the vectors an apply would write) —
 *    the first `/route` of each (the snapshot build), `/route` p50 / p95 / p99 of both in alternating
 *    windows at one connection and at BENCH_CONNECTIONS, the routing snapshot's memory with and
 *    without (Node replica, scripts/bench/memory.ts), and one review of each after the same served
 *    traffic (SCALE_MEMORY_REVIEW_TOOLS tools, two requests each): on the full agent every memory
 *    revision is applied and re-checked for displacement; the other runs with memory off.
 *
 * Prints a table and writes bench/scale.json. Knobs (environment): SCALE_TURNS (1,000,000),
 * SCALE_SMALL_TURNS (10,000), SCALE_PRUNE_ROWS (1,000,000), SCALE_ROUTE_TOOLS (300),
 * SCALE_MEMORY_TOOLS (10,000), SCALE_MEMORY_REVIEW_TOOLS (100), BENCH_CONNECTIONS (16),
 * SCALE_ONLY (`memory`: the routing-memory part alone, without the million-row logs).
 */
import { spawnSync } from 'node:child_process';
import { createHashEmbedder } from '../src/adapters/hash-embedder.ts';
import { DEFAULT_MEMORY_BYTES, memoryBudget, type MemoryWording } from '../src/core/routing-memory.ts';
import { embedTools } from '../src/services/tool-vectors.ts';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadToolE } from './eval-data.ts';
import { fullMemory, routeRequests, toolbox } from './bench/data.ts';
import { percentile, runLoad, type LoadFigures } from './bench/load.ts';
import { measureIndex, measureSnapshot, type IndexFigures } from './bench/memory.ts';
import { launchWorker, prepareWorker, type BenchWorker } from './bench/worker.ts';

const TURNS = Number(process.env.SCALE_TURNS ?? 1_000_000);
const SMALL_TURNS = Number(process.env.SCALE_SMALL_TURNS ?? 10_000);
const PRUNE_ROWS = Number(process.env.SCALE_PRUNE_ROWS ?? 1_000_000);
const ROUTE_TOOLS = Number(process.env.SCALE_ROUTE_TOOLS ?? 300);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const MEMORY_TOOLS = Number(process.env.SCALE_MEMORY_TOOLS ?? 10_000);
const MEMORY_REVIEW_TOOLS = Number(process.env.SCALE_MEMORY_REVIEW_TOOLS ?? 100);
const ONLY_MEMORY = process.env.SCALE_ONLY === 'memory';
if (process.env.SCALE_ONLY !== undefined && !ONLY_MEMORY)
  throw new Error(`SCALE_ONLY is "memory" or unset, not ${JSON.stringify(process.env.SCALE_ONLY)}`);
/** Alternating `/route` windows per agent and concurrency, and their length. */
const MEMORY_ROUNDS = 3;
const MEMORY_WINDOW_S = 8;
/**
 * The isolate's snapshot budget for this run (ROUTING_CACHE_MB, default 48): both memory agents'
 * 10,000-tool snapshots together pass 48 MiB, and alternating windows would then rebuild one at
 * every switch (seconds each) instead of measuring routes. Each alone fits the default.
 */
const CACHE_MB = 128;
/** PUT …/tools takes this many tools a request (its body stays under the 1 MiB limit). */
const TOOLS_CHUNK = 1_000;
const REPORT_RUNS = 5;
const WINDOW_S = 10;
const WINDOWS = 3;
const MAX_TICKS = 500;
const DAY_MS = 86_400_000;
/** The prune agent's log lies 200 to 260 days back: past every window, and before the settle floor (180 days). */
const PRUNE_FROM_DAYS = 260;
const PRUNE_TO_DAYS = 200;
const PRUNE_RETENTION_DAYS = 30;
/** Every second prune-agent turn has an outcome: 2.5 rows a turn (turn, call, half an outcome). */
const PRUNE_OUTCOMES_EVERY = 2;

const FILLER = fileURLToPath(new URL('./bench/fill-log.py', import.meta.url));
const OUT = new URL('../bench/', import.meta.url);
const AGENTS = {
  small: 'scale-10k',
  large: 'scale-1m',
  prune: 'scale-prune',
  route: 'scale-route',
  memoryOff: 'scale-memory-empty',
  memoryFull: 'scale-memory-full',
};
const started = Date.now();
const progress = (line: string): void =>
  console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(5)}s] ${line}`);

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] ?? NaN) : ((s[s.length / 2 - 1] ?? NaN) + (s[s.length / 2] ?? NaN)) / 2;
};
const round = (x: number, digits = 1): number => Number(x.toFixed(digits));
const hourOf = (ms: number): string => new Date(ms).toISOString().slice(0, 13);

function python(args: string[]): string {
  const run = spawnSync('python3', [FILLER, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (run.status !== 0) throw new Error(`fill-log.py ${args[0]} failed:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

async function call(
  w: BenchWorker,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${w.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${w.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  let json: unknown = text;
  try {
    json = text ? (JSON.parse(text) as unknown) : null;
  } catch {
    // a plain-text answer (the scheduled trigger answers "ok")
  }
  return { status: res.status, json, ms };
}

async function ok(w: BenchWorker, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await call(w, method, path, body);
  if (res.status !== 200)
    throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
  return res.json;
}

/** One cron tick (the scheduled handler: reviews, retention, settling), timed; its `now` is the wall clock. */
async function tick(w: BenchWorker): Promise<number> {
  const res = await call(w, 'GET', `/cdn-cgi/handler/scheduled?time=${Date.now()}`);
  if (res.status !== 200) throw new Error(`scheduled tick answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.ms;
}

interface QualityDayJson {
  routed_turns: number;
  served_turns: number;
  hits: number;
  misses: number;
  failed_calls: number;
}
interface QualityJson {
  days: QualityDayJson[];
  truncated: boolean;
}

interface Report {
  ms: number;
  truncated: boolean;
  routed_turns: number;
  served_turns: number;
  hits: number;
  failed_calls: number;
}

async function report(w: BenchWorker, agent: string): Promise<Report & { days: QualityDayJson[] }> {
  const res = await call(w, 'GET', `/v1/agents/${agent}/quality?days=30`);
  if (res.status !== 200)
    throw new Error(`quality of ${agent} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
  const q = res.json as QualityJson;
  const sum = (k: keyof QualityDayJson): number => q.days.reduce((n, d) => n + d[k], 0);
  return {
    ms: res.ms,
    truncated: q.truncated,
    routed_turns: sum('routed_turns'),
    served_turns: sum('served_turns'),
    hits: sum('hits'),
    failed_calls: sum('failed_calls'),
    days: q.days,
  };
}

/** Two reports' days agree: counts exactly, rates (sums of 1/rank added in another order) to 1e-9. */
function sameDays(a: readonly QualityDayJson[], b: readonly QualityDayJson[]): boolean {
  return (
    a.length === b.length &&
    a.every((day, i) => {
      const other = (b[i] ?? {}) as unknown as Record<string, unknown>;
      return Object.entries(day).every(([k, v]) => {
        const w = other[k];
        return typeof v === 'number' && typeof w === 'number' ? Math.abs(v - w) <= 1e-9 : v === w;
      });
    })
  );
}

/** A call dated 2000-01-01 per log agent: it names the agent in its object's file, and no window reaches it. */
async function markLogs(w: BenchWorker): Promise<void> {
  for (const agent of [AGENTS.small, AGENTS.large, AGENTS.prune]) {
    const call = {
      id: `${agent}-marker`,
      tool: 'marker',
      arguments: {},
      success: true,
      at: '2000-01-01T00:00:00.000Z',
    };
    await ok(w, 'POST', `/v1/agents/${agent}/calls`, { calls: [call] });
  }
}

/** Each log agent's object file (miniflare keeps one SQLite file per object under `v3/do/`). */
function logFiles(state: string): Record<string, string> {
  const folder = join(state, 'v3/do');
  const [classFolder, ...more] = readdirSync(folder).filter((f) => f.endsWith('-AgentObject'));
  if (!classFolder || more.length > 0) throw new Error(`expected one AgentObject folder in ${folder}`);
  const files = JSON.parse(python(['agents', join(folder, classFolder)])) as Record<string, string>;
  for (const agent of [AGENTS.small, AGENTS.large, AGENTS.prune])
    if (!files[agent]) throw new Error(`no object file holds ${agent}'s log: ${JSON.stringify(files)}`);
  return files;
}

function fillLog(files: Record<string, string>, dir: string, now: number): void {
  const { queries } = loadToolE();
  const tools = toolbox(200).map((t) => t.name);
  const windowStart = Date.parse(`${new Date(now).toISOString().slice(0, 10)}T00:00:00.000Z`) - 29 * DAY_MS;
  const recent = { from_ms: windowStart + 60_000, to_ms: now - 5 * 60_000, outcomes_every: 20 };
  const spec = {
    tools,
    queries: queries.map((q) => ({ text: q.text, tool: q.tool })),
    agents: [
      { agent: AGENTS.small, file: files[AGENTS.small], turns: SMALL_TURNS, seed: 1, ...recent },
      { agent: AGENTS.large, file: files[AGENTS.large], turns: TURNS, seed: 2, ...recent },
      {
        agent: AGENTS.prune,
        file: files[AGENTS.prune],
        turns: Math.ceil(PRUNE_ROWS / (2 + 1 / PRUNE_OUTCOMES_EVERY)),
        seed: 3,
        from_ms: now - PRUNE_FROM_DAYS * DAY_MS,
        to_ms: now - PRUNE_TO_DAYS * DAY_MS,
        outcomes_every: PRUNE_OUTCOMES_EVERY,
      },
    ],
  };
  const path = join(dir, 'fill-spec.json');
  writeFileSync(path, JSON.stringify(spec));
  progress(
    `filling the agents' logs directly: ${SMALL_TURNS.toLocaleString('en-US')} + ${TURNS.toLocaleString('en-US')} turns (each with a call) and ${PRUNE_ROWS.toLocaleString('en-US')} old rows`,
  );
  for (const line of python(['fill', path]).trim().split('\n')) progress(`  filled ${line}`);
}

/** Agents and their settings through the API: tools registered, scheduled reviews off for the log agents. */
async function register(w: BenchWorker): Promise<void> {
  const log = [AGENTS.small, AGENTS.large, AGENTS.prune];
  for (const agent of log)
    await ok(w, 'PUT', `/v1/agents/${agent}/tools`, { tools: toolbox(agent === AGENTS.prune ? 20 : 200) });
  await ok(w, 'PUT', `/v1/agents/${AGENTS.route}/tools`, { tools: toolbox(ROUTE_TOOLS) });
  // A scheduled review of these agents would run inside the ticks measured here: not what is measured.
  for (const agent of log) await ok(w, 'PUT', `/v1/agents/${agent}/config`, { review_schedule: 'off' });
  // The prune agent keeps its old log until the retention measurement shortens its window.
  await ok(w, 'PUT', `/v1/agents/${AGENTS.prune}/config`, { log_retention_days: 365 });
}

interface QualityResults {
  first: { small: Report; large: Report };
  settle: { ticks: number; tick_ms_median: number; tick_ms_max: number; seconds: number; target: string };
  settled: { small: Report; large: Report; ratio: number };
  check: { small_routed_expected: number; small_failed_expected: number; first_equals_settled: boolean };
}

async function measureQuality(w: BenchWorker, d1: string, files: Record<string, string>): Promise<QualityResults> {
  const strip = ({ days: _days, ...r }: Report & { days: QualityDayJson[] }): Report => r;
  progress(`first report of ${AGENTS.small} (nothing settled)`);
  const firstSmall = await report(w, AGENTS.small);
  progress(`  ${round(firstSmall.ms)} ms, truncated ${firstSmall.truncated}, routed_turns ${firstSmall.routed_turns}`);
  progress(`first report of ${AGENTS.large} (nothing settled)`);
  const firstLarge = await report(w, AGENTS.large);
  progress(`  ${round(firstLarge.ms)} ms, truncated ${firstLarge.truncated}, routed_turns ${firstLarge.routed_turns}`);

  const times: number[] = [];
  const t0 = Date.now();
  let target = '';
  for (;;) {
    target = hourOf(Date.now() - 3_600_000);
    const settled = JSON.parse(python(['settled', d1])) as Record<string, string>;
    const behind = [AGENTS.small, AGENTS.large].filter((a) => (settled[a] ?? '') < target);
    if (behind.length === 0) break;
    if (times.length >= MAX_TICKS) throw new Error(`not settled after ${MAX_TICKS} ticks: ${JSON.stringify(settled)}`);
    const ms = await tick(w);
    times.push(ms);
    progress(
      `settle tick ${times.length}: ${round(ms)} ms (behind: ${behind.map((a) => `${a} at ${settled[a] ?? 'none'}`).join(', ')})`,
    );
  }
  const settle = {
    ticks: times.length,
    tick_ms_median: round(median(times)),
    tick_ms_max: round(Math.max(0, ...times)),
    seconds: round((Date.now() - t0) / 1000),
    target,
  };

  progress(`settled reports: one warm-up each, then ${REPORT_RUNS} each, interleaved`);
  const warm = { small: await report(w, AGENTS.small), large: await report(w, AGENTS.large) };
  const runs = { small: [] as number[], large: [] as number[] };
  for (let i = 0; i < REPORT_RUNS; i++) {
    runs.small.push((await report(w, AGENTS.small)).ms);
    runs.large.push((await report(w, AGENTS.large)).ms);
  }
  const small = { ...strip(warm.small), ms: round(median(runs.small)) };
  const large = { ...strip(warm.large), ms: round(median(runs.large)) };
  progress(`  ${AGENTS.small}: ${small.ms} ms, ${AGENTS.large}: ${large.ms} ms`);

  if (!sameDays(firstSmall.days, warm.small.days)) {
    const i = firstSmall.days.findIndex((d, j) => !sameDays([d], [warm.small.days[j] ?? d]));
    progress(
      `  first and settled reports differ: ${JSON.stringify(firstSmall.days[i])} vs ${JSON.stringify(warm.small.days[i])}`,
    );
  }
  const smallLog = files[AGENTS.small] ?? '';
  const counts = JSON.parse(python(['count', smallLog, AGENTS.small, '9999'])) as Record<string, number>;
  const failed = JSON.parse(python(['failed', smallLog, AGENTS.small])) as { failed: number };
  return {
    first: { small: strip(firstSmall), large: strip(firstLarge) },
    settle,
    settled: { small, large, ratio: round(large.ms / small.ms, 2) },
    check: {
      small_routed_expected: counts.turns ?? NaN,
      small_failed_expected: failed.failed,
      first_equals_settled: sameDays(firstSmall.days, warm.small.days),
    },
  };
}

interface LoadPhase extends LoadFigures {
  ticks: number;
  tick_ms_median: number | null;
  tick_ms_max: number | null;
  rows_removed: number;
}

interface RetentionResults {
  rows_before: Record<string, number>;
  baseline: LoadPhase;
  one_tick_per_window: LoadPhase;
  back_to_back_under_load: LoadPhase;
  drain: { ticks: number; rows: number; rows_per_tick_median: number; tick_ms_median: number; tick_ms_max: number };
  all: { ticks: number; rows: number; tick_ms_median: number; tick_ms_max: number; seconds: number };
}

function oldRows(pruneLog: string): number {
  const cutoff = new Date(Date.now() - PRUNE_RETENTION_DAYS * DAY_MS).toISOString();
  const c = JSON.parse(python(['count', pruneLog, AGENTS.prune, cutoff])) as Record<string, number>;
  return Object.values(c).reduce((n, x) => n + x, 0);
}

/** `/route` under load for `seconds` while `ticks` runs alongside (it returns the tick times). */
async function routeWhile(
  w: BenchWorker,
  pruneLog: string,
  seconds: number,
  ticks: (until: number) => Promise<number[]>,
): Promise<LoadPhase> {
  const bodies = routeRequests(256).map((q, i) =>
    JSON.stringify({ request: q.text, conversation_id: `scale-conv-${i % 64}` }),
  );
  const before = oldRows(pruneLog);
  const target = {
    url: w.url,
    method: 'POST' as const,
    path: `/v1/agents/${AGENTS.route}/route`,
    headers: { authorization: `Bearer ${w.token}` },
    bodies,
  };
  const until = Date.now() + seconds * 1000;
  const [figures, times] = await Promise.all([runLoad(target, CONNECTIONS, seconds), ticks(until)]);
  return {
    ...figures,
    p50: round(figures.p50, 2),
    p99: round(figures.p99, 2),
    rps: round(figures.rps),
    ticks: times.length,
    tick_ms_median: times.length ? round(median(times)) : null,
    tick_ms_max: times.length ? round(Math.max(...times)) : null,
    rows_removed: before - oldRows(pruneLog),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function measureRetention(w: BenchWorker, pruneLog: string): Promise<RetentionResults> {
  const t0 = Date.now();
  const cutoff = new Date(Date.now() - PRUNE_RETENTION_DAYS * DAY_MS).toISOString();
  const rows_before = JSON.parse(python(['count', pruneLog, AGENTS.prune, cutoff])) as Record<string, number>;
  progress(`retention: ${JSON.stringify(rows_before)} rows older than ${PRUNE_RETENTION_DAYS} days`);
  progress(`warming up /route at ${ROUTE_TOOLS} tools`);
  await runLoad(
    {
      url: w.url,
      method: 'GET',
      path: `/v1/agents/${AGENTS.route}/config`,
      headers: { authorization: `Bearer ${w.token}` },
    },
    2,
    1,
  );
  await routeWhile(w, pruneLog, 3, async () => []);
  progress(`/route, no tick: ${WINDOW_S}s`);
  const baseline = await routeWhile(w, pruneLog, WINDOW_S, async () => []);
  progress(`  p50 ${baseline.p50} ms, p99 ${baseline.p99} ms`);

  // Only now does the old log fall out of the agent's window.
  await ok(w, 'PUT', `/v1/agents/${AGENTS.prune}/config`, { log_retention_days: PRUNE_RETENTION_DAYS });
  progress(`/route with one tick per ${WINDOW_S}s window: ${WINDOWS * WINDOW_S}s`);
  const windowed = await routeWhile(w, pruneLog, WINDOWS * WINDOW_S, async () => {
    const times: number[] = [];
    const start = Date.now();
    for (let i = 0; i < WINDOWS; i++) {
      await sleep(start + i * WINDOW_S * 1000 + 1000 - Date.now());
      times.push(await tick(w));
    }
    return times;
  });
  progress(`  p50 ${windowed.p50} ms, p99 ${windowed.p99} ms, ticks ${windowed.tick_ms_median} ms median`);

  progress(`/route with ticks back to back: ${2 * WINDOW_S}s`);
  const backToBack = await routeWhile(w, pruneLog, 2 * WINDOW_S, async (until) => {
    const times: number[] = [];
    while (Date.now() < until) times.push(await tick(w));
    return times;
  });
  progress(`  p50 ${backToBack.p50} ms, p99 ${backToBack.p99} ms, ${backToBack.ticks} ticks`);

  progress('ticks back to back (no load) until nothing is left');
  const drainTimes: number[] = [];
  const drainRows: number[] = [];
  for (let left = oldRows(pruneLog); left > 0; ) {
    if (drainTimes.length >= MAX_TICKS) throw new Error(`rows left after ${MAX_TICKS} ticks: ${left}`);
    drainTimes.push(await tick(w));
    const now = oldRows(pruneLog);
    drainRows.push(left - now);
    left = now;
    if (drainTimes.length % 10 === 0 || left === 0)
      progress(
        `  drain tick ${drainTimes.length}: ${round(drainTimes.at(-1) ?? NaN)} ms, ${left.toLocaleString('en-US')} left`,
      );
  }
  const underLoad = [windowed, backToBack];
  const allTimes = [...drainTimes];
  // Tick times under load are medians and maxima only: kept as such in `all`.
  const total = Object.values(rows_before).reduce((n, x) => n + x, 0);
  return {
    rows_before,
    baseline,
    one_tick_per_window: windowed,
    back_to_back_under_load: backToBack,
    drain: {
      ticks: drainTimes.length,
      rows: drainRows.reduce((n, x) => n + x, 0),
      rows_per_tick_median: median(drainRows),
      tick_ms_median: round(median(drainTimes)),
      tick_ms_max: round(Math.max(0, ...drainTimes)),
    },
    all: {
      ticks: underLoad.reduce((n, p) => n + p.ticks, 0) + drainTimes.length,
      rows: total,
      tick_ms_median: round(median(allTimes)),
      tick_ms_max: round(Math.max(0, ...allTimes, ...underLoad.map((p) => p.tick_ms_max ?? 0))),
      seconds: round((Date.now() - t0) / 1000),
    },
  };
}

/** The two routing-memory agents: the same MEMORY_TOOLS tools, scheduled reviews off. */
async function registerMemory(w: BenchWorker): Promise<void> {
  const tools = toolbox(MEMORY_TOOLS);
  for (const agent of [AGENTS.memoryOff, AGENTS.memoryFull]) {
    progress(`registering ${tools.length.toLocaleString('en-US')} tools for ${agent}`);
    for (let i = 0; i < tools.length; i += TOOLS_CHUNK)
      await ok(w, 'PUT', `/v1/agents/${agent}/tools`, { tools: tools.slice(i, i + TOOLS_CHUNK) });
    await ok(w, 'PUT', `/v1/agents/${agent}/config`, { review_schedule: 'off' });
  }
}

interface MemoryFill {
  tools: number;
  wordings: number;
  wordings_per_tool: number;
  bytes_per_tool: number;
  budget_bytes: number;
  tools_below_90_percent: number;
}

/**
 * Every tool of the full agent gets a memory filled to the default budget, written straight into
 * D1 with the vector an apply would write (head + memory, scripts/bench/data.ts `fullMemory`).
 */
async function fillMemory(
  d1: string,
  dir: string,
  now: number,
): Promise<{ fill: MemoryFill; memories: MemoryWording[][] }> {
  const tools = toolbox(MEMORY_TOOLS);
  progress(`composing full memories for ${tools.length.toLocaleString('en-US')} tools`);
  // Each tool full to the budget the service gives it in this toolbox by default: its share of the agent's.
  const budget = memoryBudget(DEFAULT_MEMORY_BYTES, tools.length);
  const memories = fullMemory(tools, budget, now);
  const embedder = createHashEmbedder();
  const rows = tools.map((t, i) => ({
    name: t.name,
    description: null,
    docstring: t.description,
    parameters: t.parameters,
    examples: [],
    memory: memories[i] ?? [],
  }));
  const vectors = await embedTools(embedder, rows);
  const spec = {
    agent: AGENTS.memoryFull,
    embedder: embedder.id,
    tools: rows.map((r, i) => {
      const v = vectors[i] ?? new Float32Array(0);
      return {
        name: r.name,
        memory: JSON.stringify(r.memory),
        vector: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64'),
      };
    }),
  };
  const path = join(dir, 'memory-spec.json');
  writeFileSync(path, JSON.stringify(spec));
  const { updated } = JSON.parse(python(['memory', d1, path])) as { updated: number };
  if (updated !== tools.length) throw new Error(`memory written to ${updated} rows of ${tools.length}`);
  const bytes = memories.map((m) => m.reduce((n, w) => n + Buffer.byteLength(w.text), 0));
  const wordings = memories.reduce((n, m) => n + m.length, 0);
  const fill = {
    tools: tools.length,
    wordings,
    wordings_per_tool: round(wordings / tools.length, 1),
    bytes_per_tool: round(bytes.reduce((n, b) => n + b, 0) / tools.length, 0),
    budget_bytes: budget,
    tools_below_90_percent: bytes.filter((b) => b < 0.9 * budget).length,
  };
  progress(`  ${JSON.stringify(fill)}`);
  return { fill, memories };
}

interface RouteLatency {
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  failures: number;
}

interface MemoryReview {
  ms: number;
  memory_revisions: number;
  applied: number;
  wordings_added: number;
  wordings_withdrawn: number;
  wordings_dropped: number;
  displaced: number;
}

interface MemoryResults {
  fill: MemoryFill;
  first_route_ms: { empty: number; full: number };
  route: Record<string, { empty: RouteLatency; full: RouteLatency; p50_ratio: number; p95_ratio: number }>;
  snapshot: {
    empty: { measured_bytes: number; counted_bytes: number; index: IndexFigures };
    full: { measured_bytes: number; counted_bytes: number; index: IndexFigures };
  };
  review: { requests: number; calls: number; empty: MemoryReview; full: MemoryReview };
  largest_memory_after_review: number;
}

function latency(times: number[], failures: number): RouteLatency {
  times.sort((a, b) => a - b);
  return {
    requests: times.length,
    p50: round(percentile(times, 50), 2),
    p95: round(percentile(times, 95), 2),
    p99: round(percentile(times, 99), 2),
    failures,
  };
}

interface RevisionJson {
  tool: string;
  status: string;
  displaced: unknown[];
  memory?: { added: string[]; withdrawn: string[]; dropped: string[] };
}

async function timedReview(w: BenchWorker, agent: string): Promise<MemoryReview & { tools: string[] }> {
  const res = await call(w, 'POST', `/v1/agents/${agent}/reviews`, {});
  if (res.status !== 200)
    throw new Error(`review of ${agent} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
  const memory = ((res.json as { memory?: RevisionJson[] }).memory ?? []) as RevisionJson[];
  const sum = (f: (r: RevisionJson) => number): number => memory.reduce((n, r) => n + f(r), 0);
  return {
    ms: round(res.ms),
    memory_revisions: memory.length,
    applied: memory.filter((r) => r.status === 'applied').length,
    wordings_added: sum((r) => r.memory?.added.length ?? 0),
    wordings_withdrawn: sum((r) => r.memory?.withdrawn.length ?? 0),
    wordings_dropped: sum((r) => r.memory?.dropped.length ?? 0),
    displaced: sum((r) => r.displaced.length),
    tools: memory.filter((r) => r.status === 'applied').map((r) => r.tool),
  };
}

/**
 * Served traffic for a review: MEMORY_REVIEW_TOOLS variant tools spread over the toolbox, each
 * asked for twice by its original's name ("open the timeport desk", and after a "please"), each
 * ask in two conversations (so the privacy rule sees it twice) and served by a successful call.
 * Not ToolE requests, nor descriptions: the full memories hold every ToolE request of an original
 * in one variant or another, most descriptions contain some short request of another tool, and a
 * request saying what another tool's memory holds is contested (docs/learning.md): descriptions
 * left 12 memory revisions of 100 to apply. By name, a few still say what another tool holds (a
 * ToolE request naming the tool, "search" inside "web search"); the rest each get a memory
 * revision, and each re-check reads the other tools' requests.
 */
function reviewTraffic(agent: string): Record<string, unknown>[] {
  const { tools: base } = loadToolE();
  const tools = toolbox(MEMORY_TOOLS);
  const variants = tools.length - base.length;
  const calls: Record<string, unknown>[] = [];
  const at = Date.now() - 60_000;
  for (let j = 0; j < MEMORY_REVIEW_TOOLS && variants > 0; j++) {
    const i = base.length + Math.floor((j * variants) / MEMORY_REVIEW_TOOLS);
    const tool = tools[i];
    if (!tool) continue;
    for (let r = 0; r < 2; r++) {
      for (let c = 0; c < 2; c++) {
        const id = `${agent}-${j}-${r}-${c}`;
        calls.push({
          id: `call-${id}`,
          tool: tool.name,
          arguments: {},
          success: true,
          request: `${r === 0 ? '' : 'Please, '}open the ${tool.name.replace(/_v\d+$/, '').replace(/_/g, ' ')} desk`,
          turn_id: `turn-${id}`,
          conversation_id: `conv-${j}-${c}`,
          at: new Date(at + calls.length).toISOString(),
        });
      }
    }
  }
  return calls;
}

/** The routing snapshot's memory without and with full memory (Node replica, scripts/bench/memory.ts). */
async function measureMemorySnapshots(memories: MemoryWording[][]): Promise<MemoryResults['snapshot']> {
  progress('routing snapshot memory (Node replica), without and with full memory');
  const tools = toolbox(MEMORY_TOOLS);
  const emptySnap = await measureSnapshot(tools);
  const fullSnap = await measureSnapshot(tools, false, memories);
  const requests = routeRequests(256).map((q) => q.text);
  const snapshot = {
    empty: {
      measured_bytes: emptySnap.snapshot_bytes,
      counted_bytes: emptySnap.estimated_bytes,
      index: await measureIndex(tools, null, requests),
    },
    full: {
      measured_bytes: fullSnap.snapshot_bytes,
      counted_bytes: fullSnap.estimated_bytes,
      index: await measureIndex(tools, memories, requests),
    },
  };
  progress(`  ${JSON.stringify(snapshot)}`);
  return snapshot;
}

async function measureMemory(
  w: BenchWorker,
  fill: MemoryFill,
  snapshot: MemoryResults['snapshot'],
): Promise<MemoryResults> {
  const agents = { empty: AGENTS.memoryOff, full: AGENTS.memoryFull } as const;
  const bodies = routeRequests(256).map((q, i) =>
    JSON.stringify({ request: q.text, conversation_id: `memory-conv-${i % 64}` }),
  );
  const target = (agent: string) => ({
    url: w.url,
    method: 'POST' as const,
    path: `/v1/agents/${agent}/route`,
    headers: { authorization: `Bearer ${w.token}` },
    bodies,
  });
  const first = { empty: NaN, full: NaN };
  for (const key of ['empty', 'full'] as const) {
    progress(`first /route of ${agents[key]} (builds its routing snapshot)`);
    const res = await call(w, 'POST', `/v1/agents/${agents[key]}/route`, { request: 'warm up' });
    if (res.status !== 200) throw new Error(`first /route of ${agents[key]} answered ${res.status}`);
    first[key] = round(res.ms);
    progress(`  ${first[key]} ms`);
    await runLoad(target(agents[key]), 2, 3);
  }
  const route: MemoryResults['route'] = {};
  for (const connections of [1, CONNECTIONS]) {
    const times = { empty: [] as number[], full: [] as number[] };
    const failures = { empty: 0, full: 0 };
    for (let r = 0; r < MEMORY_ROUNDS; r++) {
      // Alternating windows: the machine's other load falls on both agents alike.
      for (const key of r % 2 === 0 ? (['empty', 'full'] as const) : (['full', 'empty'] as const)) {
        const f = await runLoad(target(agents[key]), connections, MEMORY_WINDOW_S, times[key]);
        failures[key] += f.failures;
        if (f.requests === 0)
          throw new Error(`no /route of ${agents[key]} answered within a ${MEMORY_WINDOW_S} s window`);
        progress(`  /route ${key} memory, ${connections} connection(s), window ${r + 1}: p50 ${round(f.p50, 2)} ms`);
      }
    }
    const empty = latency(times.empty, failures.empty);
    const full = latency(times.full, failures.full);
    route[`${connections}`] = {
      empty,
      full,
      p50_ratio: round(full.p50 / empty.p50, 2),
      p95_ratio: round(full.p95 / empty.p95, 2),
    };
    progress(
      `  ${connections} connection(s): p50 ${empty.p50} → ${full.p50} ms (${route[`${connections}`]?.p50_ratio}×)`,
    );
  }

  progress(`served traffic on ${MEMORY_REVIEW_TOOLS} tools, then one review of each agent`);
  await ok(w, 'PUT', `/v1/agents/${AGENTS.memoryOff}/config`, { memory_bytes: 0 });
  let calls = 0;
  for (const agent of [agents.empty, agents.full]) {
    const log = reviewTraffic(agent);
    calls = log.length;
    await ok(w, 'POST', `/v1/agents/${agent}/calls`, { calls: log });
  }
  const { tools: _none, ...empty } = await timedReview(w, agents.empty);
  const { tools: changed, ...full } = await timedReview(w, agents.full);
  const review = { requests: calls / 2, calls, empty, full };
  progress(`  ${JSON.stringify(review)}`);

  // The budget holds after the review: the largest memory among the tools a revision changed.
  let largest = 0;
  for (const name of changed) {
    const t = (await ok(w, 'GET', `/v1/agents/${agents.full}/tools/${name}`)) as { memory?: string[] };
    largest = Math.max(
      largest,
      (t.memory ?? []).reduce((n, x) => n + Buffer.byteLength(x), 0),
    );
  }
  return { fill, first_route_ms: first, route, snapshot, review, largest_memory_after_review: largest };
}

function memoryTable(m: MemoryResults): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const mib = (b: number): string => `${(b / 1_048_576).toFixed(1)} MiB`;
  const idx = (x: IndexFigures): string => `${n(x.postings)}, ${n(x.build_ms)} ms, ${x.rank_ms} ms`;
  const lat = (l: RouteLatency): string => `${l.p50} / ${l.p95} / ${l.p99} ms`;
  const rev = (r: MemoryReview): string =>
    `${n(r.ms)} ms; ${r.memory_revisions} memory revisions (${r.applied} applied), ${r.wordings_added} wordings added, ${r.wordings_withdrawn} withdrawn, ${r.wordings_dropped} dropped for room`;
  return [
    `| routing memory at ${n(MEMORY_TOOLS)} tools | empty | full |`,
    '|---|---|---|',
    `| memory per tool | 0 | ${n(m.fill.bytes_per_tool)} bytes of ${n(m.fill.budget_bytes)}, ${m.fill.wordings_per_tool} wordings (${m.fill.tools_below_90_percent} tools under 90%) |`,
    `| first /route (snapshot build) | ${n(m.first_route_ms.empty)} ms | ${n(m.first_route_ms.full)} ms |`,
    ...Object.entries(m.route).map(
      ([c, r]) =>
        `| /route p50 / p95 / p99, ${c} connection(s) | ${lat(r.empty)} | ${lat(r.full)} (p50 ${r.p50_ratio}×, p95 ${r.p95_ratio}×) |`,
    ),
    `| routing snapshot, measured (counted by the cache) | ${mib(m.snapshot.empty.measured_bytes)} (${mib(m.snapshot.empty.counted_bytes)}) | ${mib(m.snapshot.full.measured_bytes)} (${mib(m.snapshot.full.counted_bytes)}) |`,
    `| index in a Node replica: BM25 postings, build, one ranking | ${idx(m.snapshot.empty.index)} | ${idx(m.snapshot.full.index)} |`,
    `| review after ${n(m.review.requests)} served requests on ${MEMORY_REVIEW_TOOLS} tools | memory off: ${rev(m.review.empty)} | ${rev(m.review.full)} |`,
    `| largest memory after the review (tools it changed) | — | ${n(m.largest_memory_after_review)} bytes |`,
  ].join('\n');
}

function table(q: QualityResults, r: RetentionResults): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const rep = (x: Report): string =>
    `${n(x.ms)} ms, routed_turns ${n(x.routed_turns)}, served ${n(x.served_turns)}, truncated ${x.truncated}`;
  const load = (p: LoadPhase): string =>
    `p50 ${p.p50} ms, p99 ${p.p99} ms, ${p.rps} req/s` +
    (p.ticks
      ? `; ${p.ticks} ticks (median ${p.tick_ms_median} ms, max ${p.tick_ms_max} ms), ${n(p.rows_removed)} rows`
      : '');
  return [
    '| measure | figure |',
    '|---|---|',
    `| first report, ${n(SMALL_TURNS)} turns | ${rep(q.first.small)} |`,
    `| first report, ${n(TURNS)} turns | ${rep(q.first.large)} |`,
    `| ticks to settle both | ${q.settle.ticks} (median ${q.settle.tick_ms_median} ms, max ${q.settle.tick_ms_max} ms, ${q.settle.seconds} s in all) |`,
    `| settled report, ${n(SMALL_TURNS)} turns | ${rep(q.settled.small)} |`,
    `| settled report, ${n(TURNS)} turns | ${rep(q.settled.large)} |`,
    `| settled report time, ${n(TURNS)} ÷ ${n(SMALL_TURNS)} | ${q.settled.ratio} |`,
    `| check: ${n(SMALL_TURNS)} agent's log | ${n(q.check.small_routed_expected)} turns, ${n(q.check.small_failed_expected)} failed calls; first report equals settled: ${q.check.first_equals_settled} |`,
    `| rows older than the window | ${n(r.all.rows)} (${Object.entries(r.rows_before)
      .map(([t, x]) => `${t} ${n(x)}`)
      .join(', ')}) |`,
    `| /route at ${ROUTE_TOOLS} tools, no tick | ${load(r.baseline)} |`,
    `| /route, one tick per ${WINDOW_S} s window | ${load(r.one_tick_per_window)} |`,
    `| /route, ticks back to back | ${load(r.back_to_back_under_load)} |`,
    `| prune ticks, no load | ${r.drain.ticks} ticks, ${n(r.drain.rows)} rows, ${n(r.drain.rows_per_tick_median)} a tick (median), ${r.drain.tick_ms_median} ms median, ${r.drain.tick_ms_max} ms max |`,
    `| prune, all ticks | ${r.all.ticks} ticks for ${n(r.all.rows)} rows in ${r.all.seconds} s |`,
  ].join('\n');
}

async function main(): Promise<void> {
  const prepared = prepareWorker(progress);
  let w: BenchWorker | undefined;
  process.once('SIGINT', () => {
    w?.stop();
    prepared.cleanup();
    process.exit(130);
  });
  let quality: QualityResults | null = null;
  let retention: RetentionResults | null = null;
  let memory: MemoryResults;
  try {
    const d1 = prepared.d1File();
    w = await launchWorker(prepared, progress);
    if (!ONLY_MEMORY) {
      await register(w);
      await markLogs(w);
    }
    await registerMemory(w);
    progress(ONLY_MEMORY ? 'stopping the Worker to fill the memories' : 'stopping the Worker to fill the logs');
    await w.halt();
    if (!ONLY_MEMORY) {
      const files = logFiles(prepared.state);
      fillLog(files, prepared.dir, Date.now());
    }
    const { fill, memories } = await fillMemory(d1, prepared.dir, Date.now());
    // Measured while the Worker is stopped: the replica has the machine to itself.
    const snapshot = await measureMemorySnapshots(memories);
    w = await launchWorker(prepared, progress, [`ROUTING_CACHE_MB:${CACHE_MB}`]);
    if (!ONLY_MEMORY) {
      const files = logFiles(prepared.state);
      quality = await measureQuality(w, d1, files);
      retention = await measureRetention(w, files[AGENTS.prune] ?? '');
    }
    memory = await measureMemory(w, fill, snapshot);
  } finally {
    const warnings = w?.log().trim();
    if (warnings) progress(`wrangler printed (last lines):\n${warnings.split('\n').slice(-20).join('\n')}`);
    w?.stop();
    prepared.cleanup();
  }
  const results = {
    generated_at: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      node: process.versions.node,
      platform: `${process.platform}-${process.arch}`,
      load_average: loadavg().map((x) => round(x, 2)),
    },
    method: {
      turns: TURNS,
      small_turns: SMALL_TURNS,
      prune_rows: PRUNE_ROWS,
      route_tools: ROUTE_TOOLS,
      memory_tools: MEMORY_TOOLS,
      memory_review_tools: MEMORY_REVIEW_TOOLS,
      connections: CONNECTIONS,
      report_runs: REPORT_RUNS,
      window_s: WINDOW_S,
      only: ONLY_MEMORY ? 'memory' : null,
      routing_cache_mb: CACHE_MB,
    },
    quality,
    retention,
    memory,
    seconds: round((Date.now() - started) / 1000),
  };
  mkdirSync(OUT, { recursive: true });
  const file = ONLY_MEMORY ? 'scale-memory.json' : 'scale.json';
  writeFileSync(new URL(file, OUT), `${JSON.stringify(results, null, 2)}\n`);
  const tables = [quality && retention ? table(quality, retention) : null, memoryTable(memory)];
  console.log(`\n${tables.filter((t) => t !== null).join('\n\n')}\n`);
  progress(`wrote bench/${file} (load average at the end: ${results.machine.load_average.join(', ')})`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exit(1);
});
