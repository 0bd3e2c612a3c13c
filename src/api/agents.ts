/** Agents, keys and settings (docs/api.md). Keys and the agent list are the admin's. */
import { z } from '@hono/zod-openapi';
import { authorize, mintKey, rightsOf } from '../auth.ts';
import { notFound } from '../errors.ts';
import { AgentList, CreateKeyBody, CreatedKey, Settings, SettingsPatch, WhoAmI } from '../schemas.ts';
import { deleteAgent } from '../services/agent-delete.ts';
import { settingsOf } from '../services/route-serving.ts';
import {
  AgentParams,
  PageQuery,
  createApi,
  offsetPage,
  nowIso,
  apiRoute,
  agentRoute,
  agentSettings,
} from './common.ts';

export const agentsApi = createApi();

agentsApi.openapi(
  apiRoute({
    method: 'get',
    path: '/v1/agents',
    summary: 'Every agent with its tool and call counts (admin)',
    query: PageQuery,
    answer: AgentList,
    answered: 'agents',
    errors: [401, 403],
  }),
  async (c) => {
    authorize(c.get('principal'), null, 'admin');
    const page = offsetPage(await c.get('svc').store.listAgents(), c.req.valid('query'));
    return c.json(
      {
        agents: page.items.map((a) => ({
          agent: a.agent,
          tools: a.tools,
          calls: a.calls,
          last_review_at: a.last_review_at,
        })),
        next_cursor: page.next_cursor,
      },
      200,
    );
  },
);

agentRoute(agentsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/keys',
  need: 'admin',
  summary: 'Create an agent key (admin); the key is shown once',
  body: CreateKeyBody,
  answer: CreatedKey,
  answered: 'the new key, shown once',
  errors: [400, 401, 403],
  handler: async (c, { agent, body: { role, tool_access } }) => {
    const store = c.get('svc').store;
    const now = nowIso();
    await store.ensureAgent(agent, now);
    const minted = await mintKey();
    await store.insertKey(
      {
        key_id: minted.key_id,
        agent,
        role,
        salt: minted.salt,
        hash: minted.hash,
        revoked_at: null,
        tool_access: tool_access ? JSON.stringify(tool_access) : null,
      },
      now,
    );
    // The only answer that carries a secret: no cache (browser, proxy) may keep it.
    c.header('cache-control', 'no-store');
    return c.json({ key_id: minted.key_id, key: minted.key, role, ...(tool_access ? { tool_access } : {}) }, 200);
  },
});

agentRoute(agentsApi, {
  method: 'delete',
  path: '/v1/agents/{agent}/keys/{key_id}',
  need: 'admin',
  summary: 'Revoke an agent key (admin)',
  params: AgentParams.extend({
    key_id: z
      .string()
      .min(1)
      .max(64)
      .openapi({ param: { name: 'key_id', in: 'path' } }),
  }),
  answer: null,
  answered: 'revoked',
  errors: [400, 401, 403, 404],
  handler: async (c, { agent, key_id }) => {
    if (!(await c.get('svc').store.revokeKey(agent, key_id, nowIso()))) throw notFound(`key ${key_id}`);
    return c.body(null, 204);
  },
});

agentRoute(agentsApi, {
  method: 'delete',
  path: '/v1/agents/{agent}',
  need: 'admin',
  summary: 'Delete an agent and everything it left: rows, Durable Object storage, vectors (admin)',
  answer: null,
  answered: 'deleted',
  errors: [400, 401, 403, 404],
  handler: async (c, { agent }) => {
    await deleteAgent(c.get('svc'), agent);
    return c.body(null, 204);
  },
});

agentRoute(agentsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/whoami',
  need: 'read',
  summary: "The token's role on the agent, its key id and its rights (what the dashboard shows buttons for)",
  answer: WhoAmI,
  answered: 'who the token is on this agent',
  handler: async (c) => {
    const p = c.get('principal');
    return c.json(
      p.kind === 'admin'
        ? { role: 'admin' as const, key_id: null, rights: rightsOf(p) }
        : { role: p.role, key_id: p.id, rights: rightsOf(p) },
      200,
    );
  },
});

agentRoute(agentsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/config',
  need: 'read',
  summary: 'The tool-learning settings (docs/configuration.md)',
  answer: Settings,
  answered: 'settings with defaults filled in',
  handler: async (c, { agent }) => c.json(await agentSettings(c, agent), 200),
});

agentRoute(agentsApi, {
  method: 'put',
  path: '/v1/agents/{agent}/config',
  need: 'operator',
  summary: 'Change some settings; the rest keep their values',
  body: SettingsPatch,
  answer: Settings,
  answered: 'the settings now in force',
  handler: async (c, { agent, body }) => {
    const store = c.get('svc').store;
    const row = await store.getAgent(agent);
    if (!row) throw notFound(`agent ${agent}`);
    const merged = { ...row.settings, ...body };
    await store.putSettings(agent, merged);
    return c.json(settingsOf(merged), 200);
  },
});
