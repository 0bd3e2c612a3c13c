import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

async function agentWithKeys() {
  const agent = agentId();
  await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('lookup', 'Look up a record.')] } });
  const agentKey = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } })).body;
  const operatorKey = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'operator' } })).body;
  return { agent, agentKey, operatorKey };
}

describe('auth', () => {
  it('asks for a token (401) and refuses a malformed one', async () => {
    const agent = agentId();
    expect(await api('GET', `/v1/agents/${agent}/tools`, { token: null })).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized', message: 'send Authorization: Bearer <token>', details: [] } },
    });
    expect((await api('GET', `/v1/agents/${agent}/tools`, { token: 'wsk_nothex_x' })).status).toBe(401);
    expect(
      (await api('GET', `/v1/agents/${agent}/tools`, { token: 'wsk_0123456789abcdef_' + 'a'.repeat(43) })).status,
    ).toBe(401);
  });

  it('stores keys hashed and shows the key once', async () => {
    const { agent, agentKey } = await agentWithKeys();
    expect(agentKey).toMatchObject({ role: 'agent', key_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const row = await env.DB.prepare('SELECT * FROM keys WHERE key_id = ?1')
      .bind(agentKey.key_id)
      .first<Record<string, string>>();
    expect(row?.agent).toBe(agent);
    // The secret is everything after `wsk_<key_id>_`: it may itself contain `_` (base64url).
    const secret = agentKey.key.slice(`wsk_${agentKey.key_id}_`.length);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('gives an agent key the agent routes and reads, and 403 on operator routes', async () => {
    const { agent, agentKey } = await agentWithKeys();
    const token = agentKey.key;
    expect(
      (await api('POST', `/v1/agents/${agent}/route`, { token, body: { request: 'look up a record' } })).status,
    ).toBe(200);
    expect(
      (
        await api('POST', `/v1/agents/${agent}/calls`, {
          token,
          body: { calls: [{ tool: 'lookup', arguments: {}, success: true }] },
        })
      ).status,
    ).toBe(200);
    expect((await api('GET', `/v1/agents/${agent}/tools`, { token })).status).toBe(200);
    expect(await api('PUT', `/v1/agents/${agent}/tools`, { token, body: { tools: [] } })).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden' } },
    });
    expect((await api('PUT', `/v1/agents/${agent}/config`, { token, body: { top_k: 3 } })).status).toBe(403);
    expect((await api('GET', `/v1/agents`, { token })).status).toBe(403);
  });

  it('lets an operator key change its agent, never another agent (404, not 403)', async () => {
    const a = await agentWithKeys();
    const b = await agentWithKeys();
    const token = a.operatorKey.key;
    expect((await api('PUT', `/v1/agents/${a.agent}/config`, { token, body: { top_k: 3 } })).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', `/v1/agents/${b.agent}/tools`, undefined],
      ['GET', `/v1/agents/${b.agent}/tools/lookup`, undefined],
      ['PUT', `/v1/agents/${b.agent}/tools`, { tools: [] }],
      ['POST', `/v1/agents/${b.agent}/route`, { request: 'x' }],
      ['GET', `/v1/agents/${b.agent}/config`, undefined],
    ] as const) {
      const res = await api(method, path, { token, body });
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain('Look up a record');
    }
  });

  it('revokes a key at once', async () => {
    const { agent, agentKey } = await agentWithKeys();
    expect((await api('DELETE', `/v1/agents/${agent}/keys/${agentKey.key_id}`)).status).toBe(204);
    expect((await api('GET', `/v1/agents/${agent}/tools`, { token: agentKey.key })).status).toBe(401);
    expect((await api('DELETE', `/v1/agents/${agent}/keys/${agentKey.key_id}`)).status).toBe(404);
  });

  it('lists agents for the admin', async () => {
    const { agent } = await agentWithKeys();
    const res = await api('GET', '/v1/agents');
    expect(res.status).toBe(200);
    expect(res.body.agents).toContainEqual({ agent, tools: 1, calls: 0, last_review_at: null });
  });
});
