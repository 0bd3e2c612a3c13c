/** The tool registry routes (docs/api.md): PUT/GET/DELETE tools, versions, examples. */
import { z } from '@hono/zod-openapi';
import type { StoredTool } from '../core/records.ts';
import { routedWordings } from '../core/routing-memory.ts';
import { TOOL_FORMATS, modelView, stableList } from '../core/render.ts';
import { notFound } from '../errors.ts';
import { Example, FormattedTool, PutToolsAnswer, PutToolsBody, ToolRow, ToolVersion } from '../schemas.ts';
import { registerTools } from '../services/registry.ts';
import { ToolParams, type AppContext, agentRoute, agentSettings, createApi, nowIso } from './common.ts';

export const toolsApi = createApi();

const ListToolsQuery = z
  .object({ format: z.enum(TOOL_FORMATS).optional(), defer: z.enum(['true', 'false']).optional() })
  .strict();

/** The API shape of a stored row: the stored fields plus the model view (docs/api.md ToolRow). */
export function toToolRow(t: StoredTool, showLearnedExamples: boolean): ToolRow {
  return {
    name: t.name,
    docstring: t.docstring,
    description: t.description,
    parameters: t.parameters,
    examples: t.examples,
    notes: t.notes,
    avoid: t.avoid,
    call_example: t.call_example,
    queries_source: t.queries_source,
    version: t.version,
    updated_at: t.updated_at,
    model_view: modelView(t, showLearnedExamples),
    ...memoryOf(t),
  };
}

/** A row's routing memory as the API lists it: the wordings routing reads, and how many wait. */
function memoryOf(t: StoredTool): { memory?: string[]; memory_pending?: number } {
  const routed = routedWordings(t.memory);
  const pending = t.memory.length - routed.length;
  return {
    ...(routed.length > 0 ? { memory: routed.map((w) => w.text) } : {}),
    ...(pending > 0 ? { memory_pending: pending } : {}),
  };
}

async function showLearned(c: AppContext, agent: string): Promise<boolean> {
  return (await agentSettings(c, agent)).show_learned_examples;
}

agentRoute(toolsApi, {
  method: 'put',
  path: '/v1/agents/{agent}/tools',
  need: 'operator',
  summary: 'Register tools (identical definitions are no-ops; changed ones get a new version)',
  body: PutToolsBody,
  answer: PutToolsAnswer,
  answered: 'the rows as stored',
  errors: [400, 401, 403, 404, 502],
  handler: async (c, { agent, body }) => {
    const result = await registerTools(c.get('svc'), agent, body.tools, body.augment, nowIso());
    const show = await showLearned(c, agent);
    const answer: z.infer<typeof PutToolsAnswer> = { tools: result.tools.map((t) => toToolRow(t, show)) };
    if (result.augmentation) answer.augmentation = result.augmentation;
    return c.json(answer, 200);
  },
});

agentRoute(toolsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/tools',
  need: 'read',
  summary: 'List tool rows; with `format` (or `defer`), the whole list as the model sees it, sorted by name',
  query: ListToolsQuery,
  answer: z.object({ tools: z.union([z.array(ToolRow), z.array(FormattedTool)]) }),
  answered: 'every tool row of the agent; with `format`, every model view, byte-stable while no tool changes',
  handler: async (c, { agent, query }) => {
    const show = await showLearned(c, agent);
    const tools = await c.get('svc').store.listTools(agent);
    if (query.format === undefined && query.defer === undefined)
      return c.json({ tools: tools.map((t) => toToolRow(t, show)) }, 200);
    const pinned = query.defer === 'true' ? await c.get('svc').pins.pinned(agent) : new Set<string>();
    const views = tools.map((t) => modelView(t, show));
    return c.json({ tools: stableList(views, query.format ?? 'openai', query.defer === 'true', pinned) }, 200);
  },
});

async function getRow(c: AppContext, agent: string, name: string): Promise<StoredTool> {
  const tool = await c.get('svc').store.getTool(agent, name);
  if (!tool) throw notFound(`tool ${name}`);
  return tool;
}

agentRoute(toolsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/tools/{tool}',
  need: 'read',
  summary: 'One tool row',
  params: ToolParams,
  answer: ToolRow,
  answered: 'the tool row',
  handler: async (c, { agent, tool }) => {
    const show = await showLearned(c, agent);
    return c.json(toToolRow(await getRow(c, agent, tool), show), 200);
  },
});

agentRoute(toolsApi, {
  method: 'delete',
  path: '/v1/agents/{agent}/tools/{tool}',
  need: 'operator',
  summary: 'Delete a tool row (its version history is kept)',
  params: ToolParams,
  answer: null,
  answered: 'deleted',
  handler: async (c, { agent, tool }) => {
    const svc = c.get('svc');
    if (!(await svc.store.deleteTool(agent, tool))) throw notFound(`tool ${tool}`);
    if (svc.vectorIndex) await svc.vectorIndex.remove(agent, [tool]);
    return c.body(null, 204);
  },
});

agentRoute(toolsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/tools/{tool}/versions',
  need: 'read',
  summary: 'Every version of a tool row, newest first (the registry audit log)',
  params: ToolParams,
  answer: z.object({ versions: z.array(ToolVersion) }),
  answered: 'versions newest first',
  handler: async (c, { agent, tool }) => {
    const versions = await c.get('svc').store.listVersions(agent, tool);
    if (versions.length === 0) throw notFound(`tool ${tool}`);
    return c.json({ versions }, 200);
  },
});

agentRoute(toolsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/tools/{tool}/examples',
  need: 'read',
  summary: 'Example requests of a tool with their sources',
  params: ToolParams,
  answer: z.object({ examples: z.array(Example) }),
  answered: 'examples with sources',
  handler: async (c, { agent, tool }) => c.json({ examples: (await getRow(c, agent, tool)).examples }, 200),
});
