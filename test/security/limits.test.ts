/**
 * The documented limits (docs/api.md, README "Limits"): the README table says what
 * src/schemas.ts LIMITS enforce, and each limit holds at its edge: at the limit accepted, one past
 * it refused with its documented status, nothing written.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { app } from '../../src/app.ts';
import readme from '../../docs/api.md?raw';
import { LIMITS } from '../../src/schemas.ts';
import { eventually } from '../helpers/eventually.ts';
import { logDb } from '../helpers/log.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';
import { agentState } from './fixtures.ts';
import { oneCallTrace } from '../fixtures/traces.ts';

const n = (x: number) => x.toLocaleString('en-US');

/** Each docs/api.md row as it must read, from the numbers in the code. */
const ROWS = [
  `| request body | ${LIMITS.bodyBytes / 1024 / 1024} MiB (an import: ${LIMITS.importBytes / 1024 / 1024} MiB) | 413 |`,
  `| tools per \`PUT …/tools\` | ${n(LIMITS.toolsPerPut)} | 400 |`,
  `| calls per \`POST …/calls\` | ${n(LIMITS.callsPerPost)} | 400 |`,
  `| request text (\`/route\`, a call's \`request\`, MCP \`search_tools\`) | the body's 1 MiB; the log keeps ${n(LIMITS.requestChars)} characters | 413 past the body limit |`,
  `| tool description | ${n(LIMITS.descriptionChars)} characters | 400 |`,
  `| error text of a call | ${n(LIMITS.errorChars)} characters | 400 |`,
  `| a call's \`arguments\` as JSON (a reported call, a tool call in a trace) | ${LIMITS.argumentBytes / 1024} KiB | 400, naming the call |`,
  `| hand-written examples per tool | ${LIMITS.examplesPerTool}, each ≤ ${LIMITS.exampleChars} characters | 400 |`,
  `| parameter schema | ${LIMITS.schemaBytes / 1024} KiB | 400 |`,
  `| ids (\`turn_id\`, \`conversation_id\`, call \`id\`) | ${LIMITS.idChars} characters | 400 |`,
  `| messages per trace, and tool calls in one trace | ${n(LIMITS.traceMessages)} each | 400 |`,
  `| JSON nesting of a body (and of a trace's argument text) | ${LIMITS.jsonDepth} levels | 400 (a deeper argument text reads as \`{}\`) |`,
];

describe('docs/api.md "Limits"', () => {
  it('states every limit the code enforces, with the number in src/schemas.ts', () => {
    const table = readme.split('## Limits')[1]?.split('\n## ')[0] ?? '';
    for (const row of ROWS) expect(table).toContain(row);
    expect(
      table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| what') && !l.startsWith('|---')),
    ).toHaveLength(ROWS.length);
  });
});

// A fresh agent per test: a 1,000-tool agent would make every state comparison slow.
let agent: string;
beforeEach(async () => {
  agent = agentId('limits');
  await api('PUT', `/v1/agents/${agent}/tools`, {
    body: { tools: [tool('lookup', 'Look up a record.', { id: { type: 'string' } })] },
  });
});

/** Sends `at` (must pass) and `past` (must be refused with `status`, writing nothing). */
async function edge(method: string, path: string, at: unknown, past: unknown, status = 400) {
  const before = await agentState(agent);
  const refused = await api(method, path, { body: past });
  expect(refused.status).toBe(status);
  expect(refused.body.error.code).toBe(status === 413 ? 'payload_too_large' : 'invalid_request');
  expect(await agentState(agent)).toEqual(before);
  const accepted = await api(method, path, { body: at });
  expect([accepted.status, accepted.body?.error ?? null]).toEqual([200, null]);
  // /route writes its turn after answering: let it land before the next edge compares states.
  if (path.endsWith('/route'))
    await eventually(async () =>
      ((await agentState(agent)).turns as { turn_id: string }[]).find((t) => t.turn_id === accepted.body.turn_id),
    );
}

const x = (len: number) => 'x'.repeat(len);
const calls = (list: unknown[]) => ({ calls: list });
const call = (extra: Record<string, unknown> = {}) => ({ tool: 'lookup', arguments: {}, success: false, ...extra });
const tools = (list: unknown[]) => ({ tools: list });

describe('each limit at its edge', () => {
  it('request body: 1 MiB', async () => {
    // ~4.1 KB a call: the most calls that fit under 1 MiB pass, one more is a 413.
    const big = (count: number) =>
      calls(Array.from({ length: count }, (_, i) => call({ id: `b${String(i).padStart(4, '0')}`, error: x(4000) })));
    let fit = 1;
    while (JSON.stringify(big(fit + 1)).length <= LIMITS.bodyBytes) fit += 1;
    expect(JSON.stringify(big(fit + 1)).length).toBeGreaterThan(LIMITS.bodyBytes);
    await edge('POST', `/v1/agents/${agent}/calls`, big(fit), big(fit + 1), 413);
  });

  it('request body: a streamed body with no Content-Length is cut off at 1 MiB too', async () => {
    const before = await agentState(agent);
    const bytes = new TextEncoder().encode(
      `{"calls": [${' '.repeat(LIMITS.bodyBytes)}{"tool": "lookup", "success": true}]}`,
    );
    const body = new ReadableStream({ start: (c) => (c.enqueue(bytes), c.close()) });
    const ctx = createExecutionContext();
    const init = {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    };
    const res = await app.fetch(
      new Request(`http://whetstone.test/v1/agents/${agent}/calls`, init as RequestInit),
      env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect([res.status, res.headers.get('content-length'), await res.json()]).toEqual([
      413,
      null,
      { error: { code: 'payload_too_large', message: 'the request body is larger than 1048576 bytes', details: [] } },
    ]);
    expect(await agentState(agent)).toEqual(before);
  });

  it('batch lengths: tools per PUT, calls per POST, messages per trace', async () => {
    const defs = (count: number) => tools(Array.from({ length: count }, (_, i) => tool(`t${i}`, `Tool number ${i}.`)));
    await edge('PUT', `/v1/agents/${agent}/tools`, defs(LIMITS.toolsPerPut), defs(LIMITS.toolsPerPut + 1));
    const many = (count: number) => calls(Array.from({ length: count }, (_, i) => call({ id: `m${count}-${i}` })));
    await edge('POST', `/v1/agents/${agent}/calls`, many(LIMITS.callsPerPost), many(LIMITS.callsPerPost + 1));
    const trace = (count: number) => ({
      messages: Array.from({ length: count }, (_, i) => ({ role: 'user', content: `message ${count}-${i}` })),
    });
    await edge('POST', `/v1/agents/${agent}/traces`, trace(LIMITS.traceMessages), trace(LIMITS.traceMessages + 1));
  });

  it('string lengths: request, description, error, examples, ids, parameter schema', async () => {
    await edge(
      'POST',
      `/v1/agents/${agent}/calls`,
      calls([call({ error: x(LIMITS.errorChars) })]),
      calls([call({ error: x(LIMITS.errorChars + 1) })]),
    );
    for (const field of ['id', 'turn_id', 'conversation_id']) {
      await edge(
        'POST',
        `/v1/agents/${agent}/calls`,
        calls([call({ [field]: x(LIMITS.idChars) })]),
        calls([call({ [field]: `${x(LIMITS.idChars)}y` })]),
      );
    }
    await edge(
      'PUT',
      `/v1/agents/${agent}/tools`,
      tools([tool('d', x(LIMITS.descriptionChars))]),
      tools([tool('d', x(LIMITS.descriptionChars + 1))]),
    );
    const examples = (count: number, len: number) =>
      tools([
        {
          ...tool('e', 'Examples.'),
          examples: Array.from({ length: count }, (_, i) => `${i} ${x(len - 1 - String(i).length)}`),
        },
      ]);
    await edge(
      'PUT',
      `/v1/agents/${agent}/tools`,
      examples(LIMITS.examplesPerTool, LIMITS.exampleChars),
      examples(LIMITS.examplesPerTool + 1, 10),
    );
    await edge(
      'PUT',
      `/v1/agents/${agent}/tools`,
      examples(1, LIMITS.exampleChars),
      examples(1, LIMITS.exampleChars + 1),
    );
    const schema = (bytes: number) => {
      const base = { type: 'object', properties: { p: { type: 'string', description: '' } } };
      const description = x(bytes - JSON.stringify(base).length);
      return tools([{ name: 's', parameters: { type: 'object', properties: { p: { type: 'string', description } } } }]);
    };
    await edge('PUT', `/v1/agents/${agent}/tools`, schema(LIMITS.schemaBytes), schema(LIMITS.schemaBytes + 1));
  });
});

describe("a call's arguments: 16 KiB as JSON", () => {
  /** Arguments whose JSON is exactly `bytes` UTF-8 bytes: `{"v":"…"}` is 8 bytes around the text. */
  const args = (bytes: number) => ({ v: 'é'.repeat(Math.floor((bytes - 8) / 2)) + 'x'.repeat((bytes - 8) % 2) });

  it('reported calls: at the limit accepted, one byte past it a 400 naming the call, nothing written', async () => {
    expect(new TextEncoder().encode(JSON.stringify(args(LIMITS.argumentBytes))).length).toBe(LIMITS.argumentBytes);
    await edge(
      'POST',
      `/v1/agents/${agent}/calls`,
      calls([call({ id: 'fits', arguments: args(LIMITS.argumentBytes) })]),
      calls([call({ id: 'fits2' }), call({ id: 'huge-1', arguments: args(LIMITS.argumentBytes + 1) })]),
    );
    const refused = await api('POST', `/v1/agents/${agent}/calls`, {
      body: calls([call({ arguments: args(40_000) })]),
    });
    expect(refused.body.error.details).toEqual([
      expect.objectContaining({
        code: 'custom',
        path: ['calls', 0, 'arguments'],
        message: 'the arguments of a call of tool lookup are 40,000 bytes as JSON; at most 16,384 are allowed',
      }),
    ]);
    const named = await api('POST', `/v1/agents/${agent}/calls`, {
      body: calls([call({ id: 'ok' }), call({ id: 'huge-1', arguments: args(LIMITS.argumentBytes + 1) })]),
    });
    expect([named.status, named.body.error.code, named.body.error.details]).toEqual([
      400,
      'invalid_request',
      [
        expect.objectContaining({
          path: ['calls', 1, 'arguments'],
          message: 'the arguments of call "huge-1" (tool lookup) are 16,385 bytes as JSON; at most 16,384 are allowed',
        }),
      ],
    ]);
  });

  it('tool calls in a trace, both formats: past the limit a 400 naming the call, nothing written', async () => {
    const openai = (bytes: number) => ({
      messages: oneCallTrace('look it up', 'tc_1', 'lookup', JSON.stringify(args(bytes)), 'found'),
    });
    await edge('POST', `/v1/agents/${agent}/traces`, openai(LIMITS.argumentBytes), openai(LIMITS.argumentBytes + 1));
    const anthropic = (bytes: number) => ({
      format: 'anthropic',
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: args(bytes) }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'found' }] },
      ],
    });
    await edge(
      'POST',
      `/v1/agents/${agent}/traces`,
      anthropic(LIMITS.argumentBytes),
      anthropic(LIMITS.argumentBytes + 1),
    );
    const refused = await api('POST', `/v1/agents/${agent}/traces`, { body: anthropic(LIMITS.argumentBytes + 1) });
    expect(JSON.stringify(refused.body.error.details)).toContain(
      'the arguments of call \\"tu_1\\" (tool lookup) are 16,385 bytes as JSON; at most 16,384 are allowed',
    );
  });
});

describe('long requests (docs/api.md "Long requests")', () => {
  const long = `Please look at this trace. ${'stack frame at module.function (file.ts:12:7)\n'.repeat(440)}and refund order 42`;

  it('routes a 20,000-character request, and stores it capped with a visible marker', async () => {
    expect(long.length).toBeGreaterThan(20_000);
    const routed = await api('POST', `/v1/agents/${agent}/route`, { body: { request: long } });
    expect(routed.status).toBe(200);
    expect(routed.body.tools.map((t: { name: string }) => t.name)).toEqual(['lookup']);
    const calls = [{ tool: 'lookup', arguments: {}, success: true, request: long, turn_id: routed.body.turn_id }];
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
    const turn = await logDb(agent)
      .prepare('SELECT request FROM turns WHERE agent = ?1 AND turn_id = ?2')
      .bind(agent, routed.body.turn_id)
      .first<{ request: string }>();
    const call = await logDb(agent)
      .prepare('SELECT request FROM calls WHERE agent = ?1')
      .bind(agent)
      .first<{ request: string }>();
    for (const stored of [turn?.request ?? '', call?.request ?? '']) {
      expect(stored.length).toBeLessThanOrEqual(LIMITS.requestChars);
      expect(stored.startsWith('Please look at this trace.')).toBe(true);
      expect(stored.endsWith('and refund order 42')).toBe(true);
      expect(stored).toMatch(/\n\[… \d+ characters cut …\]\n/);
    }
  });

  it('routes a long request by its head and tail: the words at its end count', async () => {
    await api('PUT', `/v1/agents/${agent}/tools`, {
      body: {
        tools: [
          tool('lookup', 'Look up a record.', { id: { type: 'string' } }),
          tool('refund_order', 'Refund an order to the customer.', { order_id: { type: 'string' } }),
        ],
      },
    });
    const routed = await api('POST', `/v1/agents/${agent}/route`, { body: { request: long, k: 1 } });
    expect(routed.body.tools.map((t: { name: string }) => t.name)).toEqual(['refund_order']);
  });
});
