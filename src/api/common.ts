/**
 * What every API module shares: the app's type, path parameter schemas, response helpers and the
 * authorisation step each handler starts with.
 */
import { OpenAPIHono, type RouteConfig, createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { authorize, type Need, type Principal } from '../auth.ts';
import type { Bindings, Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import { type CursorKey, decodeCursor, pageByOffset } from '../core/pagination.ts';
import { AgentId, ErrorBody, type Settings, ToolName } from '../schemas.ts';
import { settingsOf } from '../services/route-serving.ts';

export interface AppEnv {
  Bindings: Bindings;
  Variables: { principal: Principal; svc: Services };
}

export type AppContext = Context<AppEnv>;

/** A sub-app whose validation failures answer 400 `invalid_request` with the zod issues (docs/api.md). */
export function createApi(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

export function validationHook(result: { success: boolean; error?: { issues: readonly unknown[] } }): void {
  if (!result.success) {
    throw new ApiError('invalid_request', 'the request does not match the schema', [...(result.error?.issues ?? [])]);
  }
}

export const AgentParams = z.object({ agent: AgentId.openapi({ param: { name: 'agent', in: 'path' } }) });
export const ToolParams = AgentParams.extend({ tool: ToolName.openapi({ param: { name: 'tool', in: 'path' } }) });
export const IdParams = AgentParams.extend({
  id: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

export const bearer = [{ bearer: [] }];

/** The error statuses a route answers unless it says otherwise (429 is added to every route). */
const ROUTE_ERRORS = [400, 401, 403, 404];

/**
 * OpenAPI responses: the success shape plus every error the route can answer; 429 on every route,
 * since RATE_LIMIT_PER_MINUTE limits every request of a key.
 */
export function responses<T extends z.ZodType>(schema: T, description: string, errors: number[] = ROUTE_ERRORS) {
  const out: Record<number, { description: string; content?: Record<string, { schema: z.ZodType }> }> = {
    200: { description, content: { 'application/json': { schema } } },
  };
  for (const status of new Set([...errors, 429]))
    out[status] = { description: 'error', content: { 'application/json': { schema: ErrorBody } } };
  return out as { 200: { description: string; content: { 'application/json': { schema: T } } } } & Record<
    number,
    { description: string }
  >;
}

export function jsonBody<T extends z.ZodType>(schema: T) {
  return { body: { content: { 'application/json': { schema } }, required: true as const } };
}

/** What one authorised route declares; `apiRoute` adds the bearer security and the error answers. */
export interface RouteSpec<M, Path, P, Q, B, T> {
  method: M;
  path: Path;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  /** The JSON body, required. */
  body?: B;
  /** The 200 answer's schema; `null` for a route that answers 204 with no body. */
  answer: T;
  /** What the answer is (the OpenAPI description of the 200 or the 204). */
  answered: string;
  /**
   * The error statuses besides 429 (which every route may answer) and 413 (which every route with a
   * body may answer); 400, 401, 403, 404 unless told.
   */
  errors?: number[];
}

type Request<P, Q, B> = (P extends z.ZodObject ? { params: P } : unknown) &
  (Q extends z.ZodObject ? { query: Q } : unknown) &
  (B extends z.ZodType ? ReturnType<typeof jsonBody<B>> : unknown);
type Responses<T> = T extends z.ZodType
  ? ReturnType<typeof responses<T>>
  : { 204: { description: string } } & ReturnType<typeof responses<z.ZodObject>>;

/**
 * The OpenAPI route of an authorised handler: bearer security, the request parts the spec names
 * and its answers. A 204 route also lists an unused 200 (the error answers hang off it).
 */
export function apiRoute<
  M extends 'get' | 'put' | 'post' | 'delete',
  Path extends string,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  T extends z.ZodType | null = null,
>(spec: RouteSpec<M, Path, P, Q, B, T>) {
  const { method, path, summary, description, params, query, body, answer, answered, errors } = spec;
  const request = { ...(params ? { params } : {}), ...(query ? { query } : {}), ...(body ? jsonBody(body) : {}) };
  // Every body is read under the request body limit (src/app.ts), so a route with one may answer 413.
  const statuses = body === undefined ? errors : [...(errors ?? ROUTE_ERRORS), 413];
  const answers =
    answer === null
      ? { 204: { description: answered }, ...responses(z.object({}), 'unused', statuses) }
      : responses(answer, answered, statuses);
  const route = createRoute({
    method,
    path,
    summary,
    ...(description === undefined ? {} : { description }),
    security: bearer,
    request,
    responses: answers,
  } as RouteConfig);
  return route as unknown as { method: M; path: Path; request: Request<P, Q, B>; responses: Responses<T> };
}

/** What an agent route's handler is given: the path parameters, and the query and body as validated. */
export type RouteInput<P, Q, B> = z.output<P extends z.ZodObject ? P : typeof AgentParams> &
  (Q extends z.ZodObject ? { query: z.output<Q> } : unknown) &
  (B extends z.ZodType ? { body: z.output<B> } : unknown);

/** An agent route: its OpenAPI declaration, who may call it, and what it does once they may. */
export interface AgentRouteSpec<M, Path, P, Q, B, T> extends RouteSpec<M, Path, P, Q, B, T> {
  /** The need the caller's token must meet on the path's agent. */
  need: Need;
  handler: (c: AppContext, input: RouteInput<P, Q, B>) => Response | Promise<Response>;
}

/**
 * Declares one route of an agent's resources on `api` (path parameters `AgentParams` unless told):
 * the handler runs once the caller meets `need` on the path's agent, and is given the path
 * parameters with the validated query and body, so that step is said here and not in each handler.
 */
export function agentRoute<
  M extends 'get' | 'put' | 'post' | 'delete',
  Path extends `/v1/agents/{agent}${string}`,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  T extends z.ZodType | null = null,
>(api: OpenAPIHono<AppEnv>, spec: AgentRouteSpec<M, Path, P, Q, B, T>): void {
  const { need, handler, ...declared } = spec;
  const route = apiRoute({ ...declared, params: declared.params ?? AgentParams });
  api.openapi(route, (c) => {
    // The route's parts are generic here; the validators openapi() registers have checked each one.
    const valid = (target: 'param' | 'query' | 'json') => c.req.valid(target as never) as object;
    const params = valid('param') as z.output<typeof AgentParams>;
    authorize(c.get('principal'), params.agent, need);
    const query = declared.query === undefined ? {} : { query: valid('query') };
    const body = declared.body === undefined ? {} : { body: valid('json') };
    return handler(c, { ...params, ...query, ...body } as RouteInput<P, Q, B>);
  });
}

/** Authorises the principal for `:agent` with the route's need; returns the agent id. */
export function agentFor(c: AppContext, agent: string, need: Exclude<Need, 'admin'>): string {
  authorize(c.get('principal'), agent, need);
  return agent;
}

/**
 * The route's path parameters, once the principal may act on their agent with `need`: the step a
 * handler registered without `agentRoute` starts with (preAuthorize refused most callers earlier,
 * from the path).
 */
export function authorized<P extends { agent: string }>(
  c: Context<AppEnv, string, { out: { param: P } }>,
  need: Exclude<Need, 'admin'>,
): P {
  const params = c.req.valid('param');
  authorize(c.get('principal'), params.agent, need);
  return params;
}

/** The agent's row, for a handler that needs the agent to exist: a 404 when it is not stored. */
export async function agentRow(c: AppContext, agent: string) {
  const row = await c.get('svc').store.getAgent(agent);
  if (!row) throw notFound(`agent ${agent}`);
  return row;
}

/** The agent's settings with their defaults filled in: a 404 when the agent is not stored. */
export async function agentSettings(c: AppContext, agent: string): Promise<Settings> {
  return settingsOf((await agentRow(c, agent)).settings);
}

/** Who did a write, for the audit columns (a key id, never the key). */
export function actorOf(c: AppContext): string {
  return c.get('principal').id;
}

export const nowIso = (): string => new Date().toISOString();

/** Most items one page of a list route holds; also the page size when `limit` is absent. */
export const MAX_PAGE = 1000;

/** `limit` and `cursor` of a list route (docs/api.md "Pagination"). */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE)
    .optional()
    .openapi({
      param: { name: 'limit', in: 'query' },
      description: `items per page, 1–${MAX_PAGE} (default ${MAX_PAGE})`,
    }),
  cursor: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: 'the next_cursor of the previous page' }),
});

/** The position a `cursor` query holds; 400 `invalid_request` when it is not one this service wrote. */
export function cursorOf(cursor: string | undefined): CursorKey | null {
  if (cursor === undefined) return null;
  const key = decodeCursor(cursor);
  if (key === null) {
    throw new ApiError('invalid_request', 'cursor is not a next_cursor this service answered', [
      { path: ['cursor'], message: 'pass back the next_cursor of the previous page unchanged' },
    ]);
  }
  return key;
}

/** One page of a list read whole, from the position of the query's cursor. */
export function offsetPage<T>(items: T[], query: { limit?: number; cursor?: string }) {
  return pageByOffset(items, query.limit ?? MAX_PAGE, cursorOf(query.cursor));
}
