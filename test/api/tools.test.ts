import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const weather = tool('get_weather', 'Current weather for a city.', { city: { type: 'string' } });

describe('PUT /v1/agents/:agent/tools', () => {
  it('accepts all four ToolDef shapes and answers the stored rows with model views', async () => {
    const agent = agentId();
    const res = await api('PUT', `/v1/agents/${agent}/tools`, {
      body: {
        tools: [
          weather,
          {
            type: 'function',
            function: {
              name: 'send_email',
              description: 'Send an email.',
              parameters: { type: 'object', properties: { to: { type: 'string' } } },
            },
          },
          {
            name: 'mcp_search',
            description: 'Search the web.',
            inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
          },
          {
            name: 'anth_calc',
            description: 'Evaluate arithmetic.',
            input_schema: { type: 'object', properties: { expr: { type: 'string' } } },
          },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual([
      'get_weather',
      'send_email',
      'mcp_search',
      'anth_calc',
    ]);
    const row = res.body.tools[0];
    expect(row).toMatchObject({
      name: 'get_weather',
      docstring: 'Current weather for a city.',
      description: null,
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      examples: [],
      notes: [],
      avoid: [],
      call_example: null,
      queries_source: null,
      version: 1,
      model_view: {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city.',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    });
    const stored = await env.DB.prepare('SELECT COUNT(*) AS n FROM tools WHERE agent = ?1 AND vector IS NOT NULL')
      .bind(agent)
      .first<{ n: number }>();
    expect(stored?.n).toBe(4);
  });

  it('treats an identical definition as a no-op and a changed one as a new version', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [weather] } });
    const again = await api('PUT', `/v1/agents/${agent}/tools`, {
      body: { tools: [{ parameters: weather.parameters, description: weather.description, name: weather.name }] },
    });
    expect(again.body.tools[0].version).toBe(1);
    const changed = await api('PUT', `/v1/agents/${agent}/tools`, {
      body: { tools: [{ ...weather, description: 'Weather now and the next 3 days.' }] },
    });
    expect(changed.body.tools[0]).toMatchObject({ version: 2, docstring: 'Weather now and the next 3 days.' });
    const versions = await api('GET', `/v1/agents/${agent}/tools/get_weather/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { version: number; source: string }) => [v.version, v.source])).toEqual([
      [2, 'registered'],
      [1, 'registered'],
    ]);
    expect(versions.body.versions[1].definition).toEqual({
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: weather.parameters,
    });
  });

  it('keeps hand-written examples with source unknown', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, {
      body: { tools: [{ ...weather, examples: ['is it raining in Oslo'] }] },
    });
    const res = await api('GET', `/v1/agents/${agent}/tools/get_weather/examples`);
    expect(res).toMatchObject({
      status: 200,
      body: { examples: [{ text: 'is it raining in Oslo', source: 'unknown', revision_id: null }] },
    });
  });

  it('rejects a schema that is not a JSON-Schema object, bad names and duplicates, writing nothing', async () => {
    const agent = agentId();
    for (const body of [
      { tools: [{ name: 'x', description: 'd', parameters: { type: 'string' } }] },
      { tools: [{ name: 'bad name!', description: 'd' }] },
      { tools: [weather, weather] },
      { tools: 'nope' },
      { tools: [weather], extra: true },
    ]) {
      const res = await api('PUT', `/v1/agents/${agent}/tools`, { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details.length).toBeGreaterThan(0);
    }
    const n = await env.DB.prepare('SELECT COUNT(*) AS n FROM tools WHERE agent = ?1')
      .bind(agent)
      .first<{ n: number }>();
    expect(n?.n).toBe(0);
  });

  it('refuses more than 1,000 tools in one request', async () => {
    const tools = Array.from({ length: 1001 }, (_, i) => tool(`t${i}`, 'x'));
    const res = await api('PUT', `/v1/agents/${agentId()}/tools`, { body: { tools } });
    expect(res.status).toBe(400);
  });
});

describe('GET and DELETE tools', () => {
  it('reads one row, lists rows, deletes a row (404 afterwards) and keeps its history', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [weather, tool('a/b.c-d', 'slashes in names')] } });
    const one = await api('GET', `/v1/agents/${agent}/tools/${encodeURIComponent('a/b.c-d')}`);
    expect(one.status).toBe(200);
    expect(one.body.name).toBe('a/b.c-d');
    const list = await api('GET', `/v1/agents/${agent}/tools`);
    expect(list.body.tools.map((t: { name: string }) => t.name)).toEqual(['a/b.c-d', 'get_weather']);
    expect((await api('DELETE', `/v1/agents/${agent}/tools/get_weather`)).status).toBe(204);
    expect(await api('GET', `/v1/agents/${agent}/tools/get_weather`)).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', message: 'tool get_weather not found', details: [] } },
    });
    expect((await api('DELETE', `/v1/agents/${agent}/tools/get_weather`)).status).toBe(404);
    const again = await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [weather] } });
    expect(again.body.tools[0].version).toBe(2);
  });

  it('answers 404 for an unknown agent', async () => {
    const res = await api('GET', `/v1/agents/${agentId()}/tools`);
    expect(res).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });
});
