import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { logDb, storedTurn } from '../helpers/log.ts';
import { ADMIN, agentId, agentWithTools, api } from '../helpers/requests.ts';
import { DESK_TOOLS } from '../helpers/tools.ts';
import pkg from '../../package.json';

const tools = DESK_TOOLS;

/** A fresh agent with the file's tools. */
const setup = () => agentWithTools(tools);

/** An MCP client from the SDK whose HTTP goes straight into the Worker entry. */
async function connect(agent: string, token = ADMIN): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://whetstone.test/v1/agents/${agent}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: (url, init) => exports.default.fetch(new Request(url, init)),
  });
  const client = new Client(
    { name: 'mcp-test', version: '1.0.0' },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  await client.connect(transport);
  return client;
}

function structured(result: unknown): any {
  const r = result as { structuredContent: unknown; content: { type: string; text: string }[] };
  expect(r.content).toEqual([{ type: 'text', text: JSON.stringify(r.structuredContent) }]);
  return r.structuredContent;
}

describe('MCP endpoint /v1/agents/:agent/mcp', () => {
  it('initializes and lists search_tools and report_tool_call with their input schemas', async () => {
    const client = await connect(await setup());
    expect(client.getServerVersion()).toEqual({ name: 'whetstone', version: pkg.version });
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name)).toEqual(['search_tools', 'report_tool_call', 'call_tool']);
    const search = listed[0];
    expect(search?.inputSchema).toMatchObject({ type: 'object', required: ['request'], additionalProperties: false });
    expect(Object.keys(search?.inputSchema.properties ?? {})).toEqual(['request', 'conversation_id', 'k']);
    const report = listed[1];
    expect(report?.inputSchema).toMatchObject({ type: 'object', required: ['tool', 'success'] });
    expect(Object.keys(report?.inputSchema.properties ?? {})).toEqual([
      'id',
      'tool',
      'arguments',
      'success',
      'error',
      'request',
      'turn_id',
      'conversation_id',
      'at',
    ]);
    await client.close();
  });

  it('search_tools routes the request, returns model views and records the turn', async () => {
    const agent = await setup();
    const client = await connect(agent);
    const result = await client.callTool({
      name: 'search_tools',
      arguments: { request: 'will it rain in Oslo tomorrow?', conversation_id: 'c-9', k: 2 },
    });
    const body = structured(result);
    expect(result.isError).toBeUndefined();
    expect(body.routed).toBe(true);
    expect(body.tools).toHaveLength(2);
    expect(body.tools[0]).toEqual({
      type: 'function',
      function: { name: 'get_weather', description: tools[0]?.description, parameters: tools[0]?.parameters },
    });
    const turn = await storedTurn(agent, body.turn_id, 'request, conversation_id, routed');
    expect(turn).toEqual({ request: 'will it rain in Oslo tomorrow?', conversation_id: 'c-9', routed: 1 });
    await client.close();
  });

  it('report_tool_call records one call, idempotent by id', async () => {
    const agent = await setup();
    const client = await connect(agent);
    const call = {
      id: 'mcp-1',
      tool: 'get_weather',
      arguments: { city: 'Oslo' },
      success: false,
      error: 'city not found',
      request: 'rain in Oslo?',
      turn_id: 't-1',
    };
    expect(structured(await client.callTool({ name: 'report_tool_call', arguments: call }))).toEqual({
      accepted: 1,
      duplicates: 0,
    });
    expect(structured(await client.callTool({ name: 'report_tool_call', arguments: call }))).toEqual({
      accepted: 0,
      duplicates: 1,
    });
    const row = await logDb(agent)
      .prepare('SELECT tool, success, error, request, turn_id, arguments FROM calls WHERE agent = ?1')
      .bind(agent)
      .all();
    expect(row.results).toEqual([
      {
        tool: 'get_weather',
        success: 0,
        error: 'city not found',
        request: 'rain in Oslo?',
        turn_id: 't-1',
        arguments: '{"city":"Oslo"}',
      },
    ]);
    await client.close();
  });

  it('answers invalid tool input as a tool error and records nothing', async () => {
    const agent = await setup();
    const client = await connect(agent);
    const result = await client.callTool({ name: 'report_tool_call', arguments: { tool: 'get_weather' } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('success');
    const n = await logDb(agent)
      .prepare('SELECT COUNT(*) AS n FROM calls WHERE agent = ?1')
      .bind(agent)
      .first<{ n: number }>();
    expect(n?.n).toBe(0);
    await client.close();
  });

  it('accepts an agent key of the agent and refuses others with the error shape', async () => {
    const agent = await setup();
    const key = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } })).body.key as string;
    const client = await connect(agent, key);
    expect((await client.listTools()).tools).toHaveLength(3);
    await client.close();

    const other = await setup();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    expect(await api('POST', `/v1/agents/${other}/mcp`, { token: key, body: initialize, headers })).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', message: `agent ${other} not found`, details: [] } },
    });
    expect(await api('POST', `/v1/agents/${agent}/mcp`, { token: null, body: initialize, headers })).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized', message: 'send Authorization: Bearer <token>', details: [] } },
    });
    expect((await api('POST', `/v1/agents/${agentId()}/mcp`, { body: initialize, headers })).status).toBe(404);
  });

  it('answers GET with 405 (no server-initiated stream), a wrong Accept with a JSON-RPC 406 and a bad agent id with 400', async () => {
    const res = await api('GET', `/v1/agents/${agentId()}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.body.error.code).toBe('method_not_allowed');
    const agent = await setup();
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect(
      await api('POST', `/v1/agents/${agent}/mcp`, { body: list, headers: { accept: 'application/json' } }),
    ).toMatchObject({
      status: 406,
      body: {
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
        },
        id: null,
      },
    });
    const bad = await api('POST', '/v1/agents/bad%20id!/mcp', {
      body: {},
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
  });
});

describe('MCP endpoint HTTP conformance', () => {
  const accept = 'application/json, text/event-stream';

  it('refuses a foreign Origin with 403 before anything else, and serves its own origin with CORS headers', async () => {
    const agent = await setup();
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const foreign = await api('POST', `/v1/agents/${agent}/mcp`, {
      body: list,
      headers: { accept, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('forbidden');
    const own = await api('POST', `https://whetstone.test/v1/agents/${agent}/mcp`, {
      body: list,
      headers: { accept, origin: 'https://whetstone.test' },
    });
    expect(own.status).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBe('https://whetstone.test');
    expect(own.body.result.tools.map((t: { name: string }) => t.name)).toContain('search_tools');
    // DNS rebinding: a page named evil.example resolving to this machine sends its own name as Host
    // and Origin, equal to each other, over plain HTTP.
    const rebound = await api('POST', `http://evil.example:8787/v1/agents/${agent}/mcp`, {
      body: list,
      headers: { accept, origin: 'http://evil.example:8787' },
    });
    expect(rebound.status).toBe(403);
    const local = await api('POST', `http://127.0.0.1:8787/v1/agents/${agent}/mcp`, {
      body: list,
      headers: { accept, origin: 'http://127.0.0.1:8787' },
    });
    expect(local.status).toBe(200);
  });

  it('answers a CORS preflight without a token, and a 401 names the Bearer scheme', async () => {
    const agent = await setup();
    const pre = await api('OPTIONS', `https://whetstone.test/v1/agents/${agent}/mcp`, {
      token: null,
      headers: {
        origin: 'https://whetstone.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://whetstone.test');
    expect(pre.headers.get('access-control-allow-methods')).toBe('POST');
    expect(pre.headers.get('access-control-allow-headers')).toContain('authorization');
    const anon = await api('POST', `/v1/agents/${agent}/mcp`, {
      token: null,
      body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      headers: { accept },
    });
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toBe('Bearer realm="whetstone"');
  });

  it('answers an empty batch with a JSON-RPC Invalid Request', async () => {
    const agent = await setup();
    const res = await api('POST', `/v1/agents/${agent}/mcp`, { body: [], headers: { accept } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: the batch is empty' },
    });
  });

  it('does not announce a tools/list_changed notification it can never send', async () => {
    const client = await connect(await setup());
    expect(client.getServerCapabilities()?.tools).toEqual({});
    await client.close();
  });
});

describe('MCP endpoint in the OpenAPI document', () => {
  it('is listed with its security and path parameter', async () => {
    const doc = (await api('GET', '/openapi.json', { token: null })).body;
    const post = doc.paths['/v1/agents/{agent}/mcp']?.post;
    expect(post.security).toEqual([{ bearer: [] }]);
    expect(post.parameters).toEqual([expect.objectContaining({ name: 'agent', in: 'path', required: true })]);
    expect(Object.keys(post.responses)).toEqual(['200', '202', '400', '401', '403', '404', '406', '413', '415', '429']);
  });
});
