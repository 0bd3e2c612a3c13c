/** Usage flags, traces and unregistered tools (docs/api.md). All three need an `agent` key. */
import { FlagsAnswer, TraceAnswer, TraceBody, UnregisteredAnswer } from '../schemas.ts';
import { usageFlags } from '../services/flags-report.ts';
import { settingsOf } from '../services/route-serving.ts';
import { ingestTrace, unregisteredTools } from '../services/trace-intake.ts';
import { AgentParams, PageQuery, createApi, offsetPage, nowIso, agentRow, apiRoute, authorized } from './common.ts';

export const usageApi = createApi();

usageApi.openapi(
  apiRoute({
    method: 'get',
    path: '/v1/agents/{agent}/flags',
    summary: 'Tools routing offers that are never called, and tools it never offers',
    params: AgentParams,
    answer: FlagsAnswer,
    answered: 'the usage flags, by tool name',
  }),
  async (c) => {
    const { agent } = authorized(c, 'read');
    const svc = c.get('svc');
    const row = await agentRow(c, agent);
    return c.json({ flags: await usageFlags(svc, agent, settingsOf(row.settings)) }, 200);
  },
);

usageApi.openapi(
  apiRoute({
    method: 'post',
    path: '/v1/agents/{agent}/traces',
    summary: 'Ingest one agent run (OpenAI or Anthropic messages) with the tools it passed',
    params: AgentParams,
    body: TraceBody,
    answer: TraceAnswer,
    answered: 'the turn the trace was recorded under and its number of calls',
    errors: [400, 401, 403, 404, 429],
  }),
  async (c) => {
    const { agent } = authorized(c, 'agent');
    return c.json(await ingestTrace(c.get('svc'), agent, c.req.valid('json'), nowIso()), 200);
  },
);

usageApi.openapi(
  apiRoute({
    method: 'get',
    path: '/v1/agents/{agent}/unregistered',
    summary: 'Tool names seen in calls or traces that are not registered, with a draft definition',
    params: AgentParams,
    query: PageQuery,
    answer: UnregisteredAnswer,
    answered: 'unregistered tools, most failures first; next_cursor null on the last page',
  }),
  async (c) => {
    const { agent } = authorized(c, 'read');
    const page = offsetPage(await unregisteredTools(c.get('svc'), agent), c.req.valid('query'));
    return c.json({ tools: page.items, next_cursor: page.next_cursor }, 200);
  },
);
