/**
 * The MCP project's conformance suite (`@modelcontextprotocol/conformance`) against an agent's MCP
 * endpoint under `wrangler dev`: the server scenarios that apply to a tools server. The runner needs
 * Node 22 (installed by the global setup, test/node/node22.ts) and sends no `Authorization` header, so it talks to a loopback proxy
 * that adds the agent's token and passes everything else (`Host`, `Origin`) as the runner sent it.
 * The scenarios that do not apply are listed, with the reason, in docs/integrations.md.
 */
import { spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';

const runner = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

/** The scenarios a tools server without resources, prompts, logging or sampling must pass. */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

let proxy: Server | undefined;
let proxyUrl: string;
let node: string;

beforeAll(async () => {
  node = inject('node22');
  const base = inject('workerUrl');
  const token = inject('adminToken');
  const agent = `conformance-${Date.now().toString(36)}`;
  const put = await fetch(`${base}/v1/agents/${agent}/tools`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      tools: [
        {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ],
    }),
  });
  expect(put.status).toBe(200);
  const target = new URL(`${base}/v1/agents/${agent}/mcp`);
  const server = createServer((req, res) => {
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on('error', (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(up);
  });
  proxy = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  proxyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  // No proxy when the setup failed: closing nothing must not wait for a callback that never comes.
  const open = proxy;
  if (open) await new Promise((resolve) => open.close(resolve));
});

function run(scenario: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, [runner, 'server', '--url', proxyUrl, '--scenario', scenario], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

for (const scenario of SCENARIOS) {
  it(`passes the conformance scenario ${scenario}`, async () => {
    const { code, out } = await run(scenario);
    // The runner's own report says which check failed and why.
    expect(out, out).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(code, out).toBe(0);
  }, 120_000);
}
