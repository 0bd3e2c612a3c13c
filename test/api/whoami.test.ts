/**
 * `GET /v1/agents/:agent/whoami` (docs/api.md "Rights"): the token's role on the agent, its key id
 * and the rights it holds there, read from the same rule the routes are authorized by. The
 * dashboard shows its buttons from this answer. Real D1 through the Worker entry.
 */
import { describe, expect, it } from 'vitest';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

async function agentWithKeys(): Promise<{ agent: string; keys: Record<string, { key: string; key_id: string }> }> {
  const agent = agentId('whoami');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('t', 'A tool.')] } })).status).toBe(200);
  const keys: Record<string, { key: string; key_id: string }> = {};
  for (const role of ['approver', 'read_only', 'operator', 'agent']) {
    keys[role] = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role } })).body;
  }
  return { agent, keys };
}

describe('GET /v1/agents/:agent/whoami', () => {
  it('names the admin token with every right and no key id', async () => {
    const { agent } = await agentWithKeys();
    const res = await api('GET', `/v1/agents/${agent}/whoami`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ role: 'admin', key_id: null, rights: ['read', 'agent', 'decide', 'operator', 'admin'] });
  });

  it('names each key by its id and role, with the rights the routes grant it', async () => {
    const { agent, keys } = await agentWithKeys();
    const who = async (role: string) =>
      (await api('GET', `/v1/agents/${agent}/whoami`, { token: keys[role]?.key })).body;
    expect(await who('approver')).toEqual({
      role: 'approver',
      key_id: keys.approver?.key_id,
      rights: ['read', 'decide'],
    });
    expect(await who('read_only')).toEqual({ role: 'read_only', key_id: keys.read_only?.key_id, rights: ['read'] });
    expect(await who('operator')).toEqual({
      role: 'operator',
      key_id: keys.operator?.key_id,
      rights: ['read', 'agent', 'decide', 'operator'],
    });
    expect(await who('agent')).toEqual({ role: 'agent', key_id: keys.agent?.key_id, rights: ['read', 'agent'] });
  });

  it('agrees with what the routes allow: a read-only key that whoami denies `decide` is refused an apply', async () => {
    const { agent, keys } = await agentWithKeys();
    const { rights } = (await api('GET', `/v1/agents/${agent}/whoami`, { token: keys.read_only?.key })).body;
    expect(rights).not.toContain('decide');
    const apply = await api('POST', `/v1/agents/${agent}/revisions/none/apply`, {
      token: keys.read_only?.key,
      body: { approved_by: 'x' },
    });
    expect(apply.status).toBe(403);
    const settings = await api('PUT', `/v1/agents/${agent}/config`, {
      token: keys.approver?.key,
      body: { min_calls: 4 },
    });
    expect(settings.status).toBe(403);
  });

  it("answers 404 to another agent's key and 401 without a token", async () => {
    const [a, b] = await Promise.all([agentWithKeys(), agentWithKeys()]);
    expect((await api('GET', `/v1/agents/${a.agent}/whoami`, { token: b.keys.approver?.key })).status).toBe(404);
    expect((await api('GET', `/v1/agents/${a.agent}/whoami`, { token: null })).status).toBe(401);
  });
});
