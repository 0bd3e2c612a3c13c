/**
 * A local server that speaks the OpenAI HTTP protocol (`POST /v1/chat/completions`,
 * `POST /v1/embeddings`), started in Node by test/global-setup.ts. Tests reach it from workerd.
 *
 * Behaviour is scripted per model name so tests can run side by side without sharing state:
 * - the reply content for model M is taken from the queue `POST /_script {model, replies: [...]}`;
 *   each reply is `{content}` (a 200 with that message content), `{status, body?}` (an HTTP error),
 *   or `{delay_ms, content}` (answers late: a timeout for a short client timeout). Any reply may
 *   carry response `headers` (e.g. `{"retry-after": "0"}` on a 429). `{pick: "words"}` answers a
 *   request that offers `tools` with a call of the offered tool whose description shares the most
 *   words (4 letters or more) with the user's message, each word of a "Not for" line counting
 *   against it (ties: the first offered; none sharing a word: a text answer); its first argument
 *   is the message. A stand-in for a model choosing from the model views it is shown.
 *   When the queue is empty the last reply repeats.
 * - `GET /_calls?model=M` → `{"calls": n, "bodies": [...], "attempts": [...], "logical_calls": m}`:
 *   what the server received for M. `calls` counts HTTP requests (every retry is one). `attempts`
 *   lists each request's `x-whetstone-attempt` header (1, 2, … within one logical call; null when
 *   absent), and `logical_calls` counts the requests that started a call (attempt 1 or no header),
 *   so a 429 answered by a retry shows `calls: 2, logical_calls: 1`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback } from './helpers/loopback.ts';

export interface ScriptedReply {
  content?: string;
  status?: number;
  body?: unknown;
  delay_ms?: number;
  headers?: Record<string, string>;
  pick?: 'words';
}

interface ModelState {
  replies: ScriptedReply[];
  last: ScriptedReply | undefined;
  bodies: unknown[];
  attempts: (number | null)[];
}

export interface FakeOpenAI {
  url: string;
  close(): Promise<void>;
}

/** Starts the fake on a free loopback port. */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const models = new Map<string, ModelState>();
  const stateOf = (model: string): ModelState => {
    let s = models.get(model);
    if (!s) {
      s = { replies: [], last: undefined, bodies: [], attempts: [] };
      models.set(model, s);
    }
    return s;
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => send(res, 500, { error: { message: String(err) } }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/_script') {
      const body = (await readJson(req)) as { model: string; replies: ScriptedReply[]; reset?: boolean };
      const s = stateOf(body.model);
      if (body.reset !== false) {
        s.bodies = [];
        s.attempts = [];
        s.last = undefined;
        s.replies = [];
      }
      s.replies.push(...body.replies);
      return send(res, 200, { ok: true });
    }
    if (req.method === 'GET' && url.pathname === '/_calls') {
      const s = stateOf(url.searchParams.get('model') ?? '');
      const logical = s.attempts.filter((a) => a === null || a === 1).length;
      return send(res, 200, { calls: s.bodies.length, bodies: s.bodies, attempts: s.attempts, logical_calls: logical });
    }
    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      const body = (await readJson(req)) as { model: string };
      const s = stateOf(body.model);
      s.bodies.push(body);
      s.attempts.push(attemptOf(req));
      const reply = s.replies.shift() ?? s.last ?? { content: '{}' };
      s.last = reply;
      if (reply.delay_ms) await new Promise((r) => setTimeout(r, reply.delay_ms));
      if (reply.status && reply.status !== 200) {
        const error = reply.body ?? { error: { message: `scripted ${reply.status}`, type: 'server_error' } };
        return send(res, reply.status, error, reply.headers);
      }
      if (reply.pick === 'words') {
        const call = pickByWords(body as unknown as PickBody);
        const message = call
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: call.name, arguments: call.arguments } },
              ],
            }
          : { role: 'assistant', content: 'No tool fits.' };
        return send(res, 200, {
          id: `chatcmpl-${s.bodies.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, finish_reason: call ? 'tool_calls' : 'stop', message }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      }
      return send(res, 200, {
        id: `chatcmpl-${s.bodies.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply.content ?? '' } }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    }
    if (req.method === 'POST' && url.pathname === '/v1/embeddings') {
      const body = (await readJson(req)) as { model: string; input: string | string[]; dimensions?: number };
      const s = stateOf(body.model);
      s.bodies.push(body);
      s.attempts.push(attemptOf(req));
      const reply = s.replies.shift() ?? s.last;
      if (reply) s.last = reply;
      if (reply?.status && reply.status !== 200) {
        return send(res, reply.status, reply.body ?? { error: { message: 'scripted' } }, reply.headers);
      }
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      const dims = body.dimensions ?? 8;
      return send(res, 200, {
        object: 'list',
        model: body.model,
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: letterVector(text, dims) })),
        usage: { prompt_tokens: 1, total_tokens: 1 },
      });
    }
    send(res, 404, { error: { message: `no route ${req.method} ${url.pathname}` } });
  }

  return listenLoopback(server, 'the fake OpenAI server');
}

interface PickBody {
  messages: { role: string; content: string }[];
  tools?: { function: { name: string; description: string; parameters?: { properties?: Record<string, unknown> } } }[];
}

const wordsOf = (text: string): Set<string> => new Set(text.toLowerCase().match(/[a-z0-9]{4,}/g) ?? []);

/** `{pick: "words"}`: the offered tool sharing the most words with the request, "Not for" lines against it. */
function pickByWords(body: PickBody): { name: string; arguments: string } | null {
  const request = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const asked = wordsOf(request);
  let best: { name: string; score: number; first: string | undefined } | null = null;
  for (const t of body.tools ?? []) {
    const lines = t.function.description.split('\n');
    const against = lines.filter((l) => /^\W*Not for /.test(l)).join(' ');
    const forIt = lines.filter((l) => !/^\W*Not for /.test(l)).join(' ');
    const count = (text: string) => [...wordsOf(text)].filter((w) => asked.has(w)).length;
    const score = count(forIt) - count(against);
    if (score > 0 && (best === null || score > best.score))
      best = { name: t.function.name, score, first: Object.keys(t.function.parameters?.properties ?? {})[0] };
  }
  if (!best) return null;
  return { name: best.name, arguments: JSON.stringify(best.first ? { [best.first]: request } : {}) };
}

/** A deterministic stand-in embedding: letter frequencies folded into `dims` slots. */
function letterVector(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const ch of text.toLowerCase()) {
    const c = ch.charCodeAt(0);
    if (c >= 97 && c <= 122) v[(c - 97) % dims] = (v[(c - 97) % dims] ?? 0) + 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

/** The client's `x-whetstone-attempt` header (src/adapters/openai.ts), or null when it sent none. */
function attemptOf(req: IncomingMessage): number | null {
  const raw = req.headers['x-whetstone-attempt'];
  const n = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isInteger(n) && n > 0 ? n : null;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
