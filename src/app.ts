/**
 * The Hono app: middleware, the API modules, the OpenAPI document, and one error path (docs/api.md):
 * every failure answers `{"error": {code, message, details}}`; an unknown error is logged and
 * becomes a generic 500 with no internal detail.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { nameOperations } from './api/openapi-names.ts';
import { logError } from './logger.ts';
import { VERSION } from './version.ts';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { activityApi } from './api/activity.ts';
import { qualityApi } from './api/quality.ts';
import { agentsApi } from './api/agents.ts';
import { mcpApi, mcpHttpGuard } from './api/mcp.ts';
import type { AppEnv } from './api/common.ts';
import { validationHook } from './api/common.ts';
import { jsonDepthLimit } from './api/depth-limit.ts';
import { previewApi } from './api/preview.ts';
import { authenticateLimited, rateLimit } from './api/rate-limit.ts';
import { reviewsApi } from './api/reviews.ts';
import { revisionsApi } from './api/revisions.ts';
import { tryApi } from './api/try.ts';
import { pinsApi } from './api/pins.ts';
import { routeApi } from './api/route.ts';
import { toolsApi } from './api/tools.ts';
import { upstreamsApi } from './api/upstreams.ts';
import { transferApi } from './api/transfer.ts';
import { usageApi } from './api/usage.ts';
import { webhooksApi } from './api/webhooks.ts';
import { preAuthorize } from './api/pre-authorize.ts';
import { VersionConflict } from './core/ports.ts';
import { dashboardApp } from './dashboard/page.ts';
import { services } from './env.ts';
import { ApiError, type ErrorCode } from './errors.ts';
import { LIMITS } from './schemas.ts';

export const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

app.use('*', async (c, next) => {
  c.set('svc', services(c.env));
  await next();
});

const bodyLimitOf = (maxSize: number) =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError('payload_too_large', `the request body is larger than ${maxSize} bytes`);
    },
  });
const requestBodyLimit = bodyLimitOf(LIMITS.bodyBytes);
// An import is a whole export (docs/api.md "Export and import"): it has a limit of its own.
const importBodyLimit = bodyLimitOf(LIMITS.importBytes);
const IMPORT_PATH = /^\/v1\/agents\/[^/]+\/import$/;

// Limits before work: who is asking is known (from a header) before any body byte is read; failed
// authentications count against the client address (src/api/rate-limit.ts).
// The MCP endpoint checks Origin and answers CORS preflights before anyone is authenticated.
app.use('/v1/agents/:agent/mcp', mcpHttpGuard());
app.use('/v1/*', authenticateLimited());

// docs/api.md "Limits": per key and per agent (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_AGENT_PER_MINUTE).
app.use('/v1/*', rateLimit());

// Authorisation before the body (src/api/pre-authorize.ts): a caller without the route's right is
// refused before a byte is read; only then does the body limit let the body in.
app.use('/v1/*', preAuthorize());
app.use('/v1/*', (c, next) =>
  (c.req.method === 'POST' && IMPORT_PATH.test(c.req.path) ? importBodyLimit : requestBodyLimit)(c, next),
);
// docs/api.md "Limits": a body nested deeper than LIMITS.jsonDepth is a 400 before anything reads it.
app.use('/v1/*', jsonDepthLimit());

app.get('/healthz', (c) => c.json({ ok: true }));

// docs/api.md `GET /`: the dashboard and its static files, public (the page asks for a token;).
app.route('/', dashboardApp);

for (const api of [
  toolsApi,
  routeApi,
  agentsApi,
  transferApi,
  usageApi,
  revisionsApi,
  tryApi,
  activityApi,
  qualityApi,
  previewApi,
  reviewsApi,
  pinsApi,
  upstreamsApi,
  webhooksApi,
])
  app.route('/', api);
// Not an OpenAPI route: MCP speaks JSON-RPC over Streamable HTTP.
app.route('/', mcpApi);

app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
// The OpenAPI document, built once per isolate: operationId and tags named from each route's method
// and path (src/api/openapi-names.ts), the package version, and this deployment as its server.
let openApiDocument: ReturnType<typeof app.getOpenAPI31Document> | undefined;
app.get('/openapi.json', (c) => {
  openApiDocument ??= buildOpenApiDocument();
  return c.json({ ...openApiDocument, servers: [{ url: new URL(c.req.url).origin }] });
});

function buildOpenApiDocument(): ReturnType<typeof app.getOpenAPI31Document> {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Whetstone',
      version: VERSION,
      description: 'Tool routing and tool learning for AI agents (docs/api.md).',
    },
  });
  nameOperations((doc.paths ?? {}) as Parameters<typeof nameOperations>[0]);
  return doc;
}

app.notFound((c) => {
  const allowed = allowedMethods(new URL(c.req.url).pathname);
  if (allowed.length > 0 && !allowed.includes(c.req.method)) {
    return new ApiError('method_not_allowed', `${c.req.method} is not allowed here; use ${allowed.join(', ')}`, [], {
      allow: allowed.join(', '),
    }).toResponse();
  }
  return new ApiError('not_found', `no route ${c.req.method} ${new URL(c.req.url).pathname}`).toResponse();
});

app.onError((err, c) => {
  if (err instanceof ApiError) return err.toResponse();
  if (err instanceof VersionConflict) return new ApiError('conflict', err.message).toResponse();
  if (err instanceof HTTPException)
    return new ApiError(httpCode(err.status), err.message || 'bad request').toResponse();
  logError('unhandled_error', {
    method: c.req.method,
    path: new URL(c.req.url).pathname,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return new ApiError('internal', 'internal error').toResponse();
});

function httpCode(status: number): ErrorCode {
  if (status === 413) return 'payload_too_large';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  return status >= 500 ? 'internal' : 'invalid_request';
}

/** Methods registered for a path (for 405 with Allow). */
function allowedMethods(path: string): string[] {
  const methods = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL') continue;
    const pattern = new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`);
    if (pattern.test(path)) methods.add(r.method);
  }
  return [...methods];
}
