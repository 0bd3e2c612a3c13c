import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.ts';
import { count, logDb, storedTurn } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const tools = [
  tool('get_weather', 'Current weather and forecast for a city: temperature, rain, wind.', {
    city: { type: 'string' },
  }),
  tool('send_email', 'Send an email message to a recipient with a subject and body.', {
    to: { type: 'string' },
    subject: { type: 'string' },
  }),
  tool('convert_currency', "Convert an amount of money between currencies at today's exchange rate.", {
    amount: { type: 'number' },
  }),
  tool('book_flight', 'Search and book airline flights between airports.', {
    from: { type: 'string' },
    to: { type: 'string' },
  }),
  tool('translate_text', 'Translate text between languages.', { text: { type: 'string' } }),
  tool('set_reminder', 'Set a reminder or alarm for a time.', { at: { type: 'string' } }),
];

async function setup(extra: Record<string, unknown> = {}) {
  const agent = agentId();
  await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } });
  if (Object.keys(extra).length > 0) await api('PUT', `/v1/agents/${agent}/config`, { body: extra });
  return agent;
}

describe('POST /v1/agents/:agent/route', () => {
  it('ranks the matching tool first and returns model views ready for tools=[…]', async () => {
    const agent = await setup();
    const res = await api('POST', `/v1/agents/${agent}/route`, {
      body: { request: 'will it rain in Paris tomorrow?', conversation_id: 'c1' },
    });
    expect(res.status).toBe(200);
    expect(res.body.routed).toBe(true);
    expect(res.body.tools).toHaveLength(5);
    expect(res.body.tools[0]).toMatchObject({ name: 'get_weather', rank: 1 });
    expect(res.body.tools.map((t: { rank: number }) => t.rank)).toEqual([1, 2, 3, 4, 5]);
    const scores = res.body.tools.map((t: { score: number }) => t.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(res.body.model_tools.map((m: { function: { name: string } }) => m.function.name)).toEqual(
      res.body.tools.map((t: { name: string }) => t.name),
    );
    expect(res.body.model_tools[0]).toEqual({
      type: 'function',
      function: { name: 'get_weather', description: tools[0]?.description, parameters: tools[0]?.parameters },
    });
    const turn = await storedTurn(agent, res.body.turn_id);
    expect(turn).toMatchObject({ request: 'will it rain in Paris tomorrow?', conversation_id: 'c1', routed: 1 });
    expect(JSON.parse(String(turn.offered))).toEqual(res.body.tools);
  });

  it('offers a tool the request names, by its identifier or the words split from it', async () => {
    const agent = await setup();
    const request = 'email the forecast of Paris to Ann, and use set_reminder for it';
    const byScore = await api('POST', `/v1/agents/${agent}/route`, {
      body: { request: 'email the forecast of Paris to Ann', k: 1 },
    });
    expect(byScore.body.tools.map((t: { name: string }) => t.name)).not.toContain('set_reminder');
    for (const text of [
      request,
      'email the forecast of Paris to Ann, then set reminder',
      'email the forecast, then SetReminder',
    ]) {
      const res = await api('POST', `/v1/agents/${agent}/route`, { body: { request: text, k: 1 } });
      expect(res.status).toBe(200);
      expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['set_reminder']);
      expect(res.body.tools[0].rank).toBe(1);
    }
    const two = await api('POST', `/v1/agents/${agent}/route`, {
      body: { request: 'email the forecast of Paris, then SetReminder', k: 2 },
    });
    expect(two.body.tools.map((t: { name: string }) => t.name)).toContain('set_reminder');
    expect(two.body.tools).toHaveLength(2);
  });

  it('honours k and top_k', async () => {
    const agent = await setup({ top_k: 2 });
    expect(
      (await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'email my boss' } })).body.tools,
    ).toHaveLength(2);
    expect(
      (await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'email my boss', k: 3 } })).body.tools,
    ).toHaveLength(3);
  });

  it('sends every tool sorted by name, unrouted and uncounted, under stable_tool_list_tokens', async () => {
    const agent = await setup({ stable_tool_list_tokens: 100_000 });
    const res = await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'translate hello to German' } });
    expect(res.body.routed).toBe(false);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual([...tools.map((t) => t.name)].sort());
    await eventually(() =>
      logDb(agent)
        .prepare('SELECT routed FROM turns WHERE agent = ?1')
        .bind(agent)
        .first<{ routed: number }>()
        .then((r) => r ?? undefined),
    );
    const stub = env.AGENTS.get(env.AGENTS.idFromName(agent));
    expect((await stub.offers()).routed_turns).toBe(0);
  });

  it('counts offers exactly after 200 concurrent routes', async () => {
    const agent = await setup();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api('POST', `/v1/agents/${agent}/route`, { body: { request: `request number ${i} about weather or email` } }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const expected = new Map<string, number>();
    for (const r of results)
      for (const t of r.body.tools as { name: string }[]) expected.set(t.name, (expected.get(t.name) ?? 0) + 1);
    const stub = env.AGENTS.get(env.AGENTS.idFromName(agent));
    const counts = await eventually(async () => {
      const c = await stub.offers();
      return c.routed_turns === 200 ? c : undefined;
    }, 10_000);
    expect(counts.offered).toEqual(Object.fromEntries(expected));
    expect(await count('turns', agent)).toBe(200);
  });

  it('rejects an empty request, a bad k and an unknown agent (a long request is routed: docs/api.md)', async () => {
    const agent = await setup();
    expect((await api('POST', `/v1/agents/${agent}/route`, { body: { request: '' } })).status).toBe(400);
    expect((await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'x'.repeat(4001) } })).status).toBe(200);
    expect((await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'hi', k: 0 } })).status).toBe(400);
    expect((await api('POST', `/v1/agents/${agentId()}/route`, { body: { request: 'hi' } })).status).toBe(404);
  });
});

describe('POST /v1/agents/:agent/calls', () => {
  it('stores calls once, counting retried ids as duplicates', async () => {
    const agent = await setup();
    const calls = [
      {
        id: 'c-1',
        tool: 'get_weather',
        arguments: { city: 'Oslo' },
        success: true,
        request: 'weather in Oslo',
        turn_id: 't1',
      },
      { id: 'c-2', tool: 'send_email', arguments: { to: 'a@b.c' }, success: false, error: 'invalid recipient' },
    ];
    expect(await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).toMatchObject({
      status: 200,
      body: { accepted: 2, duplicates: 0 },
    });
    expect(
      await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: [...calls, { ...calls[0], id: 'c-3' }] } }),
    ).toMatchObject({
      status: 200,
      body: { accepted: 1, duplicates: 2 },
    });
    const rows = await logDb(agent)
      .prepare('SELECT call_id, tool, arguments, success, error, turn_id FROM calls WHERE agent = ?1 ORDER BY seq')
      .bind(agent)
      .all();
    expect(rows.results).toEqual([
      { call_id: 'c-1', tool: 'get_weather', arguments: '{"city":"Oslo"}', success: 1, error: null, turn_id: 't1' },
      {
        call_id: 'c-2',
        tool: 'send_email',
        arguments: '{"to":"a@b.c"}',
        success: 0,
        error: 'invalid recipient',
        turn_id: null,
      },
      { call_id: 'c-3', tool: 'get_weather', arguments: '{"city":"Oslo"}', success: 1, error: null, turn_id: 't1' },
    ]);
  });

  it('rejects a batch with one bad call and writes none of it', async () => {
    const agent = await setup();
    const res = await api('POST', `/v1/agents/${agent}/calls`, {
      body: {
        calls: [
          { tool: 'get_weather', arguments: {}, success: true },
          { tool: 'get_weather', success: 'yes' },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toEqual(['calls', 1, 'success']);
    expect(await count('calls', agent)).toBe(0);
  });

  it('takes 1,000 calls in one batch and refuses 1,001', async () => {
    const agent = await setup();
    const calls = Array.from({ length: 1000 }, (_, i) => ({
      id: `k${i}`,
      tool: 'get_weather',
      arguments: { city: `c${i}` },
      success: i % 3 !== 0,
    }));
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).body).toEqual({
      accepted: 1000,
      duplicates: 0,
    });
    expect(
      (await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: [...calls, { tool: 'x', success: true }] } }))
        .status,
    ).toBe(400);
  });
});
