/**
 * Refuses a JSON body nested deeper than `LIMITS.jsonDepth` with 400 `invalid_request`,
 * before any validator or the MCP transport reads it. It reads a clone, so the body stays unread
 * for them; the body limit has already capped its size.
 */
import type { MiddlewareHandler } from 'hono';
import { jsonDepth } from '../core/json-depth.ts';
import { ApiError } from '../errors.ts';
import { LIMITS } from '../schemas.ts';
import type { AppEnv } from './common.ts';

/** 400 `invalid_request` (issue `too_deep`) for a JSON body nested past LIMITS.jsonDepth. */
export function jsonDepthLimit(): MiddlewareHandler<AppEnv> {
  return async function jsonDepthMiddleware(c, next) {
    const raw = c.req.raw;
    if (raw.body !== null && /json/i.test(raw.headers.get('content-type') ?? '')) {
      // Bytes decoded here (not .text()): an NDJSON import is checked too, and workerd warns when
      // .text() reads a type it does not count as text.
      const depth = jsonDepth(new TextDecoder().decode(await raw.clone().arrayBuffer()));
      if (depth > LIMITS.jsonDepth) {
        throw new ApiError('invalid_request', 'the request does not match the schema', [
          {
            code: 'too_deep',
            path: [],
            message: `the JSON body nests ${depth} levels deep; at most ${LIMITS.jsonDepth} are allowed`,
          },
        ]);
      }
    }
    await next();
  };
}
