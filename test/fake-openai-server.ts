/**
 * A local server that speaks the OpenAI HTTP protocol (`POST /v1/chat/completions`,
 * `POST /v1/embeddings`), started in Node by test/global-setup.ts. Tests reach it from workerd.
 *
 * Behaviour is scripted per model name so tests can run side by side without sharing state:
 * - the reply content for model M is taken from the queue `POST /_script {model, replies: [...]}`;
 *   each reply is `{content}` (a 200 with that message content), `{status, body?}` (an HTTP error),
 *   or `{delay_ms, content}` (answers late: a timeout for a short client timeout).
 *   When the queue is empty the last reply repeats.
 * - `GET /_calls?model=M` → `{"calls": n, "bodies": [...]}`: what the server received for M.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface ScriptedReply {
  content?: string;
  status?: number;
  body?: unknown;
  delay_ms?: number;
}

interface ModelState {
  replies: ScriptedReply[];
  last: ScriptedReply | undefined;
  bodies: unknown[];
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
      s = { replies: [], last: undefined, bodies: [] };
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
        s.last = undefined;
        s.replies = [];
      }
      s.replies.push(...body.replies);
      return send(res, 200, { ok: true });
    }
    if (req.method === 'GET' && url.pathname === '/_calls') {
      const s = stateOf(url.searchParams.get('model') ?? '');
      return send(res, 200, { calls: s.bodies.length, bodies: s.bodies });
    }
    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      const body = (await readJson(req)) as { model: string };
      const s = stateOf(body.model);
      s.bodies.push(body);
      const reply = s.replies.shift() ?? s.last ?? { content: '{}' };
      s.last = reply;
      if (reply.delay_ms) await new Promise((r) => setTimeout(r, reply.delay_ms));
      if (reply.status && reply.status !== 200) {
        return send(res, reply.status, reply.body ?? { error: { message: `scripted ${reply.status}`, type: 'server_error' } });
      }
      return send(res, 200, {
        id: `chatcmpl-${s.bodies.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply.content ?? '' } },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    }
    if (req.method === 'POST' && url.pathname === '/v1/embeddings') {
      const body = (await readJson(req)) as { model: string; input: string | string[]; dimensions?: number };
      const s = stateOf(body.model);
      s.bodies.push(body);
      const reply = s.replies.shift() ?? s.last;
      if (reply) s.last = reply;
      if (reply?.status && reply.status !== 200) return send(res, reply.status, reply.body ?? { error: { message: 'scripted' } });
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

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fake OpenAI server has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
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

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
