/**
 * Upstream MCP servers for the gateway's Node tests, and the calls a test makes to the Worker as an
 * admin or as an MCP client. The servers are built with the official SDK, stateless Streamable HTTP
 * on a loopback port: `startUpstream` serves named tools with handlers (recording every JSON-RPC
 * method with the called tool and the Authorization header, able to stop listing a tool or to answer
 * a call with a JSON-RPC error); `startListedUpstream` lists raw tool definitions as they are at each
 * `tools/list` (a poisoned description, a hidden character in a name) and answers every call.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server as LowLevelServer } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { inject } from 'vitest';
import { z } from 'zod';

export interface UpstreamServer {
  url: string;
  /** Every JSON-RPC method the upstream received, with the tool name of a call and the auth header. */
  seen: { method: string; tool?: string; authorization?: string }[];
  /** The tools it lists now: delete one to make it vanish from the next tools/list. */
  tools: Set<string>;
  close(): Promise<void>;
}

export type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };
export type Handler = (args: Record<string, unknown>) => Promise<ToolResult>;

/** A text result, marked as an error when `isError`. */
export const text = (t: string, isError?: boolean): ToolResult => ({
  content: [{ type: 'text' as const, text: t }],
  ...(isError ? { isError } : {}),
});

/** The SDK server of one request, as a Streamable HTTP transport without sessions connects it. */
type Connectable = Pick<McpServer, 'connect'>;

/**
 * Listens on 127.0.0.1: each request's JSON body goes to `answer`, which may answer it itself (true)
 * or leave it to a fresh SDK server from `server`.
 */
async function listen(
  server: () => Connectable,
  answer: (
    body: { method?: string; id?: unknown; params?: { name?: string } } | undefined,
    req: IncomingMessage,
    res: ServerResponse,
  ) => boolean,
): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    if (answer(body, req, res)) return;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await server().connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise((r) => http.close(() => r()) && http.closeAllConnections()),
  };
}

/**
 * Starts a server with `tools` (name → [description, handler]); a call of a tool named in
 * `rpcErrors` is answered with a JSON-RPC internal error carrying that message.
 */
export async function startUpstream(
  tools: Record<string, [string, Handler]>,
  rpcErrors: Record<string, string> = {},
): Promise<UpstreamServer> {
  const listed = new Set(Object.keys(tools));
  const seen: UpstreamServer['seen'] = [];
  const server = () => {
    const mcp = new McpServer({ name: 'upstream', version: '1.0.0' });
    for (const name of listed) {
      const [description, handler] = tools[name] ?? ['', async () => text('')];
      mcp.registerTool(
        name,
        { description, inputSchema: { path: z.string().optional(), order_id: z.string().optional() } },
        handler,
      );
    }
    return mcp;
  };
  const http = await listen(server, (body, req, res) => {
    if (body?.method)
      seen.push({ method: body.method, tool: body.params?.name, authorization: req.headers.authorization });
    const rpcError = body?.method === 'tools/call' ? rpcErrors[body.params?.name ?? ''] : undefined;
    if (rpcError === undefined) return false;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body?.id, error: { code: -32603, message: rpcError } }));
    return true;
  });
  return { ...http, seen, tools: listed };
}

/** A server listing `tools()` as they are at each tools/list; every call answers "<name> done". */
export async function startListedUpstream(
  tools: () => Tool[],
): Promise<{ url: string; calls: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const server = () => {
    const mcp = new LowLevelServer({ name: 'upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools() }));
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
      calls.push(request.params.name);
      return { content: [{ type: 'text', text: `${request.params.name} done` }] };
    });
    return mcp;
  };
  return { ...(await listen(server, () => false)), calls };
}

const base = () => inject('workerUrl');
const admin = () => inject('adminToken');

/** One request to the Worker (the admin token unless `token`): status, raw text and parsed body. */
export async function call(method: string, path: string, body?: unknown, token = admin()) {
  const res = await fetch(`${base()}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const raw = await res.text();
  return { status: res.status, raw, body: raw ? JSON.parse(raw) : null };
}

/** The SDK's Client connected to the agent's MCP endpoint (the admin token unless `token`). */
export async function connect(agent: string, token = admin()): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base()}/v1/agents/${agent}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The tools the gateway's `search_tools` offers the client for `request` (its structured answer). */
export async function searchTools(
  client: Client,
  request: string,
  k?: number,
): Promise<{ function: { name: string; description: string } }[]> {
  const search = await client.callTool({
    name: 'search_tools',
    arguments: k === undefined ? { request } : { request, k },
  });
  return (search.structuredContent as { tools: { function: { name: string; description: string } }[] }).tools;
}

/** The JSON-RPC error a call failed with; throws when it did not fail. */
export async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; message: string };
  }
  throw new Error('the call did not fail');
}
