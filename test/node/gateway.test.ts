/**
 * Whetstone as an MCP gateway, end to end: real upstream MCP servers (built with the SDK, on
 * loopback ports) registered with the Worker under `wrangler dev`, and the SDK's Client driving
 * the agent's MCP endpoint as any MCP client would: sync, list, search, call, the call log, a tool
 * that vanished, allow/deny lists, an upstream that hangs or answers an error.
 */
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  call,
  connect,
  type Handler,
  rpcError,
  searchTools,
  startUpstream,
  text,
  type UpstreamServer,
} from './mcp-upstream-server.ts';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallRecord } from '../../src/core/records.ts';
import { eventually } from '../helpers/eventually.ts';

const SECRET = 'Bearer upstream-secret-Vb71kQ';

const FILE_TOOLS: Record<string, [string, Handler]> = {
  read_file: ['Read a text file from the workspace by its path.', async (a) => text(`contents of ${String(a.path)}`)],
  delete_file: ['Delete a file from the workspace by its path.', async () => text('deleted')],
  write_file: ['Write text into a file of the workspace.', async () => text('disk full: 0 bytes left', true)],
  archive_file: ['Move a file of the workspace into the archive.', async () => text('archived')],
  get_weather: ['Weather as the file server records it.', async () => text('sunny')],
  get_order: [
    'Look up an order of the shop by its id.',
    async (a) =>
      String(a.order_id).startsWith('ORD-') ? text('shipped') : text('order_id must start with the ORD- prefix', true),
  ],
  // Answered with a JSON-RPC error by the server (RPC_ERRORS), before the SDK sees the call.
  index_files: ['Rebuild the search index of the workspace files.', async () => text('indexed')],
};

const RPC_ERRORS = { index_files: 'index database offline' };

const HANG_TOOLS: Record<string, [string, Handler]> = {
  wait_forever: ['A tool that never answers.', () => new Promise(() => undefined)],
};

/** The agent's logged calls, from its export (admin). */
type LoggedCall = Pick<CallRecord, 'tool' | 'arguments' | 'success' | 'error' | 'request' | 'turn_id'>;

async function loggedCalls(agent: string): Promise<LoggedCall[]> {
  const res = await fetch(`${inject('workerUrl')}/v1/agents/${agent}/export`, {
    headers: { authorization: `Bearer ${inject('adminToken')}` },
  });
  const lines = (await res.text()).split('\n').filter(Boolean);
  return lines.map((l) => JSON.parse(l) as LoggedCall & { type: string }).filter((l) => l.type === 'call');
}

/** What `pick` finds in the agent's logged calls, polled for up to 10 s (calls are logged after the answer). */
function whenLogged<T>(agent: string, pick: (calls: LoggedCall[]) => T | undefined): Promise<T> {
  return eventually(async () => pick(await loggedCalls(agent)), 10_000);
}

let files: UpstreamServer;

/** A call the gateway refuses as invalid params with `message`, which never reaches the files upstream. */
async function expectRefusedUnsent(client: Client, name: string, args: Record<string, unknown>, message: string) {
  const before = files.seen.length;
  const refused = await rpcError(client.callTool({ name, arguments: args }));
  expect(refused).toMatchObject({ code: -32602, message: expect.stringContaining(message) });
  expect(files.seen.length).toBe(before);
}
let hang: UpstreamServer;
const agent = `gateway-${Date.now().toString(36)}`;

beforeAll(async () => {
  [files, hang] = await Promise.all([startUpstream(FILE_TOOLS, RPC_ERRORS), startUpstream(HANG_TOOLS)]);
  const own = {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  };
  expect((await call('PUT', `/v1/agents/${agent}/tools`, { tools: [own] })).status).toBe(200);
  const putFiles = await call('PUT', `/v1/agents/${agent}/upstreams/files`, {
    url: files.url,
    headers: { Authorization: SECRET },
    timeout_ms: 5000,
  });
  expect(putFiles.status).toBe(200);
  expect(putFiles.raw).not.toContain('upstream-secret');
  const putHang = await call('PUT', `/v1/agents/${agent}/upstreams/hang`, { url: hang.url, timeout_ms: 1500 });
  expect(putHang.status).toBe(200);
});

afterAll(async () => {
  await Promise.all([files?.close(), hang?.close()]);
});

describe('the MCP gateway', () => {
  it('syncs an upstream: its tools become the agent’s, a name the agent has is prefixed, the header reaches it', async () => {
    const sync = await call('POST', `/v1/agents/${agent}/upstreams/files/sync`);
    expect(sync.status).toBe(200);
    expect(sync.body).toEqual({
      status: 'ok',
      error: null,
      listed: 7,
      registered: [
        'read_file',
        'delete_file',
        'write_file',
        'archive_file',
        'files.get_weather',
        'get_order',
        'index_files',
      ],
      unavailable: [],
      quarantined: [],
      skipped: [],
    });
    expect(files.seen.map((s) => s.method)).toEqual(['initialize', 'notifications/initialized', 'tools/list']);
    expect(files.seen.every((s) => s.authorization === SECRET)).toBe(true);
    expect((await call('POST', `/v1/agents/${agent}/upstreams/hang/sync`)).body.registered).toEqual(['wait_forever']);
    const tools = await call('GET', `/v1/agents/${agent}/tools`);
    expect(tools.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(
      [
        'archive_file',
        'delete_file',
        'files.get_weather',
        'get_order',
        'get_weather',
        'index_files',
        'read_file',
        'wait_forever',
        'write_file',
      ].sort(),
    );
    const up = await call('GET', `/v1/agents/${agent}/upstreams/files`);
    expect(up.body).toMatchObject({ status: 'ok', failures: 0, header_names: ['Authorization'] });
    expect(up.raw).not.toContain('upstream-secret');
  });

  it('lists pinned tools with the meta-tools, forwards a call unchanged and logs it on the search turn', async () => {
    expect((await call('PUT', `/v1/agents/${agent}/tools/read_file/pin`)).status).toBe(200);
    const client = await connect(agent);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(['read_file', 'search_tools', 'report_tool_call', 'call_tool']);
    const search = await client.callTool({ name: 'search_tools', arguments: { request: 'read the file notes.txt' } });
    const found = search.structuredContent as { turn_id: string; tools: { function: { name: string } }[] };
    expect(found.tools.map((t) => t.function.name)).toContain('read_file');
    const before = files.seen.length;
    const result = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(result).toEqual({ content: [{ type: 'text', text: 'contents of notes.txt' }] });
    const viaMeta = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'write_file', arguments: { path: 'a' } },
    });
    expect(viaMeta).toEqual({ content: [{ type: 'text', text: 'disk full: 0 bytes left' }], isError: true });
    expect(
      files.seen
        .slice(before)
        .filter((s) => s.method === 'tools/call')
        .map((s) => s.tool),
    ).toEqual(['read_file', 'write_file']);
    const calls = await whenLogged(agent, (c) => (c.length >= 2 ? c : undefined));
    const rows = calls.map((c) => [c.tool, c.arguments, c.success, c.error, c.request, c.turn_id]);
    expect(rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['read_file', { path: 'notes.txt' }, true, null, 'read the file notes.txt', found.turn_id],
      ['write_file', { path: 'a' }, false, 'disk full: 0 bytes left', 'read the file notes.txt', found.turn_id],
    ]);
    await client.close();
  });

  it('times out a hung upstream with an MCP error naming it, without delaying a call to another upstream', async () => {
    const client = await connect(agent);
    const started = Date.now();
    const hung = rpcError(client.callTool({ name: 'wait_forever', arguments: {} }, undefined, { timeout: 20_000 }));
    await new Promise((r) => setTimeout(r, 200));
    const quick = await client.callTool({ name: 'read_file', arguments: { path: 'b.txt' } });
    const quickMs = Date.now() - started;
    expect(quick).toEqual({ content: [{ type: 'text', text: 'contents of b.txt' }] });
    expect(quickMs).toBeLessThan(1500);
    expect(await hung).toMatchObject({
      code: -32001,
      message: expect.stringContaining('upstream hang: no answer within 1500 ms'),
    });
    await client.close();
  });

  it('maps an upstream JSON-RPC error, then marks a vanished tool unavailable: not forwarded, not routed', async () => {
    const client = await connect(agent);
    const rpc = await rpcError(client.callTool({ name: 'index_files', arguments: {} }));
    expect(rpc).toEqual(
      expect.objectContaining({ code: -32603, message: 'MCP error -32603: upstream files: index database offline' }),
    );
    const failed = await whenLogged(agent, (c) => c.find((x) => x.tool === 'index_files'));
    expect(failed).toMatchObject({ success: false, error: 'upstream files: index database offline' });
    files.tools.delete('archive_file');
    const sync = await call('POST', `/v1/agents/${agent}/upstreams/files/sync`);
    expect(sync.body).toMatchObject({ status: 'ok', listed: 6, unavailable: ['archive_file'] });
    await expectRefusedUnsent(
      client,
      'archive_file',
      { path: 'x' },
      'tool archive_file is no longer served by upstream files',
    );
    const names = (await searchTools(client, 'move a file into the archive', 10)).map((t) => t.function.name);
    expect(names).not.toContain('archive_file');
    const up = await call('GET', `/v1/agents/${agent}/upstreams/files`);
    expect(up.body.tools).toContainEqual({
      name: 'archive_file',
      remote_name: 'archive_file',
      available: false,
      flags: [],
    });
    expect((await call('GET', `/v1/agents/${agent}/tools/archive_file`)).status).toBe(200);
    await client.close();
  });

  it('enforces a key’s allow and deny lists in tools/list, search_tools and tools/call', async () => {
    expect((await call('PUT', `/v1/agents/${agent}/tools/delete_file/pin`)).status).toBe(200);
    const denied = await call('POST', `/v1/agents/${agent}/keys`, {
      role: 'agent',
      tool_access: { deny: ['delete_file'] },
    });
    expect(denied.body.tool_access).toEqual({ deny: ['delete_file'] });
    const client = await connect(agent, denied.body.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'read_file',
      'search_tools',
      'report_tool_call',
      'call_tool',
    ]);
    const names = (await searchTools(client, 'delete the file old.txt', 10)).map((t) => t.function.name);
    expect(names).not.toContain('delete_file');
    await expectRefusedUnsent(
      client,
      'delete_file',
      { path: 'old.txt' },
      'tool delete_file is not allowed for this key',
    );
    const logged = await whenLogged(agent, (c) => c.find((x) => x.tool === 'delete_file'));
    expect(logged).toMatchObject({ success: false, error: 'denied: tool delete_file is not allowed for this key' });
    await client.close();

    const onlyHang = await call('POST', `/v1/agents/${agent}/keys`, {
      role: 'agent',
      tool_access: { allow: ['upstream:hang'] },
    });
    const limited = await connect(agent, onlyHang.body.key);
    expect((await limited.listTools()).tools.map((t) => t.name)).toEqual([
      'search_tools',
      'report_tool_call',
      'call_tool',
    ]);
    const readRefused = await rpcError(limited.callTool({ name: 'read_file', arguments: { path: 'a' } }));
    expect(readRefused.message).toContain('tool read_file is not allowed for this key');
    await limited.close();
  });

  it('learns from forwarded calls alone: two failed calls in two conversations become a note search_tools answers', async () => {
    const client = await connect(agent);
    for (const n of [1, 2]) {
      await client.callTool({
        name: 'search_tools',
        arguments: { request: `where is order ${n}?`, conversation_id: `orders-${n}` },
      });
      const bad = await client.callTool({ name: 'get_order', arguments: { order_id: `12${n}` } });
      expect(bad.isError).toBe(true);
      const good = await client.callTool({ name: 'get_order', arguments: { order_id: `ORD-12${n}` } });
      expect(good).toEqual({ content: [{ type: 'text', text: 'shipped' }] });
    }
    await whenLogged(agent, (all) => {
      const calls = all.filter((c) => c.tool === 'get_order');
      return calls.length === 4 && calls.every((c) => c.turn_id !== null) ? calls : undefined;
    });
    const review = await call('POST', `/v1/agents/${agent}/reviews`, {});
    expect(review.status).toBe(200);
    const revisions = await call('GET', `/v1/agents/${agent}/revisions?tool=get_order&status=proposed`);
    const revision = revisions.body.revisions[0];
    expect(revision?.notes_added?.length).toBeGreaterThan(0);
    const applied = await call('POST', `/v1/agents/${agent}/revisions/${revision.revision_id}/apply`, {
      approved_by: 'gateway-test',
    });
    expect(applied.status).toBe(200);
    const views = await searchTools(client, 'where is order 3?');
    const view = views.find((t) => t.function.name === 'get_order');
    expect(view?.function.description).toContain(revision.notes_added[0]);
    await client.close();
  });

  it('never follows an upstream redirect: the sync fails naming it, and the header never reaches the target', async () => {
    const target = await startUpstream(FILE_TOOLS, RPC_ERRORS);
    const redirector = createServer((_req, res) => {
      res.writeHead(307, { location: target.url });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      const address = redirector.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp`;
      const put = await call('PUT', `/v1/agents/${agent}/upstreams/moved`, {
        url,
        headers: { Authorization: SECRET },
        timeout_ms: 3000,
      });
      expect(put.status).toBe(200);
      const sync = await call('POST', `/v1/agents/${agent}/upstreams/moved/sync`);
      expect(sync.body.status).toBe('failing');
      expect(sync.body.error).toContain('redirect (307), which is not followed');
      expect(target.seen).toEqual([]);
    } finally {
      await new Promise<void>((r) => redirector.close(() => r()));
      await target.close();
    }
  });

  it('refuses a key tool list that is not tool names or upstream entries, and creates no key', async () => {
    const bad = await call('POST', `/v1/agents/${agent}/keys`, {
      role: 'agent',
      tool_access: { allow: ['bad name!'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
  });
});
