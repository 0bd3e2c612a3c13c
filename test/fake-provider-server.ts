/**
 * Local fakes of the Anthropic Messages API (`POST /v1/messages`) and the OpenAI Responses API
 * (`POST /v1/responses`), started in Node by test/global-setup.ts. Each request is checked against
 * the documented tool-search shapes (docs/tool-delivery.md) and a violation is answered 400 and
 * recorded; the `tools` array of every request must be byte-identical to the first request of the
 * same model (the cached prefix). The model's replies are scripted per model name:
 * `POST /_script {model, replies: [content or output arrays]}`; `GET /_calls?model=M` →
 * `{bodies, violations}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLoopback } from './helpers/loopback.ts';

interface State {
  replies: unknown[][];
  bodies: unknown[];
  violations: string[];
  tools: string | null;
}

export interface FakeProviders {
  url: string;
  close(): Promise<void>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const keysWithin = (o: Obj, allowed: string[]) => Object.keys(o).every((k) => allowed.includes(k));

/** Problems of an Anthropic Messages request with a custom tool search. */
function anthropicProblems(body: Obj): string[] {
  const p: string[] = [];
  if (typeof body.model !== 'string') p.push('model must be a string');
  if (typeof body.max_tokens !== 'number') p.push('max_tokens must be a number');
  if (!Array.isArray(body.messages) || body.messages.length === 0) p.push('messages must be a non-empty array');
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const names = new Set<string>();
  for (const t of tools) {
    if (
      !isObj(t) ||
      typeof t.name !== 'string' ||
      typeof t.description !== 'string' ||
      !isObj(t.input_schema) ||
      !keysWithin(t, ['name', 'description', 'input_schema', 'defer_loading'])
    ) {
      p.push(`tool is not {name, description, input_schema[, defer_loading]}: ${JSON.stringify(t).slice(0, 120)}`);
      continue;
    }
    if (t.defer_loading !== undefined && t.defer_loading !== true)
      p.push(`defer_loading of ${t.name} must be true when present`);
    names.add(t.name);
  }
  if (!tools.some((t) => isObj(t) && t.defer_loading !== true))
    p.push('at least one tool (the search tool) must not be deferred');
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObj(m) || !Array.isArray(m.content)) continue;
    for (const block of m.content) {
      if (!isObj(block) || block.type !== 'tool_result' || !Array.isArray(block.content)) continue;
      for (const ref of block.content) {
        if (!isObj(ref) || ref.type !== 'tool_reference') continue;
        if (!keysWithin(ref, ['type', 'tool_name']) || typeof ref.tool_name !== 'string')
          p.push('tool_reference must be {type, tool_name}');
        else if (!names.has(ref.tool_name)) p.push(`tool_reference names ${ref.tool_name}, which is not in tools`);
      }
    }
  }
  return p;
}

/** Problems of an OpenAI Responses request with a client-executed tool_search. */
function responsesProblems(body: Obj): string[] {
  const p: string[] = [];
  if (typeof body.model !== 'string') p.push('model must be a string');
  if (!Array.isArray(body.input)) p.push('input must be an array');
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const fn = (t: unknown) =>
    isObj(t) &&
    t.type === 'function' &&
    typeof t.name === 'string' &&
    typeof t.description === 'string' &&
    isObj(t.parameters) &&
    keysWithin(t, ['type', 'name', 'description', 'parameters', 'defer_loading', 'strict']);
  let searches = 0;
  for (const t of tools) {
    if (isObj(t) && t.type === 'tool_search') {
      searches++;
      if (t.execution !== 'client' || typeof t.description !== 'string' || !isObj(t.parameters))
        p.push('a client tool_search needs execution "client", a description and parameters');
    } else if (!fn(t)) p.push(`tool is not a Responses function: ${JSON.stringify(t).slice(0, 120)}`);
  }
  if (searches !== 1) p.push('exactly one tool_search tool expected');
  const calls = new Set<string>();
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (!isObj(item)) continue;
    if (item.type === 'tool_search_call' && typeof item.call_id === 'string') calls.add(item.call_id);
    if (item.type === 'tool_search_output') {
      if (typeof item.call_id !== 'string' || !calls.has(item.call_id))
        p.push('tool_search_output must answer an earlier tool_search_call');
      if (item.execution !== 'client') p.push('tool_search_output needs execution "client"');
      if (!Array.isArray(item.tools) || !item.tools.every(fn))
        p.push('tool_search_output tools must be Responses functions');
    }
    if (item.type === 'function_call_output' && typeof item.call_id !== 'string')
      p.push('function_call_output needs call_id');
  }
  return p;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startFakeProviders(): Promise<FakeProviders> {
  const states = new Map<string, State>();
  const stateOf = (model: string) => {
    let s = states.get(model);
    if (!s) {
      s = { replies: [], bodies: [], violations: [], tools: null };
      states.set(model, s);
    }
    return s;
  };
  let seq = 0;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const text = req.method === 'POST' ? await readBody(req) : '';
    if (url.pathname === '/_script') {
      const { model, replies } = JSON.parse(text) as { model: string; replies: unknown[][] };
      stateOf(model).replies.push(...replies);
      return send(res, 200, { ok: true });
    }
    if (url.pathname === '/_calls') {
      const s = stateOf(url.searchParams.get('model') ?? '');
      return send(res, 200, { bodies: s.bodies, violations: s.violations });
    }
    const anthropic = url.pathname === '/v1/messages';
    if (!anthropic && url.pathname !== '/v1/responses') return send(res, 404, { error: { message: 'no such route' } });
    let body: Obj;
    try {
      body = JSON.parse(text) as Obj;
    } catch {
      return send(res, 400, { error: { message: 'body is not JSON' } });
    }
    const s = stateOf(String(body.model));
    s.bodies.push(body);
    const problems = anthropic ? anthropicProblems(body) : responsesProblems(body);
    if (anthropic && req.headers['anthropic-version'] === undefined) problems.push('anthropic-version header missing');
    const tools = JSON.stringify(body.tools ?? null);
    if (s.tools === null) s.tools = tools;
    else if (s.tools !== tools) problems.push('tools differ from the first request: the cached prefix is broken');
    if (problems.length > 0) {
      s.violations.push(...problems);
      return send(res, 400, { error: { message: problems.join('; ') } });
    }
    const reply = s.replies.shift() ?? [];
    seq++;
    if (anthropic) {
      const toolUse = reply.some((b) => isObj(b) && b.type === 'tool_use');
      return send(res, 200, {
        id: `msg_${seq}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: reply,
        stop_reason: toolUse ? 'tool_use' : 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      });
    }
    return send(res, 200, {
      id: `resp_${seq}`,
      object: 'response',
      model: body.model,
      status: 'completed',
      output: reply,
    });
  });
  return listenLoopback(server, 'the fake providers');
}
