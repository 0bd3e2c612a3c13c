/**
 * `POST /v1/agents/:agent/mcp`: Whetstone as an MCP server (Streamable HTTP), so any MCP
 * client can use it as its learning tool-search tool. Two tools: `search_tools` routes a request
 * (docs/learning.md) and `report_tool_call` records one call (docs/api.md Call). Stateless: every POST gets a
 * fresh server and transport and a JSON answer, which is what a Worker can serve without sessions.
 * GET (a server-to-client SSE stream) is answered 405, as the transport spec allows.
 * Authentication, the body limit and non-MCP failures (401, 403, 404, 400 for a bad agent id) go
 * through the app's middleware and error shape like every other `/v1` route.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { z } from '@hono/zod-openapi';
import { VERSION } from '../version.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import { AgentId, CallIn, ErrorBody, RouteBody } from '../schemas.ts';
import { recordCalls } from '../services/calls.ts';
import { route } from '../services/routing.ts';
import { AgentParams, agentFor, bearer, createApi, nowIso } from './common.ts';

export const mcpApi = createApi();

const JsonRpcMessage = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().optional(),
  })
  .openapi('JsonRpcMessage', {
    description: 'an MCP JSON-RPC message (initialize, tools/list, tools/call, notifications)',
  });

// Documented in /openapi.json like every route; served by the SDK's transport, not a zod validator.
mcpApi.openAPIRegistry.registerPath({
  method: 'post',
  path: '/v1/agents/{agent}/mcp',
  summary: 'MCP server (Streamable HTTP, stateless, JSON answers): search_tools and report_tool_call',
  security: bearer,
  request: {
    params: AgentParams,
    body: { content: { 'application/json': { schema: JsonRpcMessage } }, required: true },
  },
  responses: {
    200: { description: 'the JSON-RPC answer', content: { 'application/json': { schema: JsonRpcMessage } } },
    202: { description: 'a notification was accepted' },
    ...Object.fromEntries(
      [401, 403, 404, 413, 429].map((s) => [
        s,
        { description: 'error', content: { 'application/json': { schema: ErrorBody } } },
      ]),
    ),
    400: { description: 'a bad agent id (the Error shape) or a body that is not JSON-RPC (a JSON-RPC error)' },
    406: { description: 'Accept does not list application/json and text/event-stream (a JSON-RPC error)' },
    415: { description: 'the body is not application/json (a JSON-RPC error)' },
  },
});

mcpApi.post('/v1/agents/:agent/mcp', async (c) => {
  const parsed = AgentId.safeParse(c.req.param('agent'));
  if (!parsed.success)
    throw new ApiError('invalid_request', 'the request does not match the schema', [...parsed.error.issues]);
  const agent = agentFor(c, parsed.data, 'agent');
  const svc = c.get('svc');
  if (!(await svc.store.getAgent(agent))) throw notFound(`agent ${agent}`);
  const server = createMcpServer(svc, agent, (p) => c.executionCtx.waitUntil(p));
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  return transport.handleRequest(c.req.raw);
});

const SEARCH_DESCRIPTION =
  'Find the tools that fit a user request. Returns the best tools as OpenAI function definitions ' +
  '(best first) and a turn_id. Pass that turn_id and the request to report_tool_call for every call you make.';
const REPORT_DESCRIPTION =
  'Report one tool call you made: the tool, its arguments and whether it succeeded (with the error ' +
  'when it failed). Include the turn_id and request from search_tools. Whetstone learns better ' +
  'tool descriptions from these reports.';

/** The MCP server of one agent for one request; its tools call the same services as the HTTP API. */
export function createMcpServer(svc: Services, agent: string, waitUntil: (p: Promise<unknown>) => void): McpServer {
  // The SDK's default validator compiles schemas with `new Function`, which workerd forbids.
  const server = new McpServer(
    { name: 'whetstone', version: VERSION },
    { capabilities: { tools: {} }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  server.registerTool(
    'search_tools',
    {
      description: SEARCH_DESCRIPTION,
      inputSchema: RouteBody.omit({ format: true }),
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    async (input) => {
      const result = await route(svc, agent, input, nowIso(), waitUntil);
      return jsonResult({ turn_id: result.turn_id, routed: result.routed, tools: result.model_tools });
    },
  );
  server.registerTool(
    'report_tool_call',
    { description: REPORT_DESCRIPTION, inputSchema: CallIn, annotations: { openWorldHint: false } },
    async (call) => {
      return jsonResult(await recordCalls(svc, agent, [call], nowIso()));
    },
  );
  return server;
}

/** A tool result as JSON text (what a model reads) and as structured content (what code reads). */
function jsonResult(value: Record<string, unknown>) {
  return { content: [{ type: 'text' as const, text: JSON.stringify(value) }], structuredContent: value };
}
