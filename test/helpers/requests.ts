/** Requests through the real Worker entry (`exports.default.fetch`), as an agent or the admin sends them. */
import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';

/** The suite's ADMIN_TOKEN (vitest.config.ts): strong, as src/core/admin-token.ts requires. */
export const ADMIN = 'test-admin-token-Qm7xK2pV9wR4tZ8nB3cL6hJ5';

export interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request to the Worker; JSON bodies are sent and parsed. */
export async function api<T = any>(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? ADMIN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  // A path, or a whole URL where the scheme or host matters (the MCP endpoint's origin rules).
  const url = /^https?:/.test(path) ? path : `http://whetstone.test${path}`;
  const res = await exports.default.fetch(new Request(url, { method, headers, body }));
  // Decoded from bytes: workerd warns when .text() reads a type it does not count as text (NDJSON).
  const text = new TextDecoder().decode(await res.arrayBuffer());
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

let counter = 0;
/** A fresh agent id per test, so tests never see each other's rows or Durable Objects. */
export function agentId(prefix = 'agent'): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A fresh agent (its id from `prefix`) with `tools` registered. */
export async function agentWithTools(tools: unknown[], prefix?: string): Promise<string> {
  const agent = agentId(prefix);
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
  return agent;
}

/** One routed turn in `conversation` served by a successful call of each of `tools` (a request they served together). */
export async function servedTogether(
  agent: string,
  conversation: string,
  request: string,
  tools: readonly string[],
  args: object,
): Promise<void> {
  const routed = await api('POST', `/v1/agents/${agent}/route`, { body: { request, conversation_id: conversation } });
  expect(routed.status).toBe(200);
  const calls = tools.map((tool) => ({
    tool,
    arguments: args,
    success: true,
    turn_id: routed.body.turn_id,
    conversation_id: conversation,
  }));
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
}
