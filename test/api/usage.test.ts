import { abortAllDurableObjects } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { anthropicTrace, openAITrace } from '../fixtures/traces.ts';
import { eventually } from '../helpers/eventually.ts';
import { count, logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const tools = [
  tool('get_weather', 'Current weather and forecast for a city.', { city: { type: 'string' } }),
  tool('send_email', 'Send an email message to a recipient.', { to: { type: 'string' } }),
  tool('convert_currency', 'Convert an amount of money between currencies.', { amount: { type: 'number' } }),
];

async function setup(config: Record<string, unknown> = {}, defs: unknown[] = tools) {
  const agent = agentId();
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: defs } })).status).toBe(200);
  if (Object.keys(config).length > 0)
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: config })).status).toBe(200);
  return agent;
}

/** Routes `n` real requests and waits until they are recorded (turns and offers are written after the answer). */
async function routeTimes(agent: string, n: number, k: number, counted = true) {
  const stub = env.AGENTS.get(env.AGENTS.idFromName(agent));
  const [routedBefore, turnsBefore] = [(await stub.offers()).routed_turns, await count('turns', agent)];
  for (let i = 0; i < n; i++) {
    const res = await api('POST', `/v1/agents/${agent}/route`, {
      body: { request: `what is the weather in city number ${i}?`, k },
    });
    expect(res.status).toBe(200);
  }
  await eventually(async () => ((await count('turns', agent)) === turnsBefore + n ? true : undefined));
  await eventually(async () =>
    (await stub.offers()).routed_turns === routedBefore + (counted ? n : 0) ? true : undefined,
  );
}

const flagsOf = async (agent: string) => api('GET', `/v1/agents/${agent}/flags`);

describe('GET /v1/agents/:agent/flags (docs/learning.md)', () => {
  it('flags retrieved_never_called at exactly min_offers routed turns (4: none, 5: flag), and a call clears it', async () => {
    const agent = await setup();
    await routeTimes(agent, 4, 3);
    expect(await flagsOf(agent)).toMatchObject({ status: 200, body: { flags: [] } });

    await routeTimes(agent, 1, 3);
    expect((await flagsOf(agent)).body).toEqual({
      flags: ['convert_currency', 'get_weather', 'send_email'].map((name) => ({
        tool: name,
        flag: 'retrieved_never_called',
        offered_turns: 5,
        calls: 0,
        routed_turns: 5,
      })),
    });

    await api('POST', `/v1/agents/${agent}/calls`, {
      body: { calls: [{ tool: 'get_weather', arguments: { city: 'Oslo' }, success: true }] },
    });
    expect((await flagsOf(agent)).body.flags.map((f: { tool: string }) => f.tool)).toEqual([
      'convert_currency',
      'send_email',
    ]);
  });

  it('flags never_retrieved at exactly min_turns routed turns, counted from registration', async () => {
    const agent = await setup({ min_turns: 3 });
    await routeTimes(agent, 2, 1);
    expect((await flagsOf(agent)).body).toEqual({ flags: [] });
    // A tool registered now starts its own window.
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [...tools, tool('late_tool', 'Zzz qqq.')] } });
    await routeTimes(agent, 1, 1);
    const flags = (await flagsOf(agent)).body.flags as {
      tool: string;
      flag: string;
      offered_turns: number;
      routed_turns: number;
    }[];
    const never = flags.filter((f) => f.flag === 'never_retrieved');
    expect(never.map((f) => f.tool)).toEqual(['convert_currency', 'send_email']);
    expect(never[0]).toEqual({
      tool: 'convert_currency',
      flag: 'never_retrieved',
      offered_turns: 0,
      calls: 0,
      routed_turns: 3,
    });
    expect(flags.find((f) => f.tool === 'late_tool')).toBeUndefined();
    await routeTimes(agent, 2, 1);
    expect((await flagsOf(agent)).body.flags).toContainEqual({
      tool: 'late_tool',
      flag: 'never_retrieved',
      offered_turns: 0,
      calls: 0,
      routed_turns: 3,
    });
  });

  it('raises no flag under the stable-list rule, whatever the thresholds', async () => {
    const agent = await setup({ stable_tool_list_tokens: 1_000_000, min_offers: 1, min_turns: 1 });
    await routeTimes(agent, 6, 3, false);
    expect(await flagsOf(agent)).toMatchObject({ status: 200, body: { flags: [] } });
  });

  it('keeps the counts when the Durable Object is aborted (SQLite storage, not memory)', async () => {
    const agent = await setup();
    await routeTimes(agent, 5, 3);
    const before = (await flagsOf(agent)).body;
    expect(before.flags).toHaveLength(3);
    await abortAllDurableObjects();
    expect((await flagsOf(agent)).body).toEqual(before);
    await routeTimes(agent, 1, 3);
    expect((await flagsOf(agent)).body.flags[0]).toEqual({
      tool: 'convert_currency',
      flag: 'retrieved_never_called',
      offered_turns: 6,
      calls: 0,
      routed_turns: 6,
    });
  });

  it("answers 404 for an unknown agent and for another agent's key", async () => {
    expect(await flagsOf(agentId())).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    const a = await setup();
    const b = await setup();
    const key = (await api('POST', `/v1/agents/${a}/keys`, { body: { role: 'agent' } })).body.key;
    expect((await api('GET', `/v1/agents/${a}/flags`, { token: key })).status).toBe(200);
    expect((await api('GET', `/v1/agents/${b}/flags`, { token: key })).status).toBe(404);
    expect((await api('GET', `/v1/agents/${b}/unregistered`, { token: key })).status).toBe(404);
    expect((await api('POST', `/v1/agents/${b}/traces`, { token: key, body: { messages: openAITrace } })).status).toBe(
      404,
    );
  });
});

const callRows = (agent: string) =>
  logDb(agent)
    .prepare(
      'SELECT call_id, tool, arguments, success, error, request, turn_id, conversation_id FROM calls WHERE agent = ?1 ORDER BY seq',
    )
    .bind(agent)
    .all<Record<string, unknown>>()
    .then((r) => r.results.map((c): Record<string, unknown> => ({ ...c, arguments: JSON.parse(String(c.arguments)) })));

describe('POST /v1/agents/:agent/traces (docs/api.md)', () => {
  it("records an OpenAI trace: the turn, the run's calls with failures, the tools; re-posting adds nothing", async () => {
    const agent = await setup();
    const body = { messages: openAITrace, conversation_id: 'conv-1' };
    const first = await api('POST', `/v1/agents/${agent}/traces`, { body });
    expect(first.status).toBe(200);
    const turnId = first.body.turn_id as string;
    expect(first.body).toEqual({ turn_id: expect.stringMatching(/^trace-[0-9a-f]{32}$/), calls: 2 });
    const request = 'Upload the scan for claim CW-123456';
    expect(await callRows(agent)).toEqual([
      {
        call_id: `trace:${turnId}:call_1`,
        tool: 'upload_file',
        arguments: { claim_ref: '123456', file_mb: 12 },
        success: 0,
        error: 'claim_ref must look like CW-######',
        request,
        turn_id: turnId,
        conversation_id: 'conv-1',
      },
      {
        call_id: `trace:${turnId}:call_2`,
        tool: 'lookup_claim',
        arguments: {},
        success: 1,
        error: null,
        request,
        turn_id: turnId,
        conversation_id: 'conv-1',
      },
    ]);
    const turn = await logDb(agent)
      .prepare('SELECT turn_id, request, conversation_id, routed, offered, source FROM turns WHERE agent = ?1')
      .bind(agent)
      .all();
    expect(turn.results).toEqual([
      { turn_id: turnId, request, conversation_id: 'conv-1', routed: 0, offered: '[]', source: 'trace' },
    ]);

    expect((await api('POST', `/v1/agents/${agent}/traces`, { body })).body).toEqual(first.body);
    expect(await count('calls', agent)).toBe(2);

    // The finished run, posted again: the unanswered call now has its result and joins the same turn.
    const finished = [...openAITrace, { role: 'tool', tool_call_id: 'call_3', content: '{"uploaded": true}' }];
    expect((await api('POST', `/v1/agents/${agent}/traces`, { body: { ...body, messages: finished } })).body).toEqual({
      turn_id: turnId,
      calls: 3,
    });
    expect((await callRows(agent)).map((c) => [c.call_id, c.success])).toEqual([
      [`trace:${turnId}:call_1`, 0],
      [`trace:${turnId}:call_2`, 1],
      [`trace:${turnId}:call_3`, 1],
    ]);
    expect(await count('turns', agent)).toBe(1);
  });

  it('records an Anthropic trace under the turn /route answered, without a second turn', async () => {
    const agent = await setup();
    const routed = await api('POST', `/v1/agents/${agent}/route`, {
      body: { request: 'Move my meeting with Dana to Friday', conversation_id: 'conv-2' },
    });
    const turnId = routed.body.turn_id as string;
    await eventually(async () => ((await count('turns', agent)) === 1 ? true : undefined));
    const res = await api('POST', `/v1/agents/${agent}/traces`, {
      body: { messages: anthropicTrace, turn_id: turnId },
    });
    expect(res).toMatchObject({ status: 200, body: { turn_id: turnId, calls: 2 } });
    const request = 'Move my meeting with Dana to Friday';
    expect(await callRows(agent)).toEqual([
      {
        call_id: `trace:${turnId}:toolu_1`,
        tool: 'find_event',
        arguments: { query: 'Dana', days: 7 },
        success: 0,
        error: 'days must be at most 5',
        request,
        turn_id: turnId,
        conversation_id: 'conv-2',
      },
      {
        call_id: `trace:${turnId}:toolu_2`,
        tool: 'find_event',
        arguments: { query: 'Dana', days: 5 },
        success: 1,
        error: null,
        request,
        turn_id: turnId,
        conversation_id: 'conv-2',
      },
    ]);
    const turns = await logDb(agent)
      .prepare('SELECT turn_id, source, routed FROM turns WHERE agent = ?1')
      .bind(agent)
      .all();
    expect(turns.results).toEqual([{ turn_id: turnId, source: 'route', routed: 1 }]);
  });

  it('creates the turn for a turn_id /route never answered', async () => {
    const agent = await setup();
    const res = await api('POST', `/v1/agents/${agent}/traces`, {
      body: { format: 'anthropic', messages: anthropicTrace, turn_id: 'my-turn-1' },
    });
    expect(res.body).toEqual({ turn_id: 'my-turn-1', calls: 2 });
    const turn = await logDb(agent)
      .prepare('SELECT request, source FROM turns WHERE agent = ?1 AND turn_id = ?2')
      .bind(agent, 'my-turn-1')
      .first();
    expect(turn).toEqual({ request: 'Move my meeting with Dana to Friday', source: 'trace' });
  });

  it('rejects a trace that does not fit its format, and writes nothing', async () => {
    const agent = await setup();
    const res = await api('POST', `/v1/agents/${agent}/traces`, {
      body: { format: 'anthropic', messages: openAITrace, tools: [tool('x', 'X.')] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'invalid_request',
      message: 'the messages are not a valid anthropic trace',
    });
    expect(res.body.error.details[0].path).toEqual(['messages', 0, 'role']);
    const bad = await api('POST', `/v1/agents/${agent}/traces`, {
      body: { messages: [{ role: 'tool', content: 'no id' }] },
    });
    expect(bad.body.error).toMatchObject({ code: 'invalid_request' });
    expect((await api('POST', `/v1/agents/${agent}/traces`, { body: { messages: [] } })).status).toBe(400);
    expect(
      (await api('POST', `/v1/agents/${agent}/traces`, { body: { messages: openAITrace, extra: 1 } })).status,
    ).toBe(400);
    expect([await count('calls', agent), await count('turns', agent), await count('trace_tools', agent)]).toEqual([
      0, 0, 0,
    ]);
  });
});

describe('GET /v1/agents/:agent/unregistered (docs/learning.md)', () => {
  const uploadDef = {
    type: 'function',
    function: {
      name: 'upload_file',
      description: 'Upload a file to a claim.',
      parameters: {
        type: 'object',
        properties: { claim_ref: { type: 'string', description: 'CW-######' }, file_mb: { type: 'number' } },
        required: ['claim_ref'],
      },
    },
  };

  async function agentWithHistory() {
    const agent = await setup();
    await api('POST', `/v1/agents/${agent}/traces`, { body: { messages: openAITrace, tools: [uploadDef, tools[0]] } });
    await api('POST', `/v1/agents/${agent}/calls`, {
      body: {
        calls: [
          {
            id: 'k1',
            tool: 'lookup_claim',
            arguments: { claim_ref: 'CW-1', verbose: true },
            success: false,
            error: 'not found',
            at: '2030-01-01T00:00:00Z',
          },
          {
            id: 'k2',
            tool: 'lookup_claim',
            arguments: { claim_ref: 7 },
            success: false,
            error: 'bad ref',
            at: '2030-01-02T00:00:00Z',
          },
          {
            id: 'k3',
            tool: 'get_weather',
            arguments: { city: 'Oslo' },
            success: false,
            error: 'registered, so not listed',
          },
        ],
      },
    });
    return agent;
  }

  it('lists unregistered names by failures with drafts from metadata or inferred from the arguments', async () => {
    const agent = await agentWithHistory();
    const res = await api('GET', `/v1/agents/${agent}/unregistered`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tools: [
        {
          name: 'lookup_claim',
          call_count: 3,
          failure_count: 2,
          last_seen_at: '2030-01-02T00:00:00.000Z',
          definition_source: 'inferred',
          draft: {
            name: 'lookup_claim',
            description: 'DRAFT: describe what lookup_claim does and when to use it.',
            parameters: {
              type: 'object',
              properties: { claim_ref: { type: ['string', 'integer'] }, verbose: { type: 'boolean' } },
              required: [],
            },
          },
          untrusted: false,
          untrusted_reasons: [],
        },
        {
          name: 'upload_file',
          call_count: 1,
          failure_count: 1,
          last_seen_at: expect.any(String),
          definition_source: 'metadata',
          draft: {
            name: 'upload_file',
            description: 'Upload a file to a claim.',
            parameters: uploadDef.function.parameters,
          },
          untrusted: false,
          untrusted_reasons: [],
        },
      ],
      next_cursor: null,
    });
  });

  it('lists a name a trace defined but nobody called, and drops a name once registered', async () => {
    const agent = await setup();
    const spare = {
      name: 'spare_tool',
      description: 'Spare.',
      input_schema: { type: 'object', properties: { q: { type: 'string' } } },
    };
    await api('POST', `/v1/agents/${agent}/traces`, {
      body: { messages: [{ role: 'user', content: 'hi' }], tools: [spare] },
    });
    const listed = (await api('GET', `/v1/agents/${agent}/unregistered`)).body.tools;
    expect(listed).toEqual([
      {
        name: 'spare_tool',
        call_count: 0,
        failure_count: 0,
        last_seen_at: expect.any(String),
        definition_source: 'metadata',
        draft: { name: 'spare_tool', description: 'Spare.', parameters: spare.input_schema },
        untrusted: false,
        untrusted_reasons: [],
      },
    ]);
    expect(
      (await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [...tools, listed[0].draft] } })).status,
    ).toBe(200);
    expect((await api('GET', `/v1/agents/${agent}/unregistered`)).body).toEqual({ tools: [], next_cursor: null });
  });

  it('registering a draft keeps the earlier failures in the log under its name', async () => {
    const agent = await agentWithHistory();
    const drafts = (await api('GET', `/v1/agents/${agent}/unregistered`)).body.tools.map(
      (t: { draft: unknown }) => t.draft,
    );
    const put = await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [...tools, ...drafts] } });
    expect(put.status).toBe(200);
    expect((await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body).toMatchObject({
      docstring: 'DRAFT: describe what lookup_claim does and when to use it.',
      parameters: drafts[0].parameters,
    });
    expect((await api('GET', `/v1/agents/${agent}/unregistered`)).body).toEqual({ tools: [], next_cursor: null });
    const failures = await logDb(agent)
      .prepare('SELECT tool, error FROM calls WHERE agent = ?1 AND success = 0 ORDER BY seq')
      .bind(agent)
      .all();
    expect(failures.results).toEqual([
      { tool: 'upload_file', error: 'claim_ref must look like CW-######' },
      { tool: 'lookup_claim', error: 'not found' },
      { tool: 'lookup_claim', error: 'bad ref' },
      { tool: 'get_weather', error: 'registered, so not listed' },
    ]);
  });
});

describe('registering an unregistered tool makes its logged failures evidence at once (docs/learning.md)', () => {
  it('a review of the drafted tool cites the failures a trace recorded before it was registered', async () => {
    const agent = await setup();
    const failing = (id: string, days: number) => [
      { role: 'assistant', content: [{ type: 'tool_use', id, name: 'find_event', input: { query: 'Dana', days } }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, is_error: true, content: 'days must be at most 5' }],
      },
    ];
    // Two conversations, each a failure retried: two failed runs, enough for a note.
    const trace = (n: string) => [
      { role: 'user', content: 'Move my meeting with Dana to Friday' },
      ...failing(`toolu_${n}a`, 7),
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: `toolu_${n}c`, name: 'find_event', input: { query: 'Dana', days: 5 } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${n}c`, content: '{"event_id": "ev_1"}' }] },
    ];
    const first = (
      await api('POST', `/v1/agents/${agent}/traces`, { body: { messages: trace('1'), conversation_id: 'k1' } })
    ).body.turn_id;
    const second = (
      await api('POST', `/v1/agents/${agent}/traces`, { body: { messages: trace('2'), conversation_id: 'k2' } })
    ).body.turn_id;
    const [listed] = (await api('GET', `/v1/agents/${agent}/unregistered`)).body.tools;
    expect(listed).toMatchObject({
      name: 'find_event',
      call_count: 4,
      failure_count: 2,
      definition_source: 'inferred',
    });
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [...tools, listed.draft] } })).status).toBe(
      200,
    );

    const review = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } });
    expect(review.status).toBe(200);
    const revision = review.body.revisions.find((r: { tool: string }) => r.tool === 'find_event');
    const failed = revision.evidence.filter((e: { kind: string }) => e.kind === 'failed_call');
    expect(
      failed.map((e: { call_id: string; text: string; turn_id: string }) => [e.call_id, e.text, e.turn_id]),
    ).toEqual([
      [`trace:${first}:toolu_1a`, 'days must be at most <value>', first],
      [`trace:${second}:toolu_2a`, 'days must be at most <value>', second],
    ]);
    expect(revision.notes_added).toHaveLength(1);
    expect(review.body.flags).toEqual((await flagsOf(agent)).body.flags);
  });
});

describe('OpenAPI document', () => {
  it('documents the flags, traces and unregistered routes with their schemas', async () => {
    const doc = (await api('GET', '/openapi.json', { token: null })).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/agents/{agent}/flags',
        '/v1/agents/{agent}/traces',
        '/v1/agents/{agent}/unregistered',
      ]),
    );
    expect(Object.keys(doc.components.schemas.Trace.properties)).toEqual([
      'format',
      'messages',
      'tools',
      'conversation_id',
      'turn_id',
    ]);
    expect(doc.components.schemas.UnregisteredTool.properties.definition_source).toEqual({
      type: 'string',
      enum: ['metadata', 'inferred'],
    });
  });
});
