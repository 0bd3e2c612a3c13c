/**
 * The MCP gateway's cost per call: one SDK Client calls an echo tool of an SDK MCP server on a
 * loopback port directly, and another calls the same tool through the agent's MCP endpoint under
 * `wrangler dev` (which opens its own connection to the upstream for each call: initialize, the
 * call). Calls are sequential, the two paths interleaved call by call so load on the machine hits
 * both alike; the figures are p50 and p99 of each and their difference.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import type { BenchWorker } from './worker.ts';

export interface GatewayFigures {
  calls: number;
  direct: { p50_ms: number; p99_ms: number };
  gateway: { p50_ms: number; p99_ms: number };
  overhead_p50_ms: number;
  overhead_p99_ms: number;
}

async function startEchoUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
    mcp.registerTool(
      'echo_text',
      { description: 'Echo a text back.', inputSchema: { text: z.string() } },
      async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function client(url: string, token?: string): Promise<Client> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const c = new Client({ name: 'bench', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return c;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

async function put(w: BenchWorker, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${w.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

/** `calls` sequential calls each way, after 20 of each to warm up. */
export async function measureGateway(w: BenchWorker, calls = 300): Promise<GatewayFigures> {
  const upstream = await startEchoUpstream();
  const agent = `bench-gateway-${Date.now().toString(36)}`;
  try {
    await put(w, 'PUT', `/v1/agents/${agent}/upstreams/echo`, { url: upstream.url });
    await put(w, 'POST', `/v1/agents/${agent}/upstreams/echo/sync`);
    const direct = await client(upstream.url);
    const gateway = await client(`${w.url}/v1/agents/${agent}/mcp`, w.token);
    const times = { direct: [] as number[], gateway: [] as number[] };
    for (let i = 0; i < calls + 20; i++) {
      for (const [path, c] of [
        ['direct', direct],
        ['gateway', gateway],
      ] as const) {
        const started = performance.now();
        await c.callTool({ name: 'echo_text', arguments: { text: `call ${i}` } });
        if (i >= 20) times[path].push(performance.now() - started);
      }
    }
    await Promise.all([direct.close(), gateway.close()]);
    const fig = (xs: number[]) => ({ p50_ms: quantile(xs, 0.5), p99_ms: quantile(xs, 0.99) });
    const d = fig(times.direct);
    const g = fig(times.gateway);
    return {
      calls,
      direct: d,
      gateway: g,
      overhead_p50_ms: g.p50_ms - d.p50_ms,
      overhead_p99_ms: g.p99_ms - d.p99_ms,
    };
  } finally {
    await upstream.close();
  }
}
