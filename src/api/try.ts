/**
 * Try before apply (docs/api.md "Try before apply"): a dry run of a proposed revision on real
 * requests, and the test endpoints only such a run calls.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { type LineEdit as LineEditSchema, TestEndpoint, TestEndpointBody, TryAnswer, TryBody } from '../schemas.ts';
import { approverEdit } from '../services/edit.ts';
import { deleteTestEndpoint, getTestEndpoint, setTestEndpoint, tryRevision } from '../services/try.ts';
import { IdParams, ToolParams, bearer, createApi, jsonBody, nowIso, responses, authorized } from './common.ts';

export const tryApi = createApi();

type LineEdit = z.infer<typeof LineEditSchema>;

tryApi.openapi(
  createRoute({
    method: 'post',
    path: '/v1/agents/{agent}/revisions/{id}/try',
    summary:
      'Replay the requests a proposed revision rests on and a sample of the tool’s served requests, before and after its lines (or an edit of them): routing ranks, and the model’s pick when the model can call tools. Writes nothing (400 a refused edit; 409 when it is not proposed)',
    security: bearer,
    request: { params: IdParams, ...jsonBody(TryBody) },
    responses: responses(TryAnswer, 'each request before and after', [400, 401, 403, 404, 409, 413, 502]),
  }),
  async (c) => {
    const { agent, id } = authorized(c, 'decide');
    const body = c.req.valid('json');
    const svc = c.get('svc');
    const edit = body.edit ? approverEdit(svc, agent, body.edit as LineEdit) : null;
    return c.json(await tryRevision(svc, agent, id, edit, nowIso()), 200);
  },
);

tryApi.openapi(
  createRoute({
    method: 'put',
    path: '/v1/agents/{agent}/tools/{tool}/test-endpoint',
    summary:
      'Set the address only a try run sends the model’s picks to (`POST {tool, arguments}` → `{result}`); https to a public host unless UPSTREAMS_ALLOW_LOCAL; an optional bearer token is stored sealed',
    security: bearer,
    request: { params: ToolParams, ...jsonBody(TestEndpointBody) },
    responses: responses(TestEndpoint, 'the test endpoint (its token never answered)', [400, 401, 403, 404, 413]),
  }),
  async (c) => {
    const { agent, tool } = authorized(c, 'operator');
    return c.json(await setTestEndpoint(c.get('svc'), agent, tool, c.req.valid('json')), 200);
  },
);

tryApi.openapi(
  createRoute({
    method: 'get',
    path: '/v1/agents/{agent}/tools/{tool}/test-endpoint',
    summary: 'The tool’s test endpoint (404 when it has none)',
    security: bearer,
    request: { params: ToolParams },
    responses: responses(TestEndpoint, 'the test endpoint (its token never answered)'),
  }),
  async (c) => {
    const { agent, tool } = authorized(c, 'read');
    return c.json(await getTestEndpoint(c.get('svc'), agent, tool), 200);
  },
);

tryApi.openapi(
  createRoute({
    method: 'delete',
    path: '/v1/agents/{agent}/tools/{tool}/test-endpoint',
    summary: 'Remove the tool’s test endpoint',
    security: bearer,
    request: { params: ToolParams },
    responses: { 204: { description: 'removed' }, ...responses(z.object({}), 'unused') },
  }),
  async (c) => {
    const { agent, tool } = authorized(c, 'operator');
    await deleteTestEndpoint(c.get('svc'), agent, tool);
    return c.body(null, 204);
  },
);
