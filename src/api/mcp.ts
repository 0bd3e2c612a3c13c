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
import { AgentId, CallIn, ErrorBody, RouteBody, ToolName } from '../schemas.ts';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  allowedRouted,
  type ForwardFailure,
  type ForwardOutcome,
  forwardToolCall,
  type GatewayCaller,
  listedTools,
  rememberTurn,
} from '../services/gateway.ts';
import { recordCalls } from '../services/calls.ts';
import { route } from '../services/route-serving.ts';
import { AgentParams, agentFor, bearer, createApi, nowIso } from './common.ts';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './common.ts';
import { MCP_CORS_ALLOW_HEADERS, corsHeaders, isEmptyBatch, originAllowed, parseOrigins } from '../core/mcp-http.ts';

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
        {
          description:
            s === 401
              ? 'no or a bad token (with WWW-Authenticate: Bearer)'
              : s === 403
                ? 'a foreign browser Origin, or a key without the right'
                : 'error',
          content: { 'application/json': { schema: ErrorBody } },
        },
      ]),
    ),
    400: {
      description: 'a bad agent id (the Error shape), a body that is not JSON-RPC or an empty batch (a JSON-RPC error)',
    },
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
  // A batch with no message is an Invalid Request (JSON-RPC), not a notification to accept.
  const text = await c.req.raw.clone().text();
  if (isEmptyBatch(text))
    return c.json(
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: the batch is empty' } },
      400,
    );
  // The session id names the session's last search_tools turn, which forwarded calls are logged on;
  // the server keeps no other state, so any POST may carry any session id of this agent.
  const principal = c.get('principal');
  const opened = isInitialize(text) ? crypto.randomUUID() : null;
  const caller: GatewayCaller = {
    agent,
    access: principal.kind === 'key' ? principal.tool_access : null,
    sessionId: opened ?? c.req.header('mcp-session-id') ?? `key:${principal.id}`,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  };
  const server = createMcpServer(svc, agent, caller.waitUntil, caller);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  const res = await transport.handleRequest(c.req.raw);
  if (opened === null || res.status !== 200) return res;
  const withSession = new Response(res.body, res);
  withSession.headers.set('mcp-session-id', opened);
  return withSession;
});

/** Whether a body is an `initialize` request (alone: the spec forbids it in a batch). */
function isInitialize(text: string): boolean {
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';
  } catch {
    return false;
  }
}

/**
 * The HTTP guard of the MCP endpoint, before authentication: a browser `Origin` other than this
 * deployment's own or one listed in `MCP_ALLOWED_ORIGINS` is refused with 403 (a page reached by
 * DNS rebinding must not talk to the server); a CORS preflight from an allowed origin is answered
 * 204 without a token (browsers send none on a preflight); answers to an allowed origin carry CORS
 * headers; a 401 names the scheme in `WWW-Authenticate`.
 */
export function mcpHttpGuard(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (!originAllowed(origin, c.req.url, parseOrigins(c.env.MCP_ALLOWED_ORIGINS)))
      throw new ApiError('forbidden', `the origin ${origin} may not use this MCP endpoint`);
    if (c.req.method === 'OPTIONS') {
      return new Response(null, {
        status: 204,
        headers: {
          ...corsHeaders(origin),
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers': MCP_CORS_ALLOW_HEADERS,
          'access-control-max-age': '600',
        },
      });
    }
    await next();
    const extra: Record<string, string> = { ...corsHeaders(origin) };
    if (c.res.status === 401) extra['www-authenticate'] = 'Bearer realm="whetstone"';
    if (Object.keys(extra).length === 0) return;
    const res = new Response(c.res.body, c.res);
    for (const [k, v] of Object.entries(extra)) res.headers.set(k, v);
    c.res = res;
  };
}

const SEARCH_DESCRIPTION =
  'Find the tools that fit a user request. Returns the best tools as OpenAI function definitions ' +
  '(best first) and a turn_id. Pass that turn_id and the request to report_tool_call for every call you make.';
const REPORT_DESCRIPTION =
  'Report one tool call you made: the tool, its arguments and whether it succeeded (with the error ' +
  'when it failed). Include the turn_id and request from search_tools. Whetstone learns better ' +
  'tool descriptions from these reports.';

const CALL_DESCRIPTION =
  'Call a tool search_tools found, by its name, with its arguments: for clients that cannot call a ' +
  "tool tools/list did not name. The answer is the tool's own result.";

const CallToolInput = z.object({
  name: ToolName.describe('the tool name search_tools answered'),
  arguments: z.record(z.string(), z.unknown()).default({}).describe("the tool's arguments"),
});

/**
 * The MCP server of one agent for one request; its tools call the same services as the HTTP API.
 * With a `caller` it is the gateway: `tools/list` adds the pinned upstream tools the caller may use,
 * and a `tools/call` of an upstream tool (directly or through `call_tool`) is forwarded.
 */
export function createMcpServer(
  svc: Services,
  agent: string,
  waitUntil: (p: Promise<unknown>) => void,
  caller: GatewayCaller = { agent, access: null, sessionId: 'none', waitUntil },
): McpServer {
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
      const now = nowIso();
      const result = await route(svc, agent, input, now, waitUntil);
      await rememberTurn(
        svc,
        caller,
        { turn_id: result.turn_id, request: input.request, conversation_id: input.conversation_id ?? null },
        now,
      );
      const tools = await allowedRouted(
        svc,
        caller,
        result.model_tools.map((t) => ({ name: 'function' in t ? t.function.name : t.name, view: t })),
      );
      return jsonResult({ turn_id: result.turn_id, routed: result.routed, tools: tools.map((t) => t.view) });
    },
  );
  server.registerTool(
    'report_tool_call',
    { description: REPORT_DESCRIPTION, inputSchema: CallIn, annotations: { openWorldHint: false } },
    async (call) => {
      return jsonResult(await recordCalls(svc, agent, [call], nowIso()));
    },
  );
  server.registerTool(
    'call_tool',
    { description: CALL_DESCRIPTION, inputSchema: CallToolInput.shape, annotations: { openWorldHint: true } },
    async ({ name, arguments: args }) => answerForward(await forwardToolCall(svc, caller, name, args)),
  );
  routeGatewayCalls(server, svc, caller);
  // McpServer announces `tools.listChanged`; a stateless endpoint has no stream to send that
  // notification on, so the capability is withdrawn rather than promised.
  (server.server as unknown as { _capabilities: { tools?: Record<string, unknown> } })._capabilities.tools = {};
  return server;
}

type RequestHandler = (request: { params?: unknown }, extra: unknown) => Promise<Record<string, unknown>>;

/**
 * Puts the gateway in front of McpServer's own `tools/list` and `tools/call`: the list gets the
 * pinned upstream tools first; a call of a name that is not one of the endpoint's own tools is
 * forwarded, and its result answered as it came (the SDK's result schema would rewrite it). The
 * handlers are replaced in the protocol's table, as the SDK offers no hook for either.
 */
function routeGatewayCalls(server: McpServer, svc: Services, caller: GatewayCaller): void {
  const table = (server.server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  const list = table.get('tools/list');
  const call = table.get('tools/call');
  if (!list || !call) throw new Error('McpServer did not install its tools handlers');
  table.set('tools/list', async (request, extra) => {
    const [own, pinned] = await Promise.all([list(request, extra), listedTools(svc, caller)]);
    return { ...own, tools: [...pinned, ...((own.tools as unknown[]) ?? [])] };
  });
  table.set('tools/call', async (request, extra) => {
    const parsed = CallToolRequestSchema.safeParse(request);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, 'Invalid tools/call request');
    const { name, arguments: args } = parsed.data.params;
    // call_tool with a good input is forwarded here too, so its failures are the same MCP errors.
    const meta = name === 'call_tool' ? CallToolInput.safeParse(args ?? {}) : null;
    if (meta?.success) return answerForward(await forwardToolCall(svc, caller, meta.data.name, meta.data.arguments));
    if (OWN_TOOLS.has(name)) return call(request, extra);
    const outcome = await forwardToolCall(svc, caller, name, args ?? {});
    return answerForward(outcome);
  });
}

const OWN_TOOLS = new Set(['search_tools', 'report_tool_call', 'call_tool']);

/**
 * A JSON-RPC error the protocol answers with this code and message as they are (McpError would put
 * "MCP error <code>:" before the message, and the client's SDK puts it there once more).
 */
class GatewayRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A forwarded call that got no answer from its upstream, as the MCP error a client reads. */
function mcpErrorOf(f: ForwardFailure): GatewayRpcError {
  switch (f.reason) {
    case 'denied':
    case 'unknown':
    case 'unavailable':
    case 'quarantined':
      return new GatewayRpcError(ErrorCode.InvalidParams, f.message);
    case 'upstream':
      if (f.error.kind === 'timeout') return new GatewayRpcError(ErrorCode.RequestTimeout, f.message);
      return new GatewayRpcError(f.error.rpcCode ?? ErrorCode.InternalError, f.message);
  }
}

/** The upstream's result as the answer, or the MCP error of a failure. */
function answerForward(outcome: ForwardOutcome) {
  if (outcome.ok) return outcome.result as { content: { type: 'text'; text: string }[] };
  throw mcpErrorOf(outcome);
}

/** A tool result as JSON text (what a model reads) and as structured content (what code reads). */
function jsonResult(value: Record<string, unknown>) {
  return { content: [{ type: 'text' as const, text: JSON.stringify(value) }], structuredContent: value };
}
