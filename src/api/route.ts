/** `POST …/route` (docs/api.md) and `POST …/calls` (the call log). */

import { inFormat, type ToolFormat } from '../core/render.ts';
import { PostCallsAnswer, PostCallsBody, RouteBody, RouteResult } from '../schemas.ts';
import { recordCalls } from '../services/calls.ts';
import { route } from '../services/route-serving.ts';
import { agentRoute, createApi, nowIso } from './common.ts';

export const routeApi = createApi();

agentRoute(routeApi, {
  method: 'post',
  path: '/v1/agents/{agent}/route',
  need: 'agent',
  summary: 'Choose the tools to offer the model for one request',
  body: RouteBody,
  answer: RouteResult,
  answered: 'ranked tools and their model views',
  errors: [400, 401, 403, 404, 429, 502],
  handler: async (c, { agent, body }) => {
    const { format = 'openai', ...request } = body;
    const result = await route(c.get('svc'), agent, request, nowIso(), (p) => c.executionCtx.waitUntil(p));
    return c.json(withFormat(result, format), 200);
  },
});

agentRoute(routeApi, {
  method: 'post',
  path: '/v1/agents/{agent}/calls',
  need: 'agent',
  summary: 'Report tool calls (idempotent by id)',
  body: PostCallsBody,
  answer: PostCallsAnswer,
  answered: 'how many calls were new and how many repeated an id',
  errors: [400, 401, 403, 404, 429],
  handler: async (c, { agent, body }) => c.json(await recordCalls(c.get('svc'), agent, body.calls, nowIso()), 200),
});

/** The routed model views in the asked format (the OpenAI Chat shape unless told). */
function withFormat(result: RouteResult, format: ToolFormat): RouteResult {
  if (format === 'openai') return result;
  return { ...result, model_tools: result.model_tools.map((v) => ('function' in v ? inFormat(v, format) : v)) };
}
