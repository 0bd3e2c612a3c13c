/**
 * An agent's upstream MCP servers (docs/api.md "Upstreams", docs/integrations.md "Whetstone as an
 * MCP gateway"): put, read, remove, sync. Header values are write-only: stored sealed, answered by
 * name only, never logged.
 */
import { z } from '@hono/zod-openapi';
import { ApiError, notFound } from '../errors.ts';
import { Upstream, UpstreamList } from '../schemas.ts';
import { putUpstream, releaseTool, syncUpstream, upstreamView } from '../services/upstream-sync.ts';
import { AgentParams, actorOf, createApi, nowIso, type AppContext, agentRow, agentRoute } from './common.ts';

export const upstreamsApi = createApi();

/** An upstream's name: what prefixes its tools when their names collide, so a tool-name word. */
const UpstreamName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, 'upstream names are 1-32 characters of A-Z a-z 0-9 _ -')
  .openapi({ param: { name: 'name', in: 'path' } });
const UpstreamParams = AgentParams.extend({ name: UpstreamName });

/** An HTTP header name (RFC 9110 token) and a value without line breaks. */
const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/, 'a header name is an HTTP token');
const HeaderValue = z
  .string()
  .max(4096)
  .regex(/^[^\r\n\0]*$/, 'a header value has no line breaks');
/** Headers the transport sets itself: an upstream's settings may not override them. */
const RESERVED = new Set([
  'content-type',
  'accept',
  'content-length',
  'host',
  'mcp-session-id',
  'mcp-protocol-version',
]);

export const UpstreamPut = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL of a Streamable HTTP MCP server' }).max(2048),
    headers: z
      .record(HeaderName, HeaderValue)
      .refine((h) => Object.keys(h).length <= 20, 'at most 20 headers')
      .refine(
        (h) => Object.keys(h).every((k) => !RESERVED.has(k.toLowerCase())),
        `these headers are the transport's own: ${[...RESERVED].join(', ')}`,
      )
      .optional()
      .openapi({
        description:
          'sent with every request to the upstream (an Authorization header, say); values are stored sealed and never answered. Omitted: the stored headers are kept',
      }),
    timeout_ms: z.number().int().min(100).max(60_000).default(10_000).openapi({
      description: 'how long one request to the upstream may take (a forwarded call is never retried)',
    }),
  })
  .strict()
  .openapi('UpstreamPut');

const Finding = z.looseObject({ severity: z.string(), check: z.string(), field: z.string(), why: z.string() });
const SyncReport = z
  .object({
    status: z.enum(['ok', 'failing']),
    error: z.string().nullable(),
    listed: z.number().int(),
    registered: z.array(z.string()),
    unavailable: z.array(z.string()),
    quarantined: z.array(z.object({ name: z.string(), findings: z.array(Finding) })),
    skipped: z.array(z.object({ name: z.string(), reason: z.string() })),
  })
  .openapi('UpstreamSync');

async function answer(c: AppContext, agent: string, name: string) {
  const svc = c.get('svc');
  const u = await svc.upstreams.get(agent, name);
  if (!u) throw notFound(`upstream ${name}`);
  const [tools, held] = await Promise.all([svc.upstreams.tools(agent), svc.upstreams.quarantine(agent, name)]);
  return upstreamView(
    u,
    tools.filter((t) => t.upstream === name),
    held,
  );
}

agentRoute(upstreamsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/upstreams',
  need: 'read',
  summary: "The agent's upstream MCP servers, with their status and tools",
  answer: UpstreamList,
  answered: 'upstreams by name',
  handler: async (c, { agent }) => {
    const svc = c.get('svc');
    await agentRow(c, agent);
    const [ups, tools, held] = await Promise.all([
      svc.upstreams.list(agent),
      svc.upstreams.tools(agent),
      svc.upstreams.quarantine(agent),
    ]);
    return c.json(
      {
        upstreams: ups.map((u) =>
          upstreamView(
            u,
            tools.filter((t) => t.upstream === u.name),
            held,
          ),
        ),
      },
      200,
    );
  },
});

agentRoute(upstreamsApi, {
  method: 'put',
  path: '/v1/agents/{agent}/upstreams/{name}',
  need: 'operator',
  summary: 'Add or replace an upstream MCP server (Streamable HTTP); POST …/sync reads its tools',
  params: UpstreamParams,
  body: UpstreamPut,
  answer: Upstream,
  answered: 'the upstream as stored (header names only)',
  errors: [400, 401, 403, 404, 500],
  handler: async (c, { agent, name, body }) => {
    await putUpstream(c.get('svc'), agent, name, body, nowIso());
    return c.json(await answer(c, agent, name), 200);
  },
});

agentRoute(upstreamsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/upstreams/{name}',
  need: 'read',
  summary: 'One upstream with its status and tools (header names only)',
  params: UpstreamParams,
  answer: Upstream,
  answered: 'the upstream',
  handler: async (c, { agent, name }) => {
    return c.json(await answer(c, agent, name), 200);
  },
});

agentRoute(upstreamsApi, {
  method: 'delete',
  path: '/v1/agents/{agent}/upstreams/{name}',
  need: 'operator',
  summary: 'Remove an upstream; its tools stay registered but unavailable (not routed, not forwarded)',
  params: UpstreamParams,
  answer: null,
  answered: 'removed',
  handler: async (c, { agent, name }) => {
    if (!(await c.get('svc').upstreams.delete(agent, name))) throw notFound(`upstream ${name}`);
    return c.body(null, 204);
  },
});

agentRoute(upstreamsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/upstreams/{name}/sync',
  need: 'operator',
  summary: "Read the upstream's tools now and register them as the agent's tools",
  params: UpstreamParams,
  answer: SyncReport,
  answered: 'what the sync did; a failing upstream answers status failing with the error',
  handler: async (c, { agent, name }) => {
    return c.json(await syncUpstream(c.get('svc'), agent, name, nowIso()), 200);
  },
});

const ReleaseParams = UpstreamParams.extend({
  tool: z
    .string()
    .min(1)
    .max(512)
    .openapi({ param: { name: 'tool', in: 'path' }, description: 'the name the upstream lists (URL-encoded)' }),
});
const ReleaseBody = z
  .object({ released_by: z.string().min(1).max(200).openapi({ description: 'who released it (a person)' }) })
  .strict()
  .openapi('UpstreamToolRelease');

agentRoute(upstreamsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/upstreams/{name}/tools/{tool}/release',
  need: 'decide',
  summary:
    'Release a quarantined upstream tool: it is served at once, for this definition only (a changed one is checked again); 409 when it is not quarantined',
  params: ReleaseParams,
  body: ReleaseBody,
  answer: z
    .object({
      released: z.string().openapi({ description: 'the name the upstream lists' }),
      tool: z.string(),
      served: z.boolean().openapi({ description: 'false when the name cannot be a tool name (still not served)' }),
      skipped: z.string().nullable(),
      upstream: Upstream,
    })
    .openapi('UpstreamToolReleased'),
  answered: 'the tool released, and its upstream as it is now',
  errors: [400, 401, 403, 404, 409],
  handler: async (c, { agent, name, tool, body }) => {
    const outcome = await releaseTool(
      c.get('svc'),
      agent,
      name,
      tool,
      { released_by: body.released_by, actor: actorOf(c) },
      nowIso(),
    );
    if (!outcome.ok) {
      if (outcome.reason === 'unknown') throw notFound(`quarantined tool ${tool} of upstream ${name}`);
      throw new ApiError('conflict', `tool ${tool} of upstream ${name} is not quarantined`);
    }
    return c.json(
      {
        released: tool,
        tool: outcome.tool,
        served: outcome.served,
        skipped: outcome.skipped,
        upstream: await answer(c, agent, name),
      },
      200,
    );
  },
});
