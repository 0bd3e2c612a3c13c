/** Export and import of a whole agent (docs/api.md "Export and import"), the admin's. */
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth.ts';
import { ApiError } from '../errors.ts';
import { ErrorBody } from '../schemas.ts';
import { exportAgent, importAgent } from '../services/agent-transfer.ts';
import { AgentParams, bearer, createApi, nowIso, responses } from './common.ts';

export const transferApi = createApi();

// Typed as string: the OpenAPI route types know JSON and text bodies only, and let any Response
// answer a media type they cannot read.
const NDJSON: string = 'application/x-ndjson';
const errors = (statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [s, { description: 'error', content: { 'application/json': { schema: ErrorBody } } }]),
  );

transferApi.openapi(
  createRoute({
    method: 'get',
    path: '/v1/agents/{agent}/export',
    summary: 'The agent as NDJSON (admin): settings, tools, versions, revisions, reviews, pins and the log',
    security: bearer,
    request: { params: AgentParams },
    responses: {
      200: {
        description: 'one JSON object per line, each with a `type`; the first line is the agent',
        content: { [NDJSON]: { schema: z.string() } },
      },
      ...errors([400, 401, 403, 404, 429]),
    },
  }),
  async (c) => {
    const { agent } = c.req.valid('param');
    authorize(c.get('principal'), agent, 'admin');
    const stream = await exportAgent(c.get('svc'), agent);
    return c.body(stream, 200, {
      'content-type': NDJSON,
      'content-disposition': `attachment; filename="${agent}.ndjson"`,
      'cache-control': 'no-store',
    });
  },
);

const ImportAnswer = z.object({
  agent: z.string(),
  imported: z.record(z.string(), z.number().int()),
  renamed: z.record(z.string(), z.string()),
});

transferApi.openapi(
  createRoute({
    method: 'post',
    path: '/v1/agents/{agent}/import',
    summary: 'Create the agent from an export (admin); 409 when it exists',
    security: bearer,
    request: {
      params: AgentParams,
      body: { content: { [NDJSON]: { schema: z.string() } }, required: true },
    },
    responses: responses(ImportAnswer, 'what was imported', [400, 401, 403, 409, 413, 502]),
  }),
  async (c) => {
    const { agent } = c.req.valid('param');
    authorize(c.get('principal'), agent, 'admin');
    return c.json(await importAgent(c.get('svc'), agent, utf8(await c.req.arrayBuffer()), nowIso()), 200);
  },
);

/** The body as text; bytes that are not UTF-8 are a 400 (an export is always UTF-8). */
function utf8(body: ArrayBuffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw new ApiError('invalid_request', 'the body is not UTF-8 text');
  }
}
