import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { count } from '../helpers/log.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';

const props = (name: string) => ({ type: 'object', properties: { [name]: { type: 'string' } } });
/** One tool in each of the four registration shapes. */
const FOUR_SHAPES = [
  { name: 'plain_weather', description: 'Current weather for a city.', parameters: props('city') },
  { type: 'function', function: { name: 'openai_email', description: 'Send an email.', parameters: props('to') } },
  { name: 'mcp_search', description: 'Search the web.', inputSchema: props('q') },
  { name: 'anth_calc', description: 'Evaluate arithmetic.', input_schema: props('expr') },
];
const EXPECTED: Record<string, { description: string; schema: Record<string, unknown> }> = {
  plain_weather: { description: 'Current weather for a city.', schema: props('city') },
  openai_email: { description: 'Send an email.', schema: props('to') },
  mcp_search: { description: 'Search the web.', schema: props('q') },
  anth_calc: { description: 'Evaluate arithmetic.', schema: props('expr') },
};

async function rawText(path: string): Promise<string> {
  const res = await exports.default.fetch(
    new Request(`http://whetstone.test${path}`, { headers: { authorization: `Bearer ${ADMIN}` } }),
  );
  expect(res.status).toBe(200);
  return res.text();
}

async function agentWithFourShapes(): Promise<string> {
  const agent = agentId('deliver');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: FOUR_SHAPES } })).status).toBe(200);
  return agent;
}

describe('tool formats', () => {
  it('round-trips a tool registered in any of the four shapes through each format, on /route and on the list', async () => {
    const agent = await agentWithFourShapes();
    for (const name of Object.keys(EXPECTED)) {
      const { description, schema } = EXPECTED[name]!;
      const shapes = {
        openai: { type: 'function', function: { name, description, parameters: schema } },
        anthropic: { name, description, input_schema: schema },
        mcp: { name, description, inputSchema: schema },
      };
      for (const [format, shape] of Object.entries(shapes)) {
        const routed = await api('POST', `/v1/agents/${agent}/route`, {
          body: { request: `use ${name}`, format, k: 4 },
        });
        expect(routed.status).toBe(200);
        expect(routed.body.model_tools).toContainEqual(shape);
        const listed = await api('GET', `/v1/agents/${agent}/tools?format=${format}`);
        expect(listed.body.tools).toContainEqual(shape);
      }
    }
    const plain = await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'weather in Oslo' } });
    expect(plain.body.model_tools[0]).toHaveProperty('function');
  });

  it('refuses an unknown format with a 400 and writes no turn', async () => {
    const agent = await agentWithFourShapes();
    const before = await count('turns', agent);
    const res = await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'weather', format: 'gemini' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(await count('turns', agent)).toBe(before);
    expect((await api('GET', `/v1/agents/${agent}/tools?format=gemini`)).status).toBe(400);
    expect((await api('GET', `/v1/agents/${agent}/tools?defer=yes`)).status).toBe(400);
  });
});

describe('the stable list', () => {
  it('is sorted by name and byte-identical across calls until a tool changes, then changes', async () => {
    const agent = await agentWithFourShapes();
    for (const format of ['openai', 'anthropic', 'mcp']) {
      const path = `/v1/agents/${agent}/tools?format=${format}&defer=true`;
      const first = await rawText(path);
      await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'weather in Oslo' } });
      expect(await rawText(path)).toBe(first);
      const names = (JSON.parse(first).tools as Record<string, any>[]).map((t) => t.name ?? t.function.name);
      expect(names).toEqual(['anth_calc', 'mcp_search', 'openai_email', 'plain_weather']);
    }
    const before = await rawText(`/v1/agents/${agent}/tools?format=anthropic&defer=true`);
    const changed = { name: 'mcp_search', description: 'Search the web for pages.', inputSchema: props('q') };
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [changed] } })).status).toBe(200);
    const after = await rawText(`/v1/agents/${agent}/tools?format=anthropic&defer=true`);
    expect(after).not.toBe(before);
    expect(JSON.parse(after).tools).toContainEqual({
      name: 'mcp_search',
      description: 'Search the web for pages.',
      input_schema: props('q'),
      defer_loading: true,
    });
  });

  it('defers every tool but the pinned ones, in each provider field; unpinning defers it again', async () => {
    const agent = await agentWithFourShapes();
    const pin = await api('PUT', `/v1/agents/${agent}/tools/anth_calc/pin`);
    expect(pin.status).toBe(200);
    expect(pin.body.pins.map((p: { tool: string }) => p.tool)).toEqual(['anth_calc']);
    const anth = (await api('GET', `/v1/agents/${agent}/tools?format=anthropic&defer=true`)).body.tools;
    expect(anth[0]).toEqual({ name: 'anth_calc', description: 'Evaluate arithmetic.', input_schema: props('expr') });
    expect(anth.slice(1).every((t: { defer_loading?: boolean }) => t.defer_loading === true)).toBe(true);
    const openai = (await api('GET', `/v1/agents/${agent}/tools?format=openai&defer=true`)).body.tools;
    expect(openai[0]).not.toHaveProperty('defer_loading');
    expect(openai[1]).toEqual({
      type: 'function',
      function: { name: 'mcp_search', description: 'Search the web.', parameters: props('q') },
      defer_loading: true,
    });
    const mcp = (await api('GET', `/v1/agents/${agent}/tools?format=mcp&defer=true`)).body.tools;
    expect(mcp[1]._meta).toEqual({ defer_loading: true });
    const undeferred = (await api('GET', `/v1/agents/${agent}/tools?format=anthropic`)).body.tools;
    expect(undeferred.some((t: { defer_loading?: boolean }) => t.defer_loading)).toBe(false);
    expect((await api('DELETE', `/v1/agents/${agent}/tools/anth_calc/pin`)).status).toBe(204);
    expect((await api('DELETE', `/v1/agents/${agent}/tools/anth_calc/pin`)).status).toBe(404);
    const again = (await api('GET', `/v1/agents/${agent}/tools?format=anthropic&defer=true`)).body.tools;
    expect(again[0].defer_loading).toBe(true);
    expect((await api('PUT', `/v1/agents/${agent}/tools/no_such_tool/pin`)).status).toBe(404);
    expect(await count('pins', agent)).toBe(0);
  });
});

describe('GET …/pins/suggested', () => {
  it('proposes the smallest set of tools that finally served the share of served runs', async () => {
    const agent = await agentWithFourShapes();
    const served = [
      'plain_weather',
      'plain_weather',
      'plain_weather',
      'plain_weather',
      'plain_weather',
      'plain_weather',
      'openai_email',
      'openai_email',
      'mcp_search',
      'anth_calc',
    ];
    for (const [i, name] of served.entries()) {
      const turn = await api('POST', `/v1/agents/${agent}/route`, { body: { request: `request number ${i}` } });
      const calls = [
        { id: `c${i}a`, tool: 'mcp_search', arguments: {}, success: true, turn_id: turn.body.turn_id },
        { id: `c${i}b`, tool: name, arguments: {}, success: true, turn_id: turn.body.turn_id },
        { id: `c${i}c`, tool: 'anth_calc', arguments: {}, success: false, error: 'boom', turn_id: turn.body.turn_id },
      ];
      expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
    }
    const res = await api('GET', `/v1/agents/${agent}/pins/suggested?share=0.8&days=14`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ share: 0.8, days: 14, served_runs: 10, covered_runs: 8, covered_share: 0.8 });
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['plain_weather', 'openai_email']);
    const all = await api('GET', `/v1/agents/${agent}/pins/suggested?share=1`);
    expect(all.body.tools.map((t: { name: string }) => t.name)).toEqual([
      'plain_weather',
      'openai_email',
      'anth_calc',
      'mcp_search',
    ]);
    expect(all.body.days).toBe(14);
    expect((await api('GET', `/v1/agents/${agent}/pins/suggested?share=0`)).status).toBe(400);
    expect((await api('GET', `/v1/agents/${agent}/pins/suggested?days=0`)).status).toBe(400);
    expect(await count('pins', agent)).toBe(0);
  });
});
