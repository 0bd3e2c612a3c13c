/**
 * Keys (docs/api.md): stored as salted SHA-256 only, revocable at once, never logged — not on
 * creation, not on any authentication failure, not when a request with a key fails inside.
 */
import type { AgentObject } from '../../src/agent-object.ts';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { interceptLog } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';
import { send } from './fixtures.ts';

const CONSOLE = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
let logged: string[] = [];

beforeEach(() => {
  logged = [];
  for (const level of CONSOLE) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(
        args
          .map((a) =>
            a instanceof Error ? `${a.message}\n${a.stack ?? ''}` : typeof a === 'string' ? a : JSON.stringify(a),
          )
          .join(' '),
      );
    });
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A D1 double whose batches fail as a real D1 error would: with a message, after nothing was written. */
/** The agent namespace whose objects fail every log batch (the call log's writes). */
const failingLogBatches = (ns: DurableObjectNamespace<AgentObject>) =>
  interceptLog(ns, { batch: async () => Promise.reject(new Error('simulated storage failure')) });

describe('agent keys', () => {
  it('are shown once with no-store, stored only as a salted hash, and never logged on creation, failures or internal errors', async () => {
    const agent = agentId('keys');
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('lookup', 'Look up a record.')] } });
    const created = await send(env, 'POST', `/v1/agents/${agent}/keys`, { body: { role: 'operator' } });
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { key, key_id } = created.body as { key: string; key_id: string };
    expect(key).toMatch(new RegExp(`^wsk_${key_id}_[A-Za-z0-9_-]{43}$`));
    const secret = key.slice(`wsk_${key_id}_`.length);
    const other = (await send(env, 'POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } })).body as {
      key: string;
      key_id: string;
    };

    const rows = await env.DB.prepare('SELECT key_id, salt, hash FROM keys WHERE agent = ?1 ORDER BY created_at')
      .bind(agent)
      .all<{ key_id: string; salt: string; hash: string }>();
    const row = rows.results.find((r) => r.key_id === key_id);
    expect(row?.salt).toMatch(/^[0-9a-f]{32}$/);
    expect(row?.hash).toBe(await hex(`${row?.salt}:${secret}`));
    expect(row?.hash).not.toBe(await hex(secret));
    expect(new Set(rows.results.map((r) => r.salt)).size).toBe(2);
    expect(JSON.stringify(rows.results)).not.toContain(secret);

    const failures: [string, string][] = [
      [`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, 'the token is not valid'],
      [`${key}x`, 'the token is not valid'],
      [`wsk_${'0'.repeat(16)}_${secret}`, 'the token is not valid'],
      [secret, 'the token is not valid'],
    ];
    for (const [token, message] of failures) {
      const res = await send(env, 'GET', `/v1/agents/${agent}/tools`, { token });
      expect(res.body).toEqual({ error: { code: 'unauthorized', message, details: [] } });
    }
    for (const header of [`Basic ${key}`, `Bearer  ${key}`, `bearer ${key}`, `Bearer ${key} extra`]) {
      const res = await send(env, 'GET', `/v1/agents/${agent}/tools`, {
        token: null,
        headers: { authorization: header },
      });
      expect(res.status).toBe(401);
    }
    expect((await send(env, 'GET', `/v1/agents/${agentId()}/tools`, { token: key })).status).toBe(404);

    // A request with a valid key that fails inside: the error is logged (a 500), the key is not.
    const broken = { ...env, AGENTS: failingLogBatches(env.AGENTS) };
    const failed = await send(broken, 'POST', `/v1/agents/${agent}/calls`, {
      token: key,
      body: { calls: [{ tool: 'lookup', arguments: {}, success: true }] },
    });
    expect(failed.body).toEqual({ error: { code: 'internal', message: 'internal error', details: [] } });
    expect(logged.some((l) => l.includes('simulated storage failure'))).toBe(true);

    expect((await send(env, 'DELETE', `/v1/agents/${agent}/keys/${key_id}`)).status).toBe(204);
    expect((await send(env, 'GET', `/v1/agents/${agent}/tools`, { token: key })).body).toEqual({
      error: { code: 'unauthorized', message: 'the token is not valid', details: [] },
    });
    expect((await send(env, 'GET', `/v1/agents/${agent}/tools`, { token: other.key })).status).toBe(200);

    const all = logged.join('\n');
    for (const s of [key, secret, other.key, other.key.slice(-43), String(env.ADMIN_TOKEN)])
      expect(all).not.toContain(s);
  });
});
