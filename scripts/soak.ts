/**
 * `npm run soak`: two soaks against `wrangler dev` (local D1 and Durable Objects), each on its own
 * Worker; `-- --only review` or `-- --only concurrency` runs one of them.
 *
 * 1. The review soak (scripts/soak-toole.ts): ten rounds of ToolE traffic (199 tools, the
 *    fallible agent) + reviews with `auto_apply` and `max_tools: 50`, workerd's resident memory
 *    sampled from /proc; fails on any error answer or workerd restart, reports peak memory.
 * 2. The concurrency soak: `/route`, `/calls` and reviews (each followed by applying what it
 *    proposed) running together for a minute, then checks that nothing was lost or doubled: no
 *    error answer, the Durable Object's routed-turn and offer counts equal what the routes
 *    answered, D1's turns and calls per tool equal what was sent, and every call id sent (retries
 *    and overlapping batches included) is stored exactly once.
 *
 * The counts are read through the API: the usage flags of the tools the soak never calls (and of a
 * sentinel tool no request matches) carry the Durable Object's routed-turn count and each tool's
 * offers; D1's offers and calls per tool come from `…/activity`.
 *
 * Knobs (environment): SOAK_SECONDS (60), SOAK_ROUTERS (6 concurrent /route loops), SOAK_CALLERS
 * (2 concurrent /calls loops); the review soak's in scripts/soak-toole.ts. Loopback only; every
 * loop stops by itself at the deadline or after its rounds.
 */
import { parseArgs } from 'node:util';
import { sampleRss } from './bench/rss.ts';
import { runToolESoak } from './soak-toole.ts';
import { startWorker, type BenchWorker } from './bench/worker.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const ROUTERS = Number(process.env.SOAK_ROUTERS ?? 6);
const CALLERS = Number(process.env.SOAK_CALLERS ?? 2);
const AGENT = 'soak';
const SENTINEL = 'zz_sentinel';

const started = Date.now();
const progress = (line: string): void =>
  console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}`);

/** Tools the soak's agent calls: the review has failures and missed requests to learn from. */
const CALLED = [
  ['get_weather', 'Current weather and forecast for a city: temperature, rain, wind.', 'city'],
  ['send_email', 'Send an email message to a recipient with a subject and body.', 'to'],
  ['convert_currency', "Convert an amount of money between currencies at today's rate.", 'amount'],
  ['book_flight', 'Search and book airline flights between two airports.', 'from'],
  ['lookup_order', 'Look up a shop order by its id: status, items, delivery date.', 'order_id'],
  ['translate_text', 'Translate text from one language to another.', 'text'],
] as const;

/** Tools it never calls: routing still offers them, so their offer counts are flagged and readable. */
const UNCALLED = [
  ['set_reminder', 'Set a reminder or an alarm for a time of day.', 'at'],
  ['search_news', 'Search recent news articles on a topic.', 'topic'],
  ['stock_quote', 'The latest stock price and change for a ticker symbol.', 'symbol'],
  ['find_recipe', 'Find cooking recipes by ingredient or dish name.', 'dish'],
  ['play_music', 'Play a song, album or playlist by name.', 'song'],
  ['create_invoice', 'Create an invoice for a customer with line items.', 'customer'],
] as const;

const REQUESTS = [
  'will it rain in Lisbon tomorrow?',
  'email my landlord about the broken heater',
  'how much is 250 dollars in euros',
  'find me a flight from Oslo to Rome next week',
  'where is my order 48213?',
  'translate good morning into German',
  'remind me to call mum at six',
  'latest news about electric cars',
  'what is the share price of ACME',
  'a recipe with aubergine and feta',
  'play some jazz',
  'bill the Jones account for the March work',
  'is it windy in Dublin right now',
  'send the report to my team by email',
  'convert 90 pounds to yen',
];

interface Figures {
  latencies: number[];
  errors: string[];
}

const route: Figures = { latencies: [], errors: [] };
const callsFigures: Figures = { latencies: [], errors: [] };
const reviewFigures: Figures = { latencies: [], errors: [] };
/** Routed turns and per-tool offers as the route answers reported them. */
const offered = new Map<string, number>();
let routedTurns = 0;
/** Every call id sent, and what the answers said about them. */
const sentIds = new Set<string>();
const callsByTool = new Map<string, Set<string>>();
let accepted = 0;
let duplicates = 0;
let applied = 0;
let proposed = 0;

async function send(w: BenchWorker, method: string, path: string, body: unknown, figures: Figures): Promise<any> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${w.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    figures.latencies.push(performance.now() - t0);
    if (!res.ok) {
      figures.errors.push(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
      return null;
    }
    return text ? JSON.parse(text) : null;
  } catch (err) {
    figures.errors.push(`${method} ${path} → ${String(err)}`);
    return null;
  }
}

/** A tool call the agent reports for a routed turn: the first offered tool it knows how to call. */
function callFor(
  turnId: string,
  tools: string[],
  i: number,
): {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
  success: boolean;
  error?: string;
  turn_id: string;
} | null {
  const known = tools.find((t) => CALLED.some(([name]) => name === t));
  if (!known) return null;
  const ok = i % 5 !== 0;
  return {
    id: `${turnId}:1`,
    tool: known,
    arguments: { value: `v${i}` },
    success: ok,
    ...(ok ? {} : { error: 'the value must start with V-' }),
    turn_id: turnId,
  };
}

function remember(calls: readonly { id: string; tool: string }[]): void {
  for (const c of calls) {
    sentIds.add(c.id);
    const ids = callsByTool.get(c.tool) ?? new Set<string>();
    ids.add(c.id);
    callsByTool.set(c.tool, ids);
  }
}

async function postCalls(w: BenchWorker, calls: { id: string; tool: string }[]): Promise<void> {
  remember(calls);
  const answer = await send(w, 'POST', `/v1/agents/${AGENT}/calls`, { calls }, callsFigures);
  if (answer) {
    accepted += answer.accepted;
    duplicates += answer.duplicates;
  }
}

/** Routes requests in a loop and reports each turn's call (every 7th report sent twice: a retry). */
async function router(w: BenchWorker, n: number, deadline: number): Promise<void> {
  for (let i = n; Date.now() < deadline; i += ROUTERS) {
    const request = `${REQUESTS[i % REQUESTS.length] ?? ''} (${i})`;
    const answer = await send(
      w,
      'POST',
      `/v1/agents/${AGENT}/route`,
      { request, conversation_id: `conv-${i % 40}` },
      route,
    );
    if (!answer) continue;
    const names = (answer.tools as { name: string }[]).map((t) => t.name);
    if (answer.routed) {
      routedTurns += 1;
      for (const name of names) offered.set(name, (offered.get(name) ?? 0) + 1);
    }
    const call = callFor(answer.turn_id, names, i);
    if (!call) continue;
    await postCalls(w, [call]);
    if (i % 7 === 0) await postCalls(w, [call]);
  }
}

/** Reports batches of 50 calls without turns; every third batch overlaps the one before by half. */
async function caller(w: BenchWorker, n: number, deadline: number): Promise<void> {
  let previous: { id: string; tool: string; arguments: object; success: boolean }[] = [];
  for (let b = 0; Date.now() < deadline; b++) {
    const fresh = Array.from({ length: 50 }, (_, i) => {
      const [tool] = CALLED[(b + i) % CALLED.length] ?? CALLED[0];
      return { id: `batch-${n}-${b}-${i}`, tool, arguments: { value: i }, success: i % 9 !== 0 };
    });
    const batch = b % 3 === 2 ? [...previous.slice(25), ...fresh.slice(25)] : fresh;
    await postCalls(w, batch);
    previous = batch;
  }
}

/** Reviews (not dry runs: they take the lease and store) and applies what each proposes. */
async function reviewer(w: BenchWorker, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const review = await send(w, 'POST', `/v1/agents/${AGENT}/reviews`, {}, reviewFigures);
    for (const rev of (review?.revisions ?? []) as { revision_id: string }[]) {
      proposed += 1;
      if (
        await send(
          w,
          'POST',
          `/v1/agents/${AGENT}/revisions/${rev.revision_id}/apply`,
          { approved_by: 'soak' },
          reviewFigures,
        )
      )
        applied += 1;
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

async function get(w: BenchWorker, path: string): Promise<any> {
  const res = await fetch(`${w.url}${path}`, { headers: { authorization: `Bearer ${w.token}` } });
  if (!res.ok) throw new Error(`GET ${path} → ${res.status} ${await res.text()}`);
  return res.json();
}

/** What the Durable Object and D1 hold, read through the API, next to what the soak sent. */
async function verify(w: BenchWorker): Promise<string[]> {
  const problems: string[] = [];
  const flags = (await get(w, `/v1/agents/${AGENT}/flags`)).flags as {
    tool: string;
    flag: string;
    offered_turns: number;
    routed_turns: number;
  }[];
  // Every tool was registered before the first route, so each flag's routed_turns is the DO's total.
  const unflagged = [SENTINEL, ...UNCALLED.map(([name]) => name)].filter((t) => !flags.some((f) => f.tool === t));
  if (unflagged.length > 0) problems.push(`no usage flag for ${unflagged.join(', ')}`);
  for (const f of flags.filter((x) => x.routed_turns !== routedTurns))
    problems.push(`Durable Object routed turns ${f.routed_turns} (flag of ${f.tool}), routes answered ${routedTurns}`);
  for (const [tool] of UNCALLED) {
    const flag = flags.find((f) => f.tool === tool);
    const want = offered.get(tool) ?? 0;
    if (want > 0 && flag?.offered_turns !== want)
      problems.push(`Durable Object offers of ${tool}: ${flag?.offered_turns}, routes answered ${want}`);
  }
  for (const [tool] of [...CALLED, ...UNCALLED]) {
    const activity = await get(w, `/v1/agents/${AGENT}/tools/${tool}/activity?bucket=day&span=2`);
    const sum = (k: 'offers' | 'calls') =>
      (activity.buckets as Record<string, number>[]).reduce((n, b) => n + (b[k] ?? 0), 0);
    if (sum('offers') !== (offered.get(tool) ?? 0))
      problems.push(`D1 turns offering ${tool}: ${sum('offers')}, routes answered ${offered.get(tool) ?? 0}`);
    if (sum('calls') !== (callsByTool.get(tool)?.size ?? 0))
      problems.push(`D1 calls of ${tool}: ${sum('calls')}, distinct ids sent ${callsByTool.get(tool)?.size ?? 0}`);
  }
  const agents = (await get(w, '/v1/agents')).agents as { agent: string; calls: number }[];
  const stored = agents.find((a) => a.agent === AGENT)?.calls;
  if (stored !== sentIds.size) problems.push(`D1 holds ${stored} calls, ${sentIds.size} distinct ids were sent`);
  if (accepted !== sentIds.size)
    problems.push(`answers accepted ${accepted} calls, ${sentIds.size} distinct ids were sent`);
  return problems;
}

function summary(name: string, f: Figures, seconds: number): string {
  const s = [...f.latencies].sort((a, b) => a - b);
  const at = (p: number) =>
    (s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN).toFixed(1);
  return `${name.padEnd(22)} ${String(s.length).padStart(7)} requests  ${(s.length / seconds).toFixed(1).padStart(7)}/s  p50 ${at(50).padStart(7)} ms  p99 ${at(99).padStart(7)} ms  errors ${f.errors.length}`;
}

/** The concurrency soak on a Worker of its own; true when it passed. */
async function concurrencySoak(): Promise<boolean> {
  const w = await startWorker(progress);
  const rss = sampleRss(w.pgid);
  try {
    const tool = ([name, description, arg]: readonly [string, string, string]) => ({
      name,
      description,
      parameters: { type: 'object', properties: { [arg]: { type: 'string' } } },
    });
    const tools = [...CALLED, ...UNCALLED]
      .map(tool)
      .concat([{ name: SENTINEL, description: 'qqzx vvkj wwpl', parameters: { type: 'object', properties: {} } }]);
    const setup: Figures = { latencies: [], errors: [] };
    await send(w, 'PUT', `/v1/agents/${AGENT}/tools`, { tools }, setup);
    // Flags for every tool offered at least once and never called; the sentinel flagged from the first turn.
    // A review a second for a minute: past the hour's default model-call budget on purpose.
    await send(
      w,
      'PUT',
      `/v1/agents/${AGENT}/config`,
      { min_offers: 1, min_turns: 1, min_calls: 3, top_k: 3, model_calls_per_hour: 1_000_000 },
      setup,
    );
    if (setup.errors.length > 0) throw new Error(setup.errors.join('\n'));
    progress(`soaking for ${SECONDS}s: ${ROUTERS} /route loops, ${CALLERS} /calls loops, 1 review-and-apply loop`);
    const t0 = Date.now();
    const deadline = t0 + SECONDS * 1000;
    await Promise.all([
      ...Array.from({ length: ROUTERS }, (_, n) => router(w, n, deadline)),
      ...Array.from({ length: CALLERS }, (_, n) => caller(w, n, deadline)),
      reviewer(w, deadline),
    ]);
    const elapsed = (Date.now() - t0) / 1000;
    // /route writes its turn and offer counts after answering: give the last ones a moment.
    await new Promise((r) => setTimeout(r, 3_000));
    const problems = await verify(w);
    const errors = [...route.errors, ...callsFigures.errors, ...reviewFigures.errors];
    console.log(`\nsoak: ${elapsed.toFixed(1)} s against wrangler dev (local D1 and Durable Objects)`);
    console.log(summary('POST /route', route, elapsed));
    console.log(summary('POST /calls', callsFigures, elapsed));
    console.log(summary('reviews and applies', reviewFigures, elapsed));
    console.log(
      `routed turns ${routedTurns}; call ids sent ${sentIds.size} (accepted ${accepted}, duplicates ${duplicates}); revisions proposed ${proposed}, applied ${applied}`,
    );
    for (const e of errors.slice(0, 10)) console.log(`error: ${e}`);
    for (const p of problems) console.log(`mismatch: ${p}`);
    const restarts = rss.restarts();
    for (const r of restarts) console.log(`restart: ${r}`);
    console.log(`workerd resident memory: peak ${(rss.peak() / 2 ** 20).toFixed(1)} MiB`);
    const ok = errors.length === 0 && problems.length === 0 && restarts.length === 0;
    console.log(
      ok
        ? 'concurrency soak: OK — no error, offer counts equal routed turns, every accepted call stored once'
        : 'concurrency soak: FAILED',
    );
    return ok;
  } finally {
    rss.stop();
    w.stop();
  }
}

/** The review soak on a Worker of its own; true when it passed. */
async function reviewSoak(): Promise<boolean> {
  const w = await startWorker(progress);
  try {
    const r = await runToolESoak(w, progress);
    console.log(`\nreview soak: ${r.rounds.length} rounds on ${r.tools} ToolE tools against wrangler dev`);
    console.log('round  turns  calls  reviews  model calls  applied  traffic s  review s  peak MiB (traffic / review)');
    for (const x of r.rounds)
      console.log(
        `${String(x.round).padStart(5)}  ${String(x.turns).padStart(5)}  ${String(x.calls).padStart(5)}  ${String(x.review_passes).padStart(7)}  ${String(x.model_calls).padStart(11)}  ${String(x.applied).padStart(7)}  ${x.traffic_seconds.toFixed(1).padStart(9)}  ${x.review_seconds.toFixed(1).padStart(8)}  ${x.traffic_peak_mib.toFixed(1).padStart(8)} / ${x.review_peak_mib.toFixed(1)}`,
      );
    console.log(
      `turns ${r.turns}; review time ${r.review_seconds.toFixed(1)} s; workerd resident memory: peak ${r.peak_mib.toFixed(1)} MiB`,
    );
    for (const e of r.errors.slice(0, 10)) console.log(`error: ${e}`);
    for (const x of r.restarts) console.log(`restart: ${x}`);
    console.log(r.ok ? 'review soak: OK — no error answer, no workerd restart' : 'review soak: FAILED');
    return r.ok;
  } finally {
    w.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const only = values.only;
  if (only !== undefined && only !== 'review' && only !== 'concurrency')
    throw new Error('--only is review or concurrency');
  let ok = true;
  if (only !== 'concurrency') ok = (await reviewSoak()) && ok;
  if (only !== 'review') ok = (await concurrencySoak()) && ok;
  process.exitCode = ok ? 0 : 1;
}

await main();
