/**
 * The review soak of `npm run soak`: ToolE at the scale a new user tries it — 199 tools,
 * the fallible agent of the learning evaluation (scripts/eval-agent.ts), reviews with `auto_apply`
 * and `max_tools: 50` — for ten rounds of traffic + review + auto-apply against `wrangler dev`.
 * workerd's resident memory (every workerd process below wrangler, from /proc) is sampled the
 * whole time. The soak fails on any error answer, on any 503 "Your worker restarted mid-request"
 * (sent once, never retried: that is the failure it looks for), and on any workerd process that
 * ends or starts while it runs.
 *
 * Knobs (environment): SOAK_ROUNDS (10), SOAK_PER_ROUND (wordings per tool per round, 2),
 * SOAK_MAX_TOOLS (50). Loopback only; every loop is bounded.
 */
import type { BenchWorker } from './bench/worker.ts';
import { sampleRss } from './bench/rss.ts';
import { agentStep, hasMistake, PLANTED_ARGUMENT } from './eval-agent.ts';
import type { EvalQuery } from './eval-data.ts';
import type { EvalCall } from './eval-http.ts';
import { planTraffic, roundOf } from './eval-traffic.ts';
import { draw } from './eval-agent.ts';

const ROUNDS = Number(process.env.SOAK_ROUNDS ?? 10);
const PER_ROUND = Number(process.env.SOAK_PER_ROUND ?? 2);
const MAX_TOOLS = Number(process.env.SOAK_MAX_TOOLS ?? 50);
/** Review passes per round stop when one makes no model call; this many is a bug. */
const MAX_PASSES = 12;
const ROUTE_CONCURRENCY = 8;
const AGENT = 'soak-toole';
/**
 * What wrangler dev's proxy answers when a request to workerd failed on the connection: a restart,
 * or a kept-alive connection the Worker closed as the request was written (src/keep-alive.ts).
 */
const PROXY_RESET = 'Your worker restarted mid-request';

export interface RoundFigures {
  round: number;
  turns: number;
  calls: number;
  review_passes: number;
  model_calls: number;
  applied: number;
  traffic_seconds: number;
  review_seconds: number;
  /** Peak workerd RSS during the round's traffic and during its reviews, MiB. */
  traffic_peak_mib: number;
  review_peak_mib: number;
}

export interface ToolESoakReport {
  tools: number;
  rounds: RoundFigures[];
  turns: number;
  peak_mib: number;
  review_seconds: number;
  errors: string[];
  restarts: string[];
  ok: boolean;
}

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

/** One request; an error answer (the proxy's restart 503 included) is recorded, never retried. */
async function call<T>(
  w: BenchWorker,
  errors: string[],
  method: string,
  path: string,
  body?: unknown,
): Promise<T | null> {
  try {
    const res = await fetch(`${w.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) {
      const restart = res.status === 503 && text.startsWith(PROXY_RESET) ? ' (workerd restarted)' : '';
      errors.push(`${method} ${path} → ${res.status}${restart} ${text.slice(0, 200)}`);
      return null;
    }
    return (text ? JSON.parse(text) : null) as T;
  } catch (err) {
    errors.push(`${method} ${path} → ${String(err)}`);
    return null;
  }
}

interface Routed {
  turn_id: string;
  offered: string[];
}

async function routeAll(
  w: BenchWorker,
  errors: string[],
  queries: readonly EvalQuery[],
  conversation: (i: number) => string,
): Promise<(Routed | null)[]> {
  const out: (Routed | null)[] = new Array(queries.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < queries.length; i = next++) {
      const q = queries[i];
      if (q === undefined) continue;
      const res = await call<{ turn_id: string; tools: { name: string }[] }>(
        w,
        errors,
        'POST',
        `/v1/agents/${AGENT}/route`,
        { request: q.text, conversation_id: conversation(i) },
      );
      out[i] = res ? { turn_id: res.turn_id, offered: res.tools.map((t) => t.name) } : null;
    }
  };
  await Promise.all(Array.from({ length: ROUTE_CONCURRENCY }, worker));
  return out;
}

async function postCalls(w: BenchWorker, errors: string[], calls: readonly EvalCall[]): Promise<void> {
  for (let i = 0; i < calls.length; i += 1000)
    await call(w, errors, 'POST', `/v1/agents/${AGENT}/calls`, { calls: calls.slice(i, i + 1000) });
}

/** Another wording of the same tool (seeded): what the user re-asks with after a wrong tool. */
function anotherWording(streams: readonly EvalQuery[][]): (q: EvalQuery, key: string) => EvalQuery | null {
  const byTool = new Map(streams.flatMap((s) => (s[0] ? [[s[0].tool, s] as const] : [])));
  return (q, key) => {
    const others = (byTool.get(q.tool) ?? []).filter((x) => x.text !== q.text);
    return others.length === 0 ? null : (others[Math.floor(draw(`reask:${key}`) * others.length)] ?? null);
  };
}

interface ReviewAnswer {
  model_calls: number;
  revisions: { status: string }[];
}

/** Runs the ten rounds against a started Worker; `progress` gets one line per phase. */
export async function runToolESoak(w: BenchWorker, progress: (line: string) => void): Promise<ToolESoakReport> {
  const errors: string[] = [];
  const plan = planTraffic('held-out');
  const another = anotherWording(plan.streams);
  const rss = sampleRss(w.pgid);
  const rounds: RoundFigures[] = [];
  try {
    const tools = plan.tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: { type: 'object', properties: hasMistake(t.name) ? { [PLANTED_ARGUMENT]: { type: 'string' } } : {} },
    }));
    // Setup, not soak: a registration the loaded machine drops is sent again (it is idempotent).
    for (let attempt = 1; attempt <= 3; attempt++) {
      const failed: string[] = [];
      await call(w, failed, 'PUT', `/v1/agents/${AGENT}/tools`, { tools, augment: false });
      if (failed.length === 0) break;
      if (attempt === 3) throw new Error(failed.join('\n'));
      progress(`registration failed (${failed[0]}); sending it again`);
    }
    progress(`${plan.tools.length} tools registered; ${ROUNDS} rounds, ${PER_ROUND} wordings per tool a round`);
    for (let round = 1; round <= ROUNDS && errors.length === 0; round++) {
      rss.mark();
      const t0 = performance.now();
      const queries = roundOf(plan, round - 1, PER_ROUND);
      const conversation = (i: number): string => `soak-r${round}-${i}`;
      const routed = await routeAll(w, errors, queries, conversation);
      const steps = queries.map((q, i) =>
        agentStep({
          kind: 'fallible',
          key: `r${round}-${i}`,
          query: q,
          offered: routed[i]?.offered ?? [],
          turnId: routed[i]?.turn_id ?? '',
          conversation: conversation(i),
          another: another(q, `r${round}-${i}`),
        }),
      );
      const calls = steps.flatMap((s) => s.calls);
      await postCalls(w, errors, calls);
      const reasks = steps.flatMap((s, i) => (s.reask ? [{ i, query: s.reask }] : []));
      const rerouted = await routeAll(
        w,
        errors,
        reasks.map((r) => r.query),
        (j) => conversation(reasks[j]?.i ?? 0),
      );
      const again = reasks.flatMap(
        (r, j) =>
          agentStep({
            kind: 'fallible',
            key: `r${round}-${r.i}-again`,
            query: r.query,
            offered: rerouted[j]?.offered ?? [],
            turnId: rerouted[j]?.turn_id ?? '',
            conversation: conversation(r.i),
            another: null,
            final: true,
          }).calls,
      );
      await postCalls(w, errors, again);
      const trafficSeconds = (performance.now() - t0) / 1000;
      const trafficPeak = rss.mark();
      const t1 = performance.now();
      let passes = 0;
      let modelCalls = 0;
      let applied = 0;
      for (; passes < MAX_PASSES && errors.length === 0; ) {
        passes++;
        const r = await call<ReviewAnswer>(w, errors, 'POST', `/v1/agents/${AGENT}/reviews`, {
          auto_apply: true,
          config: { max_tools: MAX_TOOLS },
        });
        if (!r) break;
        modelCalls += r.model_calls;
        applied += r.revisions.filter((x) => x.status === 'applied').length;
        if (r.model_calls === 0) break;
      }
      const reviewSeconds = (performance.now() - t1) / 1000;
      const figures: RoundFigures = {
        round,
        turns: queries.length + reasks.length,
        calls: calls.length + again.length,
        review_passes: passes,
        model_calls: modelCalls,
        applied,
        traffic_seconds: Math.round(trafficSeconds * 10) / 10,
        review_seconds: Math.round(reviewSeconds * 10) / 10,
        traffic_peak_mib: mib(trafficPeak),
        review_peak_mib: mib(rss.mark()),
      };
      rounds.push(figures);
      progress(
        `round ${round}: ${figures.turns} turns in ${figures.traffic_seconds} s (peak ${figures.traffic_peak_mib} MiB); ` +
          `${passes} reviews, ${modelCalls} model calls, ${applied} applied in ${figures.review_seconds} s (peak ${figures.review_peak_mib} MiB)` +
          (errors.length > 0 ? `; ${errors.length} errors` : ''),
      );
    }
    // The request after the last review: a review's answer used to close its connection (src/keep-alive.ts).
    await routeAll(w, errors, roundOf(plan, ROUNDS, 1).slice(0, 20), (i) => `soak-after-${i}`);
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    rss.stop();
  }
  const restarts = rss.restarts();
  return {
    tools: plan.tools.length,
    rounds,
    turns: rounds.reduce((n, r) => n + r.turns, 0),
    peak_mib: mib(rss.peak()),
    review_seconds: Math.round(rounds.reduce((n, r) => n + r.review_seconds, 0) * 10) / 10,
    errors,
    restarts,
    ok: errors.length === 0 && restarts.length === 0 && rounds.length === ROUNDS,
  };
}
