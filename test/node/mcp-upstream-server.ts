/**
 * A small upstream MCP server for the gateway's Node tests: built with the official SDK, stateless
 * Streamable HTTP on a loopback port, serving the tools it is given. It records every JSON-RPC
 * method it receives (with the called tool and the Authorization header that came with it), can
 * stop listing a tool, and can answer named tools' calls with a JSON-RPC error before the SDK sees
 * them.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
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

/**
 * Starts the server on 127.0.0.1 with `tools` (name → [description, handler]); a call of a tool
 * named in `rpcErrors` is answered with a JSON-RPC internal error carrying that message.
 */
export async function startUpstream(
  tools: Record<string, [string, Handler]>,
  rpcErrors: Record<string, string> = {},
): Promise<UpstreamServer> {
  const listed = new Set(Object.keys(tools));
  const seen: UpstreamServer['seen'] = [];
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    if (body?.method)
      seen.push({ method: body.method, tool: body.params?.name, authorization: req.headers.authorization });
    const rpcError = body?.method === 'tools/call' ? rpcErrors[body.params?.name] : undefined;
    if (rpcError !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32603, message: rpcError } }));
      return;
    }
    const mcp = new McpServer({ name: 'upstream', version: '1.0.0' });
    for (const name of listed) {
      const [description, handler] = tools[name] ?? ['', async () => text('')];
      mcp.registerTool(
        name,
        { description, inputSchema: { path: z.string().optional(), order_id: z.string().optional() } },
        handler,
      );
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    tools: listed,
    close: () => new Promise((r) => server.close(() => r()) && server.closeAllConnections()),
  };
}
