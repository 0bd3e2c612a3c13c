/**
 * The learning evaluation's client of a running Worker (`npm run eval`): every figure it reports is
 * measured through the real HTTP API — `/route`, `/calls`, `/reviews` — never by calling the
 * product's functions directly. Also the stderr progress bar.
 */
import { request as httpRequest } from 'node:http';
import type { BenchWorker } from './bench/worker.ts';
import type { EvalQuery } from './eval-data.ts';

/**
 * Requests to `/route` in flight at once when only the answers count (held-out measures of an
 * agent whose log no review reads again): enough to keep workerd busy on 2 cores, few enough to
 * stay fair to other load.
 */
export const ROUTE_CONCURRENCY = Number(process.env.EVAL_ROUTE_CONCURRENCY ?? 8);
/**
 * Requests to `/route` in flight at once when the turns are traffic a review will read: one. A
 * review reads each tool's newest turns and calls by their place in the log, so requests sent
 * side by side would be stored in whatever order they happened to finish, and the same seed would
 * teach different lines from run to run.
 */
export const TRAFFIC_CONCURRENCY = 1;
/** docs/api.md: at most 1,000 calls per `POST …/calls`. */
const CALLS_PER_POST = 1000;

/** A `\r`-redrawn bar on stderr: `label [#####-----] 50% 5000/10000`. */
export function progressBar(label: string, done: number, total: number): void {
  const width = 30;
  const share = total > 0 ? done / total : 1;
  const filled = Math.round(share * width);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
  process.stderr.write(
    `\r${label.padEnd(34)} [${bar}] ${String(Math.round(100 * share)).padStart(3)}% ${done}/${total}   `,
  );
  if (done >= total) process.stderr.write('\n');
}

/**
 * What wrangler dev's proxy answers when its connection to workerd fails (any network error on a
 * path other than `/`, not only a restart): seen on the request after a review of several seconds,
 * failing in milliseconds, before the Worker ran it. Sent again.
 */
const PROXY_RESET = 'Your worker restarted mid-request';

/** A JSON request to the Worker as admin; a non-2xx answer throws with its body. */
export async function api<T>(w: BenchWorker, method: string, path: string, body?: unknown): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${w.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${w.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      // A keep-alive socket the server was closing ("other side closed"): every request the eval
      // sends twice is harmless (routes only add a turn, calls carry ids, reviews re-read the log).
      if (attempt >= 3 || !(err instanceof TypeError)) throw err;
      continue;
    }
    const text = await res.text();
    if (res.status === 503 && text.startsWith(PROXY_RESET) && attempt < 3) continue;
    if (!res.ok)
      throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}\n${w.log().slice(-2000)}`);
    return (text ? JSON.parse(text) : null) as T;
  }
}

/** What `/route` answered for one request: the turn and the offered names, best first. */
export interface Routed {
  turn_id: string;
  offered: string[];
}

/**
 * Routes each query through `POST …/route` (k = the agent's `top_k`), a few in flight, and returns
 * the answers in query order. `conversation` names each turn's conversation (undefined: none).
 */
export async function routeAll(
  w: BenchWorker,
  agent: string,
  queries: readonly EvalQuery[],
  label: string,
  conversation: (i: number) => string | undefined,
  concurrency = ROUTE_CONCURRENCY,
): Promise<Routed[]> {
  const out: Routed[] = new Array<Routed>(queries.length);
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < queries.length; i = next++) {
      const q = queries[i];
      if (q === undefined) continue;
      const conversation_id = conversation(i);
      const body = { request: q.text, ...(conversation_id === undefined ? {} : { conversation_id }) };
      const res = await api<{ turn_id: string; tools: { name: string }[] }>(
        w,
        'POST',
        `/v1/agents/${agent}/route`,
        body,
      );
      out[i] = { turn_id: res.turn_id, offered: res.tools.map((t) => t.name) };
      done++;
      if (done % 50 === 0 || done === queries.length) progressBar(label, done, queries.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

/** A call as `POST …/calls` takes it (docs/api.md Call). */
export interface EvalCall {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
  success: boolean;
  error?: string;
  request: string;
  /** Absent for a call reported without its turn (the conversation and request say where it belongs). */
  turn_id?: string;
  conversation_id: string;
}

/** Logs calls in batches of 1,000 (docs/api.md limit), in order, so `seq` follows the traffic. */
export async function postCalls(w: BenchWorker, agent: string, calls: readonly EvalCall[]): Promise<void> {
  for (let i = 0; i < calls.length; i += CALLS_PER_POST) {
    await api(w, 'POST', `/v1/agents/${agent}/calls`, { calls: calls.slice(i, i + CALLS_PER_POST) });
  }
}

/** The fields of a Revision (docs/api.md) the evaluation counts. */
export interface RevisionSummary {
  revision_id: string;
  tool: string;
  status: string;
  queries_added: string[];
  queries_withdrawn: string[];
  displaced: { request: string; tool: string }[];
  queries_displaced: { text: string }[];
  notes_added: string[];
  avoid_added: string[];
  refused: { kind: string; text: string; reason: string }[];
  call_example: string | null;
  evidence: { kind: string; text: string; served_by: string | null }[];
}

/** The fields of a Review (docs/api.md) the evaluation counts. */
export interface ReviewSummary {
  revisions: RevisionSummary[];
  refused: { kind: string; reason: string }[];
  skipped: { tool: string; reason: string }[];
  model_calls: number;
}

/**
 * How long the eval waits for a review of the agent that is already running before it gives up:
 * longer than the lease of a review with the eval's `max_tools` (docs/learning.md: ceil(50 / 4)
 * slowest model calls of 106 s plus 5 minutes), so even a review that died holding it is outwaited.
 */
const REVIEW_WAIT_MS = 30 * 60 * 1000;

/**
 * A POST on a connection of its own, with no client timeout: a review pass can outlast the five
 * minutes Node's `fetch` waits for response headers, and a client that gives up while the Worker
 * goes on reviewing is what sent the eval into waiting out "already running". A fresh connection
 * is never a keep-alive socket the server is closing.
 */
function postWithoutTimeout(w: BenchWorker, path: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      `${w.url}${path}`,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${w.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * One `POST …/reviews` with `auto_apply`: the product's own path from proposal to applied row.
 * `retries` counts the requests sent again (0 in a run whose figures are reproducible).
 *
 * Should the request still fail on the way (wrangler's proxy answered "Your worker restarted
 * mid-request", or the connection broke) while workerd went on with the review, the request sent
 * again is answered 409 "already running". The eval then waits, asking again every few seconds,
 * until the agent's review lease is free, and adds the revisions the review it lost the answer of
 * stored (created since the first request, and not in the answer it finally got) to that answer,
 * so what the round learned is all counted. Such a round is reported (`retries`), since how far the
 * lost review had got when the request was sent again depends on timing.
 */
export async function review(
  w: BenchWorker,
  agent: string,
  config: Record<string, unknown>,
): Promise<ReviewSummary & { retries: number }> {
  const body = { auto_apply: true, ...(Object.keys(config).length > 0 ? { config } : {}) };
  const path = `/v1/agents/${agent}/reviews`;
  const started = new Date().toISOString();
  const deadline = Date.now() + REVIEW_WAIT_MS;
  let retries = 0;
  for (let delay = 2000; ; delay = Math.min(delay * 2, 15_000)) {
    let failure: string;
    try {
      const res = await postWithoutTimeout(w, path, body);
      if (res.status >= 200 && res.status < 300) {
        const summary = JSON.parse(res.text) as ReviewSummary;
        return { ...(retries > 0 ? await withLostRevisions(w, agent, summary, started) : summary), retries };
      }
      failure = `POST ${path} answered ${res.status}: ${res.text.slice(0, 500)}`;
      const again =
        (res.status === 503 && res.text.startsWith(PROXY_RESET)) ||
        (res.status === 409 && /already running/.test(res.text));
      if (!again) throw new Error(`${failure}\n${w.log().slice(-2000)}`);
    } catch (err) {
      if (!(err instanceof Error) || err.message.startsWith(`POST ${path} answered`)) throw err;
      failure = `POST ${path} failed: ${err.message}`;
    }
    if (Date.now() > deadline) throw new Error(`${failure}\n${w.log().slice(-2000)}`);
    retries++;
    process.stderr.write(`review of ${agent}: ${failure.slice(0, 160)}; asking again in ${delay / 1000} s\n`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** `summary` plus the revisions created since `since` that it does not hold (`GET …/revisions`, newest first). */
async function withLostRevisions(
  w: BenchWorker,
  agent: string,
  summary: ReviewSummary,
  since: string,
): Promise<ReviewSummary> {
  const known = new Set(summary.revisions.map((r) => r.revision_id));
  const lost: RevisionSummary[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`;
    const page = await api<{ revisions: (RevisionSummary & { created_at: string })[]; next_cursor: string | null }>(
      w,
      'GET',
      `/v1/agents/${agent}/revisions${q}`,
    );
    const fresh = page.revisions.filter((r) => r.created_at >= since);
    for (const r of fresh) if (!known.has(r.revision_id)) lost.push(r);
    cursor = fresh.length === page.revisions.length ? page.next_cursor : null;
  } while (cursor !== null);
  return { ...summary, revisions: [...summary.revisions, ...lost] };
}
