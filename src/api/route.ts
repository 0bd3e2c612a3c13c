/** `POST …/route` (docs/api.md) and `POST …/calls` (the call log). */

import { inFormat, type ToolFormat } from '../core/render.ts';
import { PostCallsAnswer, PostCallsBody, RouteBody, RouteResult } from '../schemas.ts';
import { recordCalls } from '../services/calls.ts';
import { route } from '../services/route-serving.ts';
import { AgentParams, createApi, nowIso, apiRoute, authorized } from './common.ts';

export const routeApi = createApi();

routeApi.openapi(
  apiRoute({
    method: 'post',
    path: '/v1/agents/{agent}/route',
    summary: 'Choose the tools to offer the model for one request',
    params: AgentParams,
    body: RouteBody,
    answer: RouteResult,
    answered: 'ranked tools and their model views',
    errors: [400, 401, 403, 404, 429, 502],
  }),
  async (c) => {
    const { agent } = authorized(c, 'agent');
    const { format = 'openai', ...body } = c.req.valid('json');
    const result = await route(c.get('svc'), agent, body, nowIso(), (p) => c.executionCtx.waitUntil(p));
    return c.json(withFormat(result, format), 200);
  },
);

routeApi.openapi(
  apiRoute({
    method: 'post',
    path: '/v1/agents/{agent}/calls',
    summary: 'Report tool calls (idempotent by id)',
    params: AgentParams,
    body: PostCallsBody,
    answer: PostCallsAnswer,
    answered: 'how many calls were new and how many repeated an id',
    errors: [400, 401, 403, 404, 429],
  }),
  async (c) => {
    const { agent } = authorized(c, 'agent');
    return c.json(await recordCalls(c.get('svc'), agent, c.req.valid('json').calls, nowIso()), 200);
  },
);

/** The routed model views in the asked format (the OpenAI Chat shape unless told). */
function withFormat(result: RouteResult, format: ToolFormat): RouteResult {
  if (format === 'openai') return result;
  return { ...result, model_tools: result.model_tools.map((v) => ('function' in v ? inFormat(v, format) : v)) };
}
