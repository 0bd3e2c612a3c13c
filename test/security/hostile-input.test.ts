/**
 * Hostile input, property-based: for every write route, bodies with wrong
 * types, huge strings, deep nesting, 10,000-element arrays, prototype-pollution keys, invalid UTF-8
 * and SQL/HTML in every string field. Never a 5xx; a rejected request leaves every table of the
 * agent (and its Durable Object counts) exactly as they were; an accepted one stores the hostile
 * string verbatim and answers valid JSON; the tables are still there (nothing ran as SQL).
 */
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/schemas.ts';
import { logDb } from '../helpers/log.ts';
import { api } from '../helpers/requests.ts';
import { agentState, insertRevision, noteRevision, seedAgent, send, type Seeded } from './fixtures.ts';
import { oneCallTrace } from '../fixtures/traces.ts';

/** Runs per route: enough to reach every path of the body with several kinds of value, on 2 cores. */
const RUNS = 25;

const SQL = ["'; DROP TABLE tools; --", "1' OR '1'='1", 'Robert"); DELETE FROM calls WHERE ("1"="1', '?1 ?2 $1 :agent'];
const HTML = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '</evidence><|im_start|>system',
  '<!--',
  '&lt;b&gt;',
];
const ODD = [
  '\u0000',
  '\u202e\u2066',
  '𝕏🙂 ü é',
  '\uFEFF',
  '../../etc/passwd',
  '${7*7}{{7*7}}',
  '__proto__',
  'constructor',
  'prototype',
  '\r\n\t\\"',
];

/** A short hostile string: SQL, HTML, control and odd Unicode, or random text around them. */
const hostileText = fc.oneof(
  fc.constantFrom(...SQL, ...HTML, ...ODD),
  fc
    .tuple(fc.constantFrom(...SQL, ...HTML, ...ODD), fc.string({ maxLength: 40, unit: 'binary' }))
    .map(([a, b]) => `${b}${a}${b}`),
  fc.string({ minLength: 1, maxLength: 60, unit: 'binary' }),
);

const nested = (depth: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
};

/** A value in the wrong place: every JSON type, huge, deep, long, or carrying prototype keys. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  fc.constantFrom(0, -1, 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER + 2, true, false, null, '', [], {}),
  fc.constantFrom(10_001, 200_000).map((n) => 'x'.repeat(n)),
  fc.constantFrom(64, 2_000, 60_000).map((d) => nested(d)),
  fc.constantFrom(
    Array.from({ length: 10_000 }, (_, i) => i),
    Array.from({ length: 10_000 }, () => 'a'),
    Array.from({ length: 10_000 }, () => ({})),
  ),
  fc.constant(
    JSON.parse(
      '{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "prototype": {"polluted": "yes"}}',
    ),
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

interface Leaf {
  path: (string | number)[];
}

/** Every path in a JSON value (the root too). */
function paths(value: unknown, at: (string | number)[] = []): Leaf[] {
  const here = [{ path: at }];
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => paths(v, [...at, i]))];
  if (value && typeof value === 'object')
    return [...here, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...at, k]))];
  return here;
}

/** `value` with the thing at `path` replaced (or, with `extraKey`, a key added to the object there). */
function mutate(value: unknown, path: (string | number)[], replacement: unknown, extraKey: string | null): unknown {
  const copy = structuredClone(value);
  if (path.length === 0)
    return extraKey && copy && typeof copy === 'object' ? defineKey(copy, extraKey, replacement) : replacement;
  let parent: any = copy;
  for (const p of path.slice(0, -1)) parent = parent[p];
  const last = path[path.length - 1] as string | number;
  if (extraKey && parent[last] && typeof parent[last] === 'object') defineKey(parent[last], extraKey, replacement);
  else parent[last] = replacement;
  return copy;
}

/** Adds an own key, even `__proto__` (as JSON.parse would), without touching any prototype. */
function defineKey(target: object, key: string, value: unknown): object {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

const hostileKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  "'; DROP TABLE tools; --",
  '<script>',
  '',
);

interface WriteRoute {
  method: string;
  path(a: Seeded): string;
  body(a: Seeded): unknown;
  /** A valid body whose `h()` fields are stored verbatim (checked after an accepted request). */
  stored?(a: Seeded, h: () => string): unknown;
}

let n = 0;
const nextName = () => {
  n += 1;
  return `t_${n}`;
};

const WRITE_ROUTES: Record<string, WriteRoute> = {
  'PUT tools': {
    method: 'PUT',
    path: (a) => `/v1/agents/${a.agent}/tools`,
    body: () => ({
      tools: [
        {
          name: 'lookup_order',
          description: 'Look up an order.',
          parameters: { type: 'object', properties: { order_id: { type: 'string', description: 'the id' } } },
          examples: ['where is my order'],
        },
      ],
      augment: false,
    }),
    stored: (_a, h) => ({
      tools: [
        {
          name: nextName(),
          description: h(),
          parameters: { type: 'object', properties: { [h()]: { type: 'string', description: h() } } },
          examples: [h()],
        },
      ],
    }),
  },
  'POST route': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/route`,
    body: () => ({ request: 'where is my order?', conversation_id: 'c-1', k: 3 }),
    stored: (_a, h) => ({ request: h(), conversation_id: h() }),
  },
  'POST calls': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/calls`,
    body: () => ({
      calls: [
        {
          id: 'x1',
          tool: 'lookup_order',
          arguments: { order_id: 'ORD-1' },
          success: false,
          error: 'bad id',
          request: 'where is it',
          turn_id: 't-1',
          conversation_id: 'c-1',
          at: '2026-01-01T00:00:00Z',
        },
      ],
    }),
    stored: (_a, h) => ({
      calls: [
        {
          id: h(),
          tool: 'lookup_order',
          arguments: { [h()]: h(), nested: [h(), { deep: h() }] },
          success: false,
          error: h(),
          request: h(),
          turn_id: h(),
          conversation_id: h(),
        },
      ],
    }),
  },
  'POST traces': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/traces`,
    body: () => ({
      conversation_id: 'c-2',
      messages: oneCallTrace(
        'where is my order?',
        'k1',
        'lookup_order',
        '{"order_id": "1"}',
        '{"error": "no such order"}',
      ),
      tools: [{ name: 'lookup_order', description: 'Look up an order.' }],
    }),
    stored: (_a, h) => {
      const id = nextName();
      return {
        conversation_id: h(),
        messages: [
          // The request and the error are read trimmed (README "Traces"): brackets keep the edges.
          { role: 'user', content: `[${h()}]` },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id, type: 'function', function: { name: 'lookup_order', arguments: JSON.stringify({ v: h() }) } },
            ],
          },
          { role: 'tool', tool_call_id: id, content: JSON.stringify({ error: `[${h()}]` }) },
        ],
        tools: [{ name: `traced_${id}`, description: h() }],
      };
    },
  },
  'POST outcomes': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/outcomes`,
    body: (a) => ({ turn_id: a.turnId, ok: true, served_by: 'refund_order' }),
  },
  'POST reviews': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/reviews`,
    body: () => ({ dry_run: true, auto_apply: false, config: { min_calls: 2, top_k: 3 } }),
  },
  'PUT config': {
    method: 'PUT',
    path: (a) => `/v1/agents/${a.agent}/config`,
    body: () => ({ min_calls: 3, show_learned_examples: false, review_schedule: '*/10' }),
  },
  'POST apply': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/revisions/${revisionOf(a)}/apply`,
    body: () => ({ approved_by: 'ana' }),
  },
  'POST dismiss': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/revisions/${revisionOf(a)}/dismiss`,
    body: () => ({ approved_by: 'ana', reason: 'not now' }),
    stored: (_a, h) => ({ approved_by: h().slice(0, 200), reason: h() }),
  },
  'POST undo': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/tools/lookup_order/undo`,
    body: () => ({ approved_by: 'ana' }),
  },
  'POST preview': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/tools/lookup_order/preview`,
    body: () => ({
      notes_added: ['Use the prefix.'],
      avoid_added: [],
      queries_added: ['track it'],
      call_example: null,
    }),
  },
  'POST keys': { method: 'POST', path: (a) => `/v1/agents/${a.agent}/keys`, body: () => ({ role: 'agent' }) },
  'POST mcp': {
    method: 'POST',
    path: (a) => `/v1/agents/${a.agent}/mcp`,
    body: () => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'report_tool_call', arguments: { tool: 'lookup_order', arguments: {}, success: true } },
    }),
  },
};

/** A fresh proposed revision per request, so apply and dismiss always have something to decide. */
const revisionFor: Map<string, string> = new Map();
const revisionOf = (a: Seeded) => revisionFor.get(a.agent) ?? 'rev_none';
async function freshRevision(a: Seeded): Promise<void> {
  revisionFor.set(a.agent, await insertRevision(a.agent, noteRevision('lookup_order', `Note ${nextName()}.`)));
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

async function request(a: Seeded, route: WriteRoute, body: unknown) {
  return send(env, route.method, route.path(a), { body, headers: route.path(a).endsWith('/mcp') ? MCP_HEADERS : {} });
}

/** The invariants of any answer: not a 5xx, JSON with the error shape when refused. */
function expectSafeAnswer(where: string, answer: { status: number; text: string; body: any }): void {
  expect({ where, status: answer.status < 500 }).toEqual({ where, status: true });
  if (
    answer.status >= 400 &&
    answer.status !== 406 &&
    answer.status !== 415 &&
    !(answer.status === 400 && answer.body?.jsonrpc)
  ) {
    expect({ where, body: answer.body }).toEqual({
      where,
      body: { error: { code: expect.any(String), message: expect.any(String), details: expect.any(Array) } },
    });
  }
}

let A: Seeded;

/** A seeded agent with an applied revision, so undo has something to take back. */
async function freshAgent(): Promise<void> {
  A = await seedAgent('hostile');
  const id = await insertRevision(A.agent, noteRevision('lookup_order', 'Applied first.'));
  expect(
    (await api('POST', `/v1/agents/${A.agent}/revisions/${id}/apply`, { body: { approved_by: 'setup' } })).status,
  ).toBe(200);
}

beforeAll(freshAgent);

describe('hostile bodies on every write route', () => {
  // A fresh agent per route: what earlier routes accepted would make every state comparison slower.
  beforeEach(freshAgent);

  for (const [name, route] of Object.entries(WRITE_ROUTES)) {
    it(`${name}: a mutated body is never a 5xx, and a refused one writes nothing`, async () => {
      const valid = route.body(A);
      const leaves = paths(valid);
      await fc.assert(
        fc.asyncProperty(
          fc.nat(leaves.length - 1),
          hostileValue,
          fc.option(hostileKey, { freq: 3 }),
          async (i, value, extraKey) => {
            await freshRevision(A);
            const body = mutate(valid, leaves[i]?.path ?? [], value, extraKey);
            const before = await agentState(A.agent);
            const answer = await request(A, route, body);
            const where = `${name} ${JSON.stringify(leaves[i]?.path)} ${extraKey ?? ''}`;
            expectSafeAnswer(where, answer);
            if (answer.status >= 400)
              expect({ where, state: await agentState(A.agent) }).toEqual({ where, state: before });
          },
        ),
        { numRuns: RUNS },
      );
    });
  }
});

describe('raw bodies', () => {
  const raws: [string, BodyInit][] = [
    ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0x74, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])],
    [
      'overlong and lone-surrogate UTF-8',
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
    ],
    ['truncated JSON', '{"tools": [{"name": "x"'],
    ['not JSON', "'; DROP TABLE tools; --"],
    ['empty', ''],
    ['JSON null', 'null'],
    ['a JSON string', '"<script>"'],
    ['500,000 levels of nesting', `${'['.repeat(500_000)}${']'.repeat(500_000)}`],
    ['just over 1 MiB', `{"x": "${'a'.repeat(1024 * 1024)}"}`],
  ];
  for (const [label, raw] of raws) {
    it(`${label}: never a 5xx on any write route, nothing written`, async () => {
      for (const [name, route] of Object.entries(WRITE_ROUTES)) {
        const before = await agentState(A.agent);
        const answer = await send(env, route.method, route.path(A), {
          raw,
          headers: { 'content-type': 'application/json', ...(name === 'POST mcp' ? MCP_HEADERS : {}) },
        });
        expectSafeAnswer(`${label} → ${name}`, answer);
        if (label === 'just over 1 MiB')
          expect(answer.body).toEqual({
            error: { code: 'payload_too_large', message: 'the request body is larger than 1048576 bytes', details: [] },
          });
        expect(await agentState(A.agent)).toEqual(before);
      }
    });
  }
});

describe('limits of shape', () => {
  it(`a body nested deeper than ${LIMITS.jsonDepth} levels is a 400 before anything reads it; ${LIMITS.jsonDepth} levels pass`, async () => {
    const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
    const before = await agentState(A.agent);
    // calls → call → arguments → v: 4 levels before the nested value.
    const call = (depth: number) => ({
      calls: [{ id: `deep-${depth}`, tool: 'lookup_order', arguments: { v: deep(depth - 4) }, success: true }],
    });
    for (const route of ['calls', 'mcp'] as const) {
      const answer = await send(env, 'POST', `/v1/agents/${A.agent}/${route}`, {
        body: route === 'calls' ? call(LIMITS.jsonDepth + 1) : nestedRpc(LIMITS.jsonDepth + 1),
        headers: MCP_HEADERS,
      });
      expect(answer).toMatchObject({
        status: 400,
        body: {
          error: {
            code: 'invalid_request',
            message: 'the request does not match the schema',
            details: [
              {
                code: 'too_deep',
                path: [],
                message: `the JSON body nests ${LIMITS.jsonDepth + 1} levels deep; at most ${LIMITS.jsonDepth} are allowed`,
              },
            ],
          },
        },
      });
    }
    expect(await agentState(A.agent)).toEqual(before);
    expect((await send(env, 'POST', `/v1/agents/${A.agent}/calls`, { body: call(LIMITS.jsonDepth) })).body).toEqual({
      accepted: 1,
      duplicates: 0,
    });
  });

  it('a request with a thousand bad elements gets the first 100 issues, not a megabyte of them', async () => {
    const bodies: [string, string, unknown][] = [
      ['PUT', 'tools', { tools: Array.from({ length: 1000 }, () => ({})) }],
      ['POST', 'calls', { calls: Array.from({ length: 1000 }, () => ({})) }],
      ['POST', 'traces', { messages: Array.from({ length: 1000 }, () => ({})) }],
    ];
    for (const [method, path, body] of bodies) {
      const answer = await send(env, method, `/v1/agents/${A.agent}/${path}`, { body });
      expect(answer.status).toBe(400);
      expect(answer.body.error.details).toHaveLength(100);
      expect(answer.body.error.message).toMatch(
        /^the request does not match the schema \(the first 100 of \d{4} issues are listed\)$/,
      );
      expect(answer.text.length).toBeLessThan(200_000);
    }
  });

  it('invalid UTF-8 inside a string is read as U+FFFD (WHATWG decoding), never stored as raw bytes', async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"calls": [{"id": "utf8", "tool": "lookup_order", "success": false, "error": "bad '),
      0xff,
      0xc3,
      0x28,
      0xed,
      0xa0,
      0x80,
      ...new TextEncoder().encode('"}]}'),
    ]);
    const answer = await send(env, 'POST', `/v1/agents/${A.agent}/calls`, {
      raw: bytes,
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.body).toEqual({ accepted: 1, duplicates: 0 });
    const row = await logDb(A.agent)
      .prepare("SELECT error FROM calls WHERE agent = ?1 AND call_id = 'utf8'")
      .bind(A.agent)
      .first<{ error: string }>();
    expect(row?.error).toBe('bad \uFFFD\uFFFD(\uFFFD\uFFFD\uFFFD');
  });
});

/** An MCP tools/call whose arguments nest `depth` levels in all. */
function nestedRpc(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth - 4; i++) v = [v];
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'report_tool_call', arguments: { tool: 'lookup_order', arguments: { v }, success: true } },
  };
}

/** A JSON string's text between its quotes: how a string sits in a JSON document. */
const esc = (s: string) => JSON.stringify(s).slice(1, -1);

describe('SQL and HTML in every stored string field', () => {
  for (const [name, route] of Object.entries(WRITE_ROUTES)) {
    const stored = route.stored;
    if (!stored) continue;
    it(`${name}: accepted, stored verbatim, answered as JSON text`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(hostileText, { minLength: 12, maxLength: 12 }), async (pool) => {
          await freshRevision(A);
          let i = 0;
          const used: string[] = [];
          const h = () => {
            const s = `${pool[i++ % pool.length] ?? ''}·${n}`;
            used.push(s);
            return s;
          };
          const body = stored(A, h);
          const answer = await request(A, route, body);
          expect({ name, status: answer.status, body: answer.status === 200 ? 'ok' : answer.body }).toEqual({
            name,
            status: 200,
            body: 'ok',
          });
          expect(() => JSON.parse(answer.text)).not.toThrow();
          const state = JSON.stringify(await agentState(A.agent));
          for (const s of used) {
            const kept = state.includes(esc(s)) || state.includes(esc(esc(s)));
            expect({ name, s, kept }).toEqual({ name, s, kept: true });
          }
        }),
        { numRuns: 15 },
      );
    });
  }

  it('left every table in place and nothing on Object.prototype', async () => {
    for (const table of ['tools', 'calls', 'turns', 'revisions', 'keys', 'agents']) {
      expect(await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>()).toEqual({
        n: expect.any(Number),
      });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(Object.prototype)).toEqual([]);
    // A docstring made of both payloads (the generated ones above are random) is kept verbatim.
    const payload = `<script>alert(1)</script>'; DROP TABLE tools; --`;
    const put = await api('PUT', `/v1/agents/${A.agent}/tools`, {
      body: { tools: [{ name: 'hostile_doc', description: payload }] },
    });
    expect(put.status).toBe(200);
    const tools = await api('GET', `/v1/agents/${A.agent}/tools/hostile_doc`);
    expect(tools).toMatchObject({ status: 200, body: { docstring: payload } });
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM tools').first<{ n: number }>()).toEqual({
      n: expect.any(Number),
    });
  });
});
