/** `DELETE /v1/agents/:agent` through HTTP: every row in D1, the Durable Object, then a clean start. */
import { env } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import { AGENT_TABLES } from '../../src/adapters/d1-store.ts';
import { services } from '../../src/env.ts';
import { settleQuality } from '../../src/services/quality-report.ts';
import { eventually } from '../helpers/eventually.ts';
import { count } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const TOOLS = [
  tool('get_order', 'Look up an order by its id.', { order_id: { type: 'string' } }),
  tool('refund_order', 'Refund an order.', { order_id: { type: 'string' } }),
];

/**
 * An agent with something in every table: tools, versions, turns, calls, outcomes, a revision, a
 * review, a key, a pin, a trace, settled routing-quality hours with a confused pair, and a webhook
 * with the review's delivery (to the loopback receiver of test/global-setup.ts).
 */
async function busyAgent(prefix: string): Promise<string> {
  const agent = agentId(prefix);
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
  const routed = await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'where is order 12', k: 1 } });
  const calls = [
    {
      tool: 'get_order',
      arguments: { order_id: '12' },
      success: false,
      error: 'order_id must start with ORD-',
      turn_id: routed.body.turn_id,
    },
    { tool: 'get_order', arguments: { order_id: '13' }, success: false, error: 'order_id must start with ORD-' },
    { tool: 'get_order', arguments: { order_id: 'ORD-12' }, success: true },
  ];
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
  await api('POST', `/v1/agents/${agent}/outcomes`, {
    body: { turn_id: routed.body.turn_id, ok: true, served_by: 'get_order' },
  });
  const webhooks = [{ url: `${inject('webhookReceiver')}/hook/${agent}`, kind: 'slack' }];
  expect((await api('PUT', `/v1/agents/${agent}/webhooks`, { body: { webhooks } })).status).toBe(200);
  expect((await api('POST', `/v1/agents/${agent}/reviews`, { body: {} })).status).toBe(200);
  await eventually(async () => ((await count('webhook_deliveries', agent)) > 0 ? true : undefined), 15_000);
  expect((await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } })).status).toBe(200);
  expect((await api('PUT', `/v1/agents/${agent}/tools/get_order/pin`, { body: {} })).status).toBeLessThan(300);
  const trace = {
    messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: 'other_tool', parameters: { type: 'object' } } }],
  };
  expect((await api('POST', `/v1/agents/${agent}/traces`, { body: trace })).status).toBeLessThan(300);
  // A request refund_order answered that the application says get_order served: a confused pair.
  const confused = await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'cancel order 14', k: 1 } });
  const refund = [
    { tool: 'refund_order', arguments: { order_id: 'ORD-14' }, success: true, turn_id: confused.body.turn_id },
  ];
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: refund } })).status).toBe(200);
  await api('POST', `/v1/agents/${agent}/outcomes`, {
    body: { turn_id: confused.body.turn_id, ok: false, served_by: 'get_order' },
  });
  // The gateway's rows: an upstream, a tool it serves, one it holds back, an MCP session's last search turn.
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO upstreams (agent, name, url, timeout_ms, created_at, updated_at) VALUES (?1, 'up', 'https://mcp.example/mcp', 10000, '2026-01-01', '2026-01-01')",
    ).bind(agent),
    env.DB.prepare(
      "INSERT INTO upstream_tools (agent, tool, upstream, remote_name) VALUES (?1, 'get_order', 'up', 'get_order')",
    ).bind(agent),
    env.DB.prepare(
      "INSERT INTO gateway_sessions (agent, session_id, turn_id, request, updated_at) VALUES (?1, 's1', 't1', 'where', '2026-01-01')",
    ).bind(agent),
    env.DB.prepare(
      `INSERT INTO upstream_quarantine (agent, upstream, remote_name, tool, definition, definition_hash, findings, quarantined_at)
       VALUES (?1, 'up', 'read_file', 'read_file', '{}', 'h', '[]', '2026-01-01')`,
    ).bind(agent),
  ]);
  await eventually(async () => ((await count('turns', agent)) > 1 ? true : undefined));
  // Three hours on, this hour has settled: its quality counts are stored.
  await settleQuality(services(env), agent, new Date(Date.now() + 3 * 3_600_000).toISOString(), 10);
  return agent;
}

async function rowsOf(agent: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of AGENT_TABLES) out[table] = await count(table, agent);
  return out;
}

describe('DELETE /v1/agents/:agent', () => {
  it('lists every table that holds an agent column', async () => {
    const { results } = await env.DB.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all<{
      name: string;
      sql: string;
    }>();
    const withAgent = results.filter((r) => /[(,]\s*agent\s+TEXT\b/i.test(r.sql)).map((r) => r.name);
    expect(withAgent.sort()).toEqual([...AGENT_TABLES].sort());
  });

  it('removes every row of the agent and its Durable Object state, leaves another agent alone, and a new registration starts clean', async () => {
    const gone = await busyAgent('del');
    const kept = await busyAgent('keep');
    const keptBefore = await rowsOf(kept);
    const goneBefore = await rowsOf(gone);
    expect(Object.values(goneBefore).every((n) => n > 0)).toBe(true);

    const res = await api('DELETE', `/v1/agents/${gone}`);
    expect(res.status).toBe(204);
    expect(Object.values(await rowsOf(gone))).toEqual(AGENT_TABLES.map(() => 0));
    expect(await rowsOf(kept)).toEqual(keptBefore);
    expect((await api('GET', `/v1/agents/${gone}/tools`)).status).toBe(404);
    expect((await api('POST', `/v1/agents/${gone}/route`, { body: { request: 'where is order 12' } })).status).toBe(
      404,
    );
    expect((await api('DELETE', `/v1/agents/${gone}`)).status).toBe(404);

    expect((await api('PUT', `/v1/agents/${gone}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
    const versions = await api('GET', `/v1/agents/${gone}/tools/get_order/versions`);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    expect((await api('GET', `/v1/agents/${gone}/revisions`)).body.revisions).toEqual([]);
    // The offer counts lived in the Durable Object: a fresh agent has routed nothing.
    const flags = await api('GET', `/v1/agents/${gone}/flags`);
    expect(flags.status).toBe(200);
    expect(JSON.stringify(flags.body)).not.toMatch(/"routed_turns":[1-9]/);
  });

  it('is for the admin only: an agent key gets 403 and nothing is deleted', async () => {
    const agent = await busyAgent('key');
    const key = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'operator' } })).body.key;
    const before = await rowsOf(agent);
    expect((await api('DELETE', `/v1/agents/${agent}`, { token: key })).status).toBe(403);
    expect(await rowsOf(agent)).toEqual(before);
  });
});
