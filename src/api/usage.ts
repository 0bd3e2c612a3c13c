/** Usage flags, traces and unregistered tools (docs/api.md). All three need an `agent` key. */
import { FlagsAnswer, TraceAnswer, TraceBody, UnregisteredAnswer } from '../schemas.ts';
import { usageFlags } from '../services/flags-report.ts';
import { ingestTrace, unregisteredTools } from '../services/trace-intake.ts';
import { PageQuery, agentRoute, agentSettings, createApi, nowIso, offsetPage } from './common.ts';

export const usageApi = createApi();

agentRoute(usageApi, {
  method: 'get',
  path: '/v1/agents/{agent}/flags',
  need: 'read',
  summary: 'Tools routing offers that are never called, and tools it never offers',
  answer: FlagsAnswer,
  answered: 'the usage flags, by tool name',
  handler: async (c, { agent }) => {
    const settings = await agentSettings(c, agent);
    return c.json({ flags: await usageFlags(c.get('svc'), agent, settings) }, 200);
  },
});

agentRoute(usageApi, {
  method: 'post',
  path: '/v1/agents/{agent}/traces',
  need: 'agent',
  summary: 'Ingest one agent run (OpenAI or Anthropic messages) with the tools it passed',
  body: TraceBody,
  answer: TraceAnswer,
  answered: 'the turn the trace was recorded under and its number of calls',
  errors: [400, 401, 403, 404, 429],
  handler: async (c, { agent, body }) => c.json(await ingestTrace(c.get('svc'), agent, body, nowIso()), 200),
});

agentRoute(usageApi, {
  method: 'get',
  path: '/v1/agents/{agent}/unregistered',
  need: 'read',
  summary: 'Tool names seen in calls or traces that are not registered, with a draft definition',
  query: PageQuery,
  answer: UnregisteredAnswer,
  answered: 'unregistered tools, most failures first; next_cursor null on the last page',
  handler: async (c, { agent, query }) => {
    const page = offsetPage(await unregisteredTools(c.get('svc'), agent), query);
    return c.json({ tools: page.items, next_cursor: page.next_cursor }, 200);
  },
});
