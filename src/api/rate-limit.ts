/**
 * The per-key rate limit of every `/v1` route (docs/api.md 429 `rate_limited`;), after
 * authentication. Only agent keys are limited: the ADMIN_TOKEN is the deployer's own secret, and
 * a request with no valid token was already refused (401) without touching any agent's object.
 */
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.ts';
import type { AppEnv } from './common.ts';

/** 429 with `Retry-After` (whole seconds, at least 1) when the key has used its allowance. */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const limiter = c.get('svc').rateLimiter;
    const principal = c.get('principal');
    // Off (the default): no Durable Object round trip at all on the hot path.
    if (limiter && principal.kind === 'key') {
      const waitMs = await limiter.take(principal.agent, principal.id, Date.now());
      if (waitMs > 0) {
        const seconds = Math.max(1, Math.ceil(waitMs / 1000));
        throw new ApiError(
          'rate_limited',
          `this key made more than ${limiter.perMinute} requests a minute; retry in ${seconds} s`,
          [],
          {
            'retry-after': String(seconds),
          },
        );
      }
    }
    await next();
  };
}
