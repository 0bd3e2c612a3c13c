/** `POST …/route` (docs/api.md–§4) and `POST …/calls` (the call log). */
import { createRoute } from '@hono/zod-openapi';
import { PostCallsAnswer, PostCallsBody, RouteBody, RouteResult } from '../schemas.ts';
import { recordCalls } from '../services/calls.ts';
import { route } from '../services/routing.ts';
import { AgentParams, agentFor, bearer, createApi, jsonBody, nowIso, responses } from './common.ts';

export const routeApi = createApi();

routeApi.openapi(
  createRoute({
    method: 'post',
    path: '/v1/agents/{agent}/route',
    summary: 'Choose the tools to offer the model for one request',
    security: bearer,
    request: { params: AgentParams, ...jsonBody(RouteBody) },
    responses: responses(RouteResult, 'ranked tools and their model views', [400, 401, 403, 404, 413, 429, 502]),
  }),
  async (c) => {
    const agent = agentFor(c, c.req.valid('param').agent, 'agent');
    const result = await route(c.get('svc'), agent, c.req.valid('json'), nowIso(), (p) => c.executionCtx.waitUntil(p));
    return c.json(result, 200);
  },
);

routeApi.openapi(
  createRoute({
    method: 'post',
    path: '/v1/agents/{agent}/calls',
    summary: 'Report tool calls (idempotent by id)',
    security: bearer,
    request: { params: AgentParams, ...jsonBody(PostCallsBody) },
    responses: responses(PostCallsAnswer, 'how many calls were new and how many repeated an id', [400, 401, 403, 404, 413, 429]),
  }),
  async (c) => {
    const agent = agentFor(c, c.req.valid('param').agent, 'agent');
    return c.json(await recordCalls(c.get('svc'), agent, c.req.valid('json').calls, nowIso()), 200);
  },
);
