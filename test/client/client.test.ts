import { exports } from 'cloudflare:workers';
import OpenAI from 'openai';
import { describe, expect, inject, it } from 'vitest';
import {
  createClient,
  WhetstoneError,
  withWhetstone,
  type ChatClient,
  type ChatCompletionLike,
  type ChatRequest,
} from 'whetstone/client';
import { logDb, storedTurn } from '../helpers/log.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { seedOrderFailures } from '../helpers/orders.ts';
import { DESK_TOOLS, tool } from '../helpers/tools.ts';
import { oneCallTrace } from '../fixtures/traces.ts';

const tools = DESK_TOOLS;

/** A client whose requests go straight into the Worker entry. */
function clientFor(agent: string, token = ADMIN) {
  return createClient({ url: 'http://whetstone.test/', token, agent, fetch: (req) => exports.default.fetch(req) });
}

async function calls(agent: string) {
  const { results } = await logDb(agent)
    .prepare(
      'SELECT call_id, tool, arguments, success, error, request, turn_id, conversation_id FROM calls WHERE agent = ?1 ORDER BY at, call_id',
    )
    .bind(agent)
    .all();
  return results;
}

describe('whetstone/client against the Worker', () => {
  it('registers tools, reads them back, routes and records calls', async () => {
    const agent = agentId();
    const ws = clientFor(agent);
    const registered = await ws.registerTools(tools);
    expect(registered.tools.map((t) => [t.name, t.version])).toEqual([
      ['get_weather', 1],
      ['send_email', 1],
      ['convert_currency', 1],
    ]);
    expect(await ws.tools()).toEqual({ tools: (await api('GET', `/v1/agents/${agent}/tools`)).body.tools });
    expect(await ws.tool('get_weather')).toEqual(registered.tools[0]);

    const routed = await ws.route({ request: 'will it rain in Lisbon?', conversation_id: 'c-1', k: 2 });
    expect(routed.tools.map((t) => t.name)[0]).toBe('get_weather');
    expect(routed.model_tools).toHaveLength(2);
    expect((await ws.route('email the landlord')).tools[0]?.name).toBe('send_email');

    const call = {
      id: 'k-1',
      tool: 'get_weather',
      arguments: { city: 'Lisbon' },
      success: true,
      request: 'will it rain in Lisbon?',
      turn_id: routed.turn_id,
      conversation_id: 'c-1',
    };
    expect(await ws.recordCalls([call])).toEqual({ accepted: 1, duplicates: 0 });
    expect(await ws.recordCalls([call])).toEqual({ accepted: 0, duplicates: 1 });
    expect(await calls(agent)).toEqual([
      {
        call_id: 'k-1',
        tool: 'get_weather',
        arguments: '{"city":"Lisbon"}',
        success: 1,
        error: null,
        request: 'will it rain in Lisbon?',
        turn_id: routed.turn_id,
        conversation_id: 'c-1',
      },
    ]);
  });

  it('reads and changes the settings', async () => {
    const { ws } = await withTools();
    expect((await ws.config()).top_k).toBe(5);
    const changed = await ws.setConfig({ top_k: 2, min_calls: 4 });
    expect(changed).toMatchObject({ top_k: 2, min_calls: 4, min_failures: 2 });
    expect(await ws.config()).toEqual(changed);
    expect((await ws.route('weather in Rome')).tools).toHaveLength(2);
  });

  it('encodes tool names with a slash in the path', async () => {
    const agent = agentId();
    const ws = clientFor(agent);
    await ws.registerTools([tool('files/read', 'Read a file from the workspace.', { path: { type: 'string' } })]);
    expect((await ws.tool('files/read')).name).toBe('files/read');
  });

  it('records traces and reads flags and unregistered tools', async () => {
    const { agent, ws } = await withTools();
    const trace = await ws.recordTrace({
      messages: oneCallTrace('where is order A-17?', 'tc-1', 'lookup_order', '{"order_id":"A-17"}', 'shipped'),
    });
    expect(trace).toMatchObject({ calls: 1, turn_id: expect.any(String) });
    const unregistered = await ws.unregistered();
    expect(unregistered.tools.map((t) => [t.name, t.call_count, t.definition_source])).toEqual([
      ['lookup_order', 1, 'inferred'],
    ]);
    expect(await ws.flags()).toEqual((await api('GET', `/v1/agents/${agent}/flags`)).body);
  });

  it('rejects with a WhetstoneError carrying the error body', async () => {
    const { agent, ws } = await withTools();
    const invalid = await ws.route({ request: '' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(WhetstoneError);
    expect(invalid).toMatchObject({
      name: 'WhetstoneError',
      status: 400,
      code: 'invalid_request',
      message: 'the request does not match the schema',
    });
    expect((invalid as WhetstoneError).details).toEqual([expect.objectContaining({ path: ['request'] })]);

    await expect(clientFor(agent, 'wrong').tools()).rejects.toMatchObject({
      status: 401,
      code: 'unauthorized',
      message: 'the token is not valid',
      details: [],
    });
    const key = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } })).body.key as string;
    await expect(clientFor(agent, key).setConfig({ top_k: 3 })).rejects.toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    await expect(clientFor(agentId(), key).tools()).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect((await ws.config()).top_k).toBe(5);
  });

  it('turns a non-JSON failure into a WhetstoneError with the status', async () => {
    const ws = createClient({
      url: 'http://x.test',
      token: 't',
      agent: 'a',
      fetch: async () => new Response('<html>bad gateway</html>', { status: 502 }),
    });
    await expect(ws.flags()).rejects.toMatchObject({
      status: 502,
      code: 'http_502',
      message: '<html>bad gateway</html>',
    });
  });
});

/** A fresh agent with the desk's tools registered, and a client for it. */
async function withTools() {
  const agent = agentId();
  const ws = clientFor(agent);
  await ws.registerTools(tools);
  return { agent, ws };
}

/** A stand-in model giving `replies` in order (an Error is thrown), the last one again once they run out. */
function replying(replies: (ChatCompletionLike | Error)[]): ChatClient {
  let step = 0;
  return {
    chat: {
      completions: {
        async create() {
          const reply = replies[Math.min(step, replies.length - 1)] as ChatCompletionLike | Error;
          step += 1;
          if (reply instanceof Error) throw reply;
          return reply;
        },
      },
    },
  };
}

/** A model's answer that asks for one call of `name` with `args` (the JSON text, as a model writes it). */
function askingFor(id: string, name: string, args: string): ChatCompletionLike {
  return {
    choices: [
      {
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
        },
      },
    ],
  };
}

/** A stand-in model: calls the first offered tool, retries once after an error, then answers. */
function scriptedModel(args: Record<string, unknown>[]): ChatClient & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    requests,
    chat: {
      completions: {
        async create(body) {
          requests.push(structuredClone(body));
          const step = requests.length - 1;
          const offered = (body.tools?.[0] as { function: { name: string } } | undefined)?.function.name ?? 'none';
          if (step < args.length) {
            return askingFor(`tc-${step}`, offered, JSON.stringify(args[step]));
          }
          return { choices: [{ message: { role: 'assistant', content: 'It will rain.' } }] };
        },
      },
    },
  };
}

describe('withWhetstone', () => {
  it('routes the turn, runs the tool calls and records each with its success', async () => {
    const { agent, ws } = await withTools();
    const model = scriptedModel([{ city: 'LIS' }, { city: 'Lisbon' }, { city: 'Lisbon', days: 2 }]);
    const loop = withWhetstone(model, ws, {
      model: 'stand-in',
      k: 2,
      handlers: {
        get_weather: (a) => {
          if (a.days) return { error: 'days is not supported' };
          if (String(a.city).length < 4) throw new Error('city must be a full name');
          return { forecast: 'rain' };
        },
      },
    });
    const run = await loop.run('will it rain in Lisbon?', {
      conversation_id: 'conv-1',
      messages: [{ role: 'system', content: 'Be brief.' }],
    });

    expect(run.reply).toBe('It will rain.');
    expect(run.route.tools.map((t) => t.name)).toEqual(['get_weather', expect.any(String)]);
    expect(model.requests[0]).toMatchObject({
      model: 'stand-in',
      tools: run.route.model_tools,
      messages: [{ role: 'system' }, { role: 'user', content: 'will it rain in Lisbon?' }],
    });
    expect(model.requests).toHaveLength(4);
    expect(run.calls.map((c) => [c.tool, c.success, c.error])).toEqual([
      ['get_weather', false, 'city must be a full name'],
      ['get_weather', true, null],
      ['get_weather', false, 'days is not supported'],
    ]);
    expect(run.recorded).toEqual({ accepted: 3, duplicates: 0 });
    expect(run.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      '{"error":"city must be a full name"}',
      '{"forecast":"rain"}',
      '{"error":"days is not supported"}',
    ]);
    const base = {
      tool: 'get_weather',
      request: 'will it rain in Lisbon?',
      turn_id: run.turn_id,
      conversation_id: 'conv-1',
    };
    expect(await calls(agent)).toEqual(
      expect.arrayContaining([
        {
          ...base,
          call_id: `${run.turn_id}:tc-0`,
          arguments: '{"city":"LIS"}',
          success: 0,
          error: 'city must be a full name',
        },
        { ...base, call_id: `${run.turn_id}:tc-1`, arguments: '{"city":"Lisbon"}', success: 1, error: null },
        {
          ...base,
          call_id: `${run.turn_id}:tc-2`,
          arguments: '{"city":"Lisbon","days":2}',
          success: 0,
          error: 'days is not supported',
        },
      ]),
    );
    expect(await calls(agent)).toHaveLength(3);
  });

  it('answers a call with no handler without recording it, and records bad JSON arguments as a failure', async () => {
    const { agent, ws } = await withTools();
    const model = replying([
      askingFor('a', 'delete_everything', '{}'),
      askingFor('b', 'get_weather', '{"city": '),
      { choices: [{ message: { role: 'assistant', content: 'done' } }] },
    ]);
    const run = await withWhetstone(model, ws, { model: 'm', handlers: { get_weather: () => ({ ok: true }) } }).run(
      'weather please',
    );
    expect(run.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      '{"error":"no tool named delete_everything"}',
      '{"error":"the arguments are not a JSON object"}',
    ]);
    expect(run.recorded).toEqual({ accepted: 1, duplicates: 0 });
    expect(await calls(agent)).toEqual([
      {
        call_id: `${run.turn_id}:b`,
        tool: 'get_weather',
        arguments: '{}',
        success: 0,
        error: 'the arguments are not a JSON object',
        request: 'weather please',
        turn_id: run.turn_id,
        conversation_id: null,
      },
    ]);
  });

  it('records the calls already run when the model fails midway, then rethrows', async () => {
    const { agent, ws } = await withTools();
    const model = replying([askingFor('a', 'get_weather', '{"city":"Oslo"}'), new Error('model unavailable')]);
    await expect(
      withWhetstone(model, ws, { model: 'm', handlers: { get_weather: () => 'sunny' } }).run('weather in Oslo'),
    ).rejects.toThrow('model unavailable');
    expect((await calls(agent)).map((c) => [c.tool, c.success])).toEqual([['get_weather', 1]]);
  });

  it('works with the real openai package (against the fake OpenAI-compatible server)', async () => {
    const { agent, ws } = await withTools();
    const base = inject('fakeOpenAI');
    const model = `client-loop-${agent}`;
    await fetch(`${base}/_script`, {
      method: 'POST',
      body: JSON.stringify({ model, replies: [{ content: 'Bring an umbrella.' }] }),
    });
    const openai = new OpenAI({ apiKey: 'test', baseURL: `${base}/v1`, maxRetries: 0 });
    const run = await withWhetstone(openai, ws, { model, handlers: {} }).run('will it rain in Porto?');
    expect(run.reply).toBe('Bring an umbrella.');
    expect(run.recorded).toBeNull();
    const seen = (await (await fetch(`${base}/_calls?model=${model}`)).json()) as {
      bodies: { tools: unknown; messages: unknown }[];
    };
    expect(seen.bodies[0]).toMatchObject({
      model,
      tools: run.route.model_tools,
      messages: [{ role: 'user', content: 'will it rain in Porto?' }],
    });
    await storedTurn(agent, run.turn_id, '1 AS y');
  });
});

describe('whetstone/client: reviews and revisions', () => {
  it('reviews (dry run, then for real), lists, shows, applies and undoes a revision', async () => {
    const agent = agentId();
    const ws = clientFor(agent);
    await seedOrderFailures(ws);

    const dry = await ws.review({ dry_run: true });
    expect(dry).toMatchObject({ dry_run: true, revisions: [{ tool: 'get_order', status: 'proposed' }] });
    expect(await ws.revisions()).toEqual({ revisions: [], next_cursor: null });

    const review = await ws.review();
    expect(review.dry_run).toBe(false);
    const [proposed] = review.revisions;
    if (!proposed) throw new Error('the review proposed nothing');
    expect(proposed.notes_added.length).toBeGreaterThan(0);
    // Listed with the routing memory the review applied on its own (stored first: the older ones).
    const remembered = review.memory ?? [];
    expect(await ws.revisions()).toEqual({ revisions: [proposed, ...remembered], next_cursor: null });
    expect(await ws.revisions({ tool: 'get_order', status: 'proposed' })).toEqual({
      revisions: [proposed],
      next_cursor: null,
    });
    expect(await ws.revisions({ status: 'applied' })).toEqual({ revisions: remembered, next_cursor: null });
    expect(await ws.revision(proposed.revision_id)).toEqual(proposed);

    const applied = await ws.apply(proposed.revision_id, { approved_by: 'ana' });
    expect(applied).toMatchObject({ revision_id: proposed.revision_id, status: 'applied', approved_by: 'ana' });
    expect((await ws.tool('get_order')).notes).toEqual(proposed.notes_added);

    const undone = await ws.undo('get_order', { approved_by: 'ana' });
    expect(undone).toMatchObject({ revision_id: proposed.revision_id, status: 'undone' });
    expect((await ws.tool('get_order')).notes).toEqual([]);
    await expect(ws.apply(proposed.revision_id, { approved_by: 'ana' })).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
    });
  });

  it('tries a proposed revision (writes nothing), sets and removes a test endpoint, and asks whoami', async () => {
    const agent = agentId();
    const ws = clientFor(agent);
    await seedOrderFailures(ws);
    const [proposed] = (await ws.review()).revisions;
    if (!proposed) throw new Error('the review proposed nothing');
    const tried = await ws.tryRevision(proposed.revision_id);
    expect(tried).toMatchObject({ revision_id: proposed.revision_id, tool: 'get_order', edited: false });
    expect(tried.model).toMatchObject({ id: 'extractive', picks: false });
    expect(tried.lines.notes_added).toEqual(proposed.notes_added);
    expect((await ws.revision(proposed.revision_id)).status).toBe('proposed');
    await expect(ws.tryRevision('rev-none')).rejects.toMatchObject({ status: 404, code: 'not_found' });

    expect(await ws.setTestEndpoint('get_order', { url: 'https://tests.example.com/orders' })).toEqual({
      tool: 'get_order',
      url: 'https://tests.example.com/orders',
      token: false,
    });
    await ws.deleteTestEndpoint('get_order');
    await expect(ws.deleteTestEndpoint('get_order')).rejects.toMatchObject({ status: 404 });
    expect(await ws.whoami()).toEqual({
      role: 'admin',
      key_id: null,
      rights: ['read', 'agent', 'decide', 'operator', 'admin'],
    });
  });

  it('dismisses a proposed revision with a reason and reports outcomes', async () => {
    const agent = agentId();
    const ws = clientFor(agent);
    const [turn] = await seedOrderFailures(ws);
    const [proposed] = (await ws.review()).revisions;
    if (!proposed || !turn) throw new Error('the review proposed nothing');
    const dismissed = await ws.dismiss(proposed.revision_id, { approved_by: 'bo', reason: 'not now' });
    expect(dismissed).toMatchObject({ status: 'dismissed', approved_by: 'bo', dismiss_reason: 'not now' });
    expect(await ws.revisions({ status: 'dismissed' })).toEqual({ revisions: [dismissed], next_cursor: null });

    expect(await ws.outcome({ turn_id: turn, ok: false, served_by: 'refund_order' })).toBeUndefined();
    const row = await logDb(agent)
      .prepare('SELECT turn_id, ok, served_by FROM outcomes WHERE agent = ?1')
      .bind(agent)
      .first();
    expect(row).toEqual({ turn_id: turn, ok: 0, served_by: 'refund_order' });
  });
});
