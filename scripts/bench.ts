/**
 * `npm run bench`: starts the Worker with `wrangler dev` on a free loopback port, registers
 * toolboxes of 200, 2,000 and 10,000 tools, and measures in one run: `/route` at each size against
 * `/healthz` (requests/s, p50, p99, each as a ratio to `/healthz`), `/calls` ingestion, one review
 * over 1,000 and 100,000 logged calls, the routing snapshot's memory at each size, and the MCP
 * gateway's cost per forwarded call (p50, p99) over calling the upstream directly. Prints a
 * table, writes bench/results.json and bench/chart.svg, and refreshes the README's Performance block.
 *
 * Knobs (environment): BENCH_CONNECTIONS (16), BENCH_SECONDS per run (5), BENCH_ROUNDS (3).
 * Rounds interleave the endpoints so a burst of other load on the machine hits all of them alike;
 * each figure is the median over rounds.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { callLog, routeRequests, toolbox, type BenchCall, type BenchTool } from './bench/data.ts';
import { cpuMeter } from './bench/cpu.ts';
import { measureGateway, type GatewayFigures } from './bench/gateway.ts';
import { runLoad, type LoadFigures } from './bench/load.ts';
import { measureSnapshot, type MemoryFigures } from './bench/memory.ts';
import {
  chartSvg,
  markdownTables,
  updateReadme,
  type BenchResults,
  type EndpointResult,
  type ReviewResult,
  type Target,
} from './bench/report.ts';
import { startWorker, type BenchWorker } from './bench/worker.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SIZES = [200, 2_000, 10_000];
const REVIEW_LOGS = [1_000, 100_000];
/** The review logs' calls go to this many tools: 1,000 calls already give each more than max_calls_per_tool. */
const REVIEW_LOG_TOOLS = 20;
const REVIEW_RUNS = 5;
/** docs/api.md limits: 1,000 tools or calls per request, 1 MiB per body (the bench's chunks stay under both). */
const CHUNK = 1_000;
const INGEST_IN_FLIGHT = 2;
const ROUTE_REQUESTS = 256;
/** The turn-writer run: routes at full rate this long, then waits this long at most for the log. */
const WRITE_SECONDS = 10;
const WRITE_DRAIN_MS = 30_000;

const OUT = new URL('../bench/', import.meta.url);
const README = new URL('../docs/performance.md', import.meta.url);
const started = Date.now();
const progress = (line: string): void =>
  console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}`);

/**
 * One setup request. Every one the bench sends is idempotent (tools by definition, calls by id,
 * reviews as dry runs), so a request that lost the race with a keep-alive socket the server was
 * closing ("other side closed") is simply sent again.
 */
async function call(
  w: BenchWorker,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${w.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${w.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
    } catch (err) {
      if (attempt >= 3 || !(err instanceof TypeError)) throw err;
      progress(`retrying ${method} ${path} after: ${String(err.cause ?? err.message)}`);
    }
  }
}

async function register(w: BenchWorker, agent: string, tools: readonly BenchTool[]): Promise<void> {
  for (let i = 0; i < tools.length; i += CHUNK) {
    const res = await call(w, 'PUT', `/v1/agents/${agent}/tools`, { tools: tools.slice(i, i + CHUNK) });
    if (res.status !== 200)
      throw new Error(`PUT tools for ${agent} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] ?? NaN) : ((s[s.length / 2 - 1] ?? NaN) + (s[s.length / 2] ?? NaN)) / 2;
};

/** One run's figures plus the CPU it cost per request (µs): the Worker's processes, the load generator. */
interface MeasuredRun extends LoadFigures {
  worker_cpu_us: number;
  generator_cpu_us: number;
}

async function measuredRun(w: BenchWorker, target: Parameters<typeof runLoad>[0]): Promise<MeasuredRun> {
  const meter = cpuMeter(w.pgid);
  const figures = await runLoad(target, CONNECTIONS, SECONDS);
  const cpu = meter();
  const answered = Math.max(1, figures.requests + figures.failures);
  return {
    ...figures,
    worker_cpu_us: (cpu.worker / answered) * 1e6,
    generator_cpu_us: (cpu.loadGenerator / answered) * 1e6,
  };
}

function medianFigures(runs: MeasuredRun[]): MeasuredRun {
  return {
    requests: runs.reduce((n, r) => n + r.requests, 0),
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p95: median(runs.map((r) => r.p95)),
    p99: median(runs.map((r) => r.p99)),
    failures: runs.reduce((n, r) => n + r.failures, 0),
    worker_cpu_us: median(runs.map((r) => r.worker_cpu_us)),
    generator_cpu_us: median(runs.map((r) => r.generator_cpu_us)),
  };
}

/** `/healthz` and `/route` at each size, interleaved over rounds after a warm-up that builds each snapshot. */
async function measureRouting(w: BenchWorker): Promise<EndpointResult[]> {
  const auth = { authorization: `Bearer ${w.token}` };
  const bodies = routeRequests(ROUTE_REQUESTS).map((q, i) =>
    JSON.stringify({ request: q.text, conversation_id: `bench-conv-${i % 64}` }),
  );
  const targets = [
    { name: 'GET /healthz', tools: null, target: { url: w.url, method: 'GET' as const, path: '/healthz' } },
    ...SIZES.map((n) => ({
      name: 'POST …/route',
      tools: n,
      target: { url: w.url, method: 'POST' as const, path: `/v1/agents/bench-${n}/route`, headers: auth, bodies },
    })),
  ];
  for (const t of targets) {
    progress(`warming up ${t.name}${t.tools === null ? '' : ` (${t.tools} tools)`}`);
    await runLoad(t.target, CONNECTIONS, 2);
  }
  const runs = targets.map(() => [] as MeasuredRun[]);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, t] of targets.entries()) {
      progress(`round ${round}/${ROUNDS}: ${t.name}${t.tools === null ? '' : ` at ${t.tools} tools`}, ${SECONDS}s`);
      runs[i]?.push(await measuredRun(w, t.target));
    }
  }
  const figures = runs.map(medianFigures);
  const health = figures[0];
  if (!health) throw new Error('no /healthz figures');
  return targets.map((t, i) => {
    const f = figures[i] ?? health;
    const cpu = (r: MeasuredRun): number => r.worker_cpu_us + r.generator_cpu_us;
    return {
      name: t.name,
      tools: t.tools,
      ...f,
      rps_ratio: f.rps / health.rps,
      p50_ratio: f.p50 / health.p50,
      p99_ratio: f.p99 / health.p99,
      cpu_ratio: cpu(health) / cpu(f),
    };
  });
}

/** Turns the agent's log holds over the last two UTC days (routed turns of the quality report). */
async function loggedTurns(w: BenchWorker, agent: string): Promise<number> {
  const res = await call(w, 'GET', `/v1/agents/${agent}/quality?days=2`);
  if (res.status !== 200)
    throw new Error(`GET quality answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
  return (res.json as { days: { routed_turns: number }[] }).days.reduce((n, d) => n + d.routed_turns, 0);
}

/**
 * What the turn writer sustains: every `/route` answer writes its turn row after the answer
 * (grouped per 200 ms window, one INSERT in the agent's Durable Object each). Routes a fresh 200-tool agent at full rate for
 * WRITE_SECONDS, then waits until the log holds as many turns as routes were answered; the rate is
 * turn rows over the time from the first route to the last row written.
 */
async function measureTurnWrites(w: BenchWorker): Promise<BenchResults['turn_writes']> {
  const agent = 'bench-writes';
  await register(w, agent, toolbox(200));
  const bodies = routeRequests(ROUTE_REQUESTS).map((q, i) =>
    JSON.stringify({ request: q.text, conversation_id: `bench-writes-${i % 64}` }),
  );
  const target = {
    url: w.url,
    method: 'POST' as const,
    path: `/v1/agents/${agent}/route`,
    headers: { authorization: `Bearer ${w.token}` },
    bodies,
  };
  progress('turn writes: warming up');
  await runLoad(target, CONNECTIONS, 2);
  const settled = async (): Promise<number> => {
    let last = -1;
    for (;;) {
      const n = await loggedTurns(w, agent);
      if (n === last) return n;
      last = n;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  };
  const before = await settled();
  progress(`turn writes: routing at full rate for ${WRITE_SECONDS}s`);
  const t0 = performance.now();
  const load = await runLoad(target, CONNECTIONS, WRITE_SECONDS);
  let written = 0;
  let lastChange = performance.now();
  while (performance.now() - lastChange < WRITE_DRAIN_MS) {
    const n = (await loggedTurns(w, agent)) - before;
    if (n !== written) lastChange = performance.now();
    written = n;
    if (written >= load.requests) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (lastChange - t0) / 1000;
  return {
    load_seconds: WRITE_SECONDS,
    routes: load.requests,
    turns: written,
    seconds,
    rows_per_s: written / seconds,
    route_rps: load.rps,
  };
}

/** Posts a log in batches of 1,000 with a few batches in flight; returns calls per second. */
async function ingest(w: BenchWorker, agent: string, calls: readonly BenchCall[]): Promise<number> {
  const batches: BenchCall[][] = [];
  for (let i = 0; i < calls.length; i += CHUNK) batches.push(calls.slice(i, i + CHUNK));
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let b = batches[next++]; b !== undefined; b = batches[next++]) {
      const res = await call(w, 'POST', `/v1/agents/${agent}/calls`, { calls: b });
      if (res.status !== 200)
        throw new Error(`POST calls answered ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: INGEST_IN_FLIGHT }, worker));
  return calls.length / ((performance.now() - t0) / 1000);
}

async function timeReview(w: BenchWorker, agent: string): Promise<{ ms: number; status: number; body: unknown }> {
  const t0 = performance.now();
  const res = await call(w, 'POST', `/v1/agents/${agent}/reviews`, { dry_run: true });
  return { ms: performance.now() - t0, status: res.status, body: res.json };
}

/** Ingestion figures and review timings (dry runs: they store nothing, so they can be repeated). */
async function measureLog(
  w: BenchWorker,
): Promise<{ ingestion: BenchResults['ingestion']; review: BenchResults['review'] }> {
  let ingestion: BenchResults['ingestion'] | undefined;
  for (const size of REVIEW_LOGS) {
    const agent = `bench-review-${size}`;
    await register(w, agent, toolbox(200));
    // The review timings measure reviews, not the hour's model-call budget (docs/configuration.md).
    await call(w, 'PUT', `/v1/agents/${agent}/config`, { model_calls_per_hour: 1_000_000 });
    progress(`ingesting ${size.toLocaleString('en-US')} calls into ${agent}`);
    const rate = await ingest(w, agent, callLog(size, agent, REVIEW_LOG_TOOLS));
    if (size === Math.max(...REVIEW_LOGS))
      ingestion = { calls: size, batch: CHUNK, in_flight: INGEST_IN_FLIGHT, seconds: size / rate, calls_per_s: rate };
  }
  if (!ingestion) throw new Error('no ingestion figures');
  for (const size of REVIEW_LOGS) {
    // The first review of each agent pays for cold SQLite pages and lazily built code: not measured.
    const probe = await timeReview(w, `bench-review-${size}`);
    if (probe.status !== 200) {
      const missing = `POST …/reviews answered ${probe.status} ${JSON.stringify(probe.body).slice(0, 160)}`;
      progress(`review not measured: ${missing}`);
      return { ingestion, review: { missing, runs: [], ratio: null } };
    }
  }
  const times = new Map<number, number[]>(REVIEW_LOGS.map((n) => [n, []]));
  for (let round = 0; round < REVIEW_RUNS; round++) {
    for (const size of REVIEW_LOGS) {
      progress(`review ${round + 1}/${REVIEW_RUNS} over ${size.toLocaleString('en-US')} calls`);
      const r = await timeReview(w, `bench-review-${size}`);
      if (r.status !== 200) throw new Error(`review answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
      times.get(size)?.push(r.ms);
    }
  }
  const runs: ReviewResult[] = REVIEW_LOGS.map((calls) => ({ calls, ms: median(times.get(calls) ?? []) }));
  const [small, large] = [runs[0]?.ms ?? NaN, runs[runs.length - 1]?.ms ?? NaN];
  return { ingestion, review: { missing: null, runs, ratio: large / small } };
}

function targetsOf(endpoints: EndpointResult[], review: BenchResults['review']): Target[] {
  const at = (n: number): EndpointResult | undefined => endpoints.find((e) => e.tools === n);
  const small = at(200);
  const large = at(10_000);
  const targets: Target[] = [
    {
      what: '/route at 200 tools: requests/s ÷ /healthz',
      value: small?.rps_ratio ?? NaN,
      limit: '≥ 0.6',
      met: (small?.rps_ratio ?? 0) >= 0.6,
    },
    {
      what: '/route at 200 tools: p99 ÷ /healthz p99',
      value: small?.p99_ratio ?? NaN,
      limit: '≤ 3',
      met: (small?.p99_ratio ?? Infinity) <= 3,
    },
    {
      what: '/route p50 at 10,000 tools ÷ at 200 tools',
      value: (large?.p50 ?? NaN) / (small?.p50 ?? NaN),
      limit: '≤ 3',
      met: (large?.p50 ?? Infinity) / (small?.p50 ?? 1) <= 3,
    },
  ];
  // Not a target of the issue: the same throughput ratio from CPU time, which other load on the machine barely moves.
  targets.push({
    what: '(check) /route at 200 tools: CPU per /healthz ÷ CPU per /route',
    value: small?.cpu_ratio ?? NaN,
    limit: '≥ 0.6',
    met: (small?.cpu_ratio ?? 0) >= 0.6,
  });
  targets.push({
    what: 'review at 100,000 calls ÷ at 1,000',
    value: review.ratio ?? NaN,
    limit: '≤ 2',
    met: review.ratio !== null && review.ratio <= 2,
  });
  return targets;
}

async function main(): Promise<void> {
  // The gateway part registers a loopback upstream: local addresses are refused without this.
  const w = await startWorker(progress, ['UPSTREAMS_ALLOW_LOCAL:true']);
  const stop = (): void => w.stop();
  process.once('SIGINT', () => {
    stop();
    process.exit(130);
  });
  let endpoints: EndpointResult[];
  let log: Awaited<ReturnType<typeof measureLog>>;
  let turnWrites: BenchResults['turn_writes'];
  let gateway: GatewayFigures;
  try {
    for (const n of SIZES) {
      progress(`registering ${n.toLocaleString('en-US')} tools (chunks of ${CHUNK})`);
      await register(w, `bench-${n}`, toolbox(n));
    }
    endpoints = await measureRouting(w);
    turnWrites = await measureTurnWrites(w);
    log = await measureLog(w);
    progress('measuring the MCP gateway: an upstream tool called directly and through the agent endpoint');
    gateway = await measureGateway(w);
  } finally {
    const warnings = w.log().trim();
    if (warnings) progress(`wrangler printed (last lines):\n${warnings.split('\n').slice(-20).join('\n')}`);
    stop();
  }
  const memory: MemoryFigures[] = [];
  for (const n of SIZES) {
    progress(`measuring the routing snapshot's memory at ${n.toLocaleString('en-US')} tools`);
    memory.push(await measureSnapshot(toolbox(n)));
  }
  const results: BenchResults = {
    generated_at: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.versions.node, platform: `${process.platform}-${process.arch}` },
    method: { connections: CONNECTIONS, seconds_per_run: SECONDS, rounds: ROUNDS, route_requests: ROUTE_REQUESTS },
    endpoints,
    turn_writes: turnWrites,
    ...log,
    memory,
    gateway,
    targets: targetsOf(endpoints, log.review),
  };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(new URL('results.json', OUT), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(new URL('chart.svg', OUT), chartSvg(results));
  const readme = updateReadme(fileURLToPath(README), results);
  console.log(`\n${markdownTables(results)}\n`);
  progress(
    `wrote bench/results.json, bench/chart.svg${readme ? ' and the docs/performance.md block' : ' (docs/performance.md has no bench markers: not updated)'}`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exit(1);
});
