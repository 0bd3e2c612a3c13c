/**
 * Shared by the security tests: the whole state of one agent as data (every table's rows
 * and the Durable Object's counts), a seeded agent carrying a distinctive marker in every kind of
 * stored text, revisions inserted for apply/undo/dismiss, and requests through `app.fetch` with a
 * per-test env (a fake model or embedder, a failing database).
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { createD1Revisions, type NewRevision } from '../../src/adapters/d1-revisions.ts';
import { AGENT_TABLES } from '../../src/adapters/d1-store.ts';
import { app } from '../../src/app.ts';
import { LOG_TABLES, logDb, storedTurn } from '../helpers/log.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { newRevision } from '../helpers/revisions.ts';
import { tool } from '../helpers/tools.ts';
import { oneCallTrace } from '../fixtures/traces.ts';

/** Every D1 table that holds an agent's rows: the store's own list, which deleting an agent walks. */
export { AGENT_TABLES };

/** A BLOB (a tool's vector) as hex: one string compares faster than a list of bytes. */
function hex(buffer: ArrayBuffer): string {
  let out = '';
  for (const b of new Uint8Array(buffer)) out += (b < 16 ? '0' : '') + b.toString(16);
  return out;
}

/**
 * Every row of the agent in every table (BLOBs as hex; the log's tables as its Durable Object holds
 * them), plus its Durable Object counts.
 */
export async function agentState(agent: string): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  for (const table of AGENT_TABLES) {
    const db = (LOG_TABLES as readonly string[]).includes(table) ? logDb(agent) : env.DB;
    const { results } = await db
      .prepare(`SELECT * FROM ${table} WHERE agent = ?1 ORDER BY rowid`)
      .bind(agent)
      .all<Record<string, unknown>>();
    state[table] = results.map((r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof ArrayBuffer ? hex(v) : v])),
    );
  }
  state.offers = await env.AGENTS.get(env.AGENTS.idFromName(agent)).offers();
  return state;
}

/** Row counts per table, for messages that say which table moved. */
export async function rowCounts(agent: string): Promise<Record<string, number>> {
  const state = await agentState(agent);
  return Object.fromEntries(AGENT_TABLES.map((t) => [t, (state[t] as unknown[]).length]));
}

export interface Answer {
  status: number;
  text: string;
  body: any;
  headers: Headers;
}

/** One request through `app.fetch` with the given env; waits for its `waitUntil` work. */
export async function send(
  e: typeof env,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? ADMIN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://whetstone.test${path}`, { method, headers, body }), e, ctx);
  // Decoded from bytes: workerd warns when .text() reads a type it does not count as text (NDJSON).
  const text = new TextDecoder().decode(await res.arrayBuffer());
  await waitOnExecutionContext(ctx);
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, text, body: parsed, headers: res.headers };
}

/** A proposed revision adding one usage note to `tool` (what a review would store). */
export function noteRevision(tool: string, note = 'Pass order_id with its ORD- prefix.'): NewRevision {
  return newRevision(tool, { created_at: new Date().toISOString(), notes_added: [note] });
}

export async function insertRevision(agent: string, rev: NewRevision): Promise<string> {
  await createD1Revisions(env.DB).insertRevisions(agent, [rev], null);
  return rev.revision_id;
}

export interface Seeded {
  agent: string;
  marker: string;
  turnId: string;
  keys: {
    agent: { key: string; key_id: string };
    operator: { key: string; key_id: string };
    approver: { key: string; key_id: string };
    read_only: { key: string; key_id: string };
    revoked: { key: string; key_id: string };
  };
}

/**
 * An agent whose tools, requests, conversation ids, call errors, argument values, unregistered
 * names, trace tool definitions, revisions and settings all carry `marker`, with a key of each role
 * (agent, operator, approver, read-only) and a revoked operator key.
 */
export async function seedAgent(prefix: string): Promise<Seeded> {
  const agent = agentId(prefix);
  const marker = `zq${prefix}${Math.random().toString(36).slice(2, 10)}`;
  const order = tool('lookup_order', `Look up an order by id. ${marker}`, { order_id: { type: 'string' } });
  expect(
    (
      await api('PUT', `/v1/agents/${agent}/tools`, {
        body: { tools: [order, tool('refund_order', 'Refund an order.')] },
      })
    ).status,
  ).toBe(200);
  const routed = await api('POST', `/v1/agents/${agent}/route`, {
    body: { request: `where is my order ${marker}?`, conversation_id: `conv-${marker}` },
  });
  const turnId: string = routed.body.turn_id;
  await storedTurn(agent, turnId, '1 AS ok');
  const calls = [
    {
      id: 'c1',
      tool: 'lookup_order',
      arguments: { order_id: `x-${marker}` },
      success: false,
      error: `order_id needs the ORD- prefix ${marker}`,
      request: `where is my order ${marker}?`,
      turn_id: turnId,
    },
    {
      id: 'c2',
      tool: 'lookup_order',
      arguments: { order_id: 'ORD-1' },
      success: true,
      request: `order ${marker} status`,
    },
    { id: 'c3', tool: `ghost_${marker}`, arguments: { note: marker }, success: false, error: marker },
  ];
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
  const trace = {
    messages: oneCallTrace(
      `ship order ${marker}`,
      't1',
      'traced_tool',
      JSON.stringify({ v: marker }),
      JSON.stringify({ error: `refused ${marker}` }),
    ),
    tools: [{ name: 'traced_tool', description: `Traced ${marker}`, parameters: { type: 'object', properties: {} } }],
  };
  expect((await api('POST', `/v1/agents/${agent}/traces`, { body: trace })).status).toBe(200);
  expect(
    (
      await api('POST', `/v1/agents/${agent}/outcomes`, {
        body: { turn_id: turnId, ok: false, served_by: 'refund_order' },
      })
    ).status,
  ).toBe(204);
  await insertRevision(agent, noteRevision('lookup_order', `Pass order_id with its ORD- prefix (${marker}).`));
  const key = async (role: string) => (await api('POST', `/v1/agents/${agent}/keys`, { body: { role } })).body;
  const keys = {
    agent: await key('agent'),
    operator: await key('operator'),
    approver: await key('approver'),
    read_only: await key('read_only'),
    revoked: await key('operator'),
  };
  expect((await api('DELETE', `/v1/agents/${agent}/keys/${keys.revoked.key_id}`)).status).toBe(204);
  return { agent, marker, turnId, keys };
}
