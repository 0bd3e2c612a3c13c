/**
 * Request limits of every `/v1` route (docs/api.md 429 `rate_limited`), on by default
 * (docs/configuration.md `RATE_LIMIT_*`):
 * - after authentication, each agent key has its allowance and all the keys of one agent share
 *   one; the ADMIN_TOKEN is the deployer's own secret and is not limited;
 * - failed authentications are counted per client address: past the allowance the address is
 *   answered 429 instead of 401, and this isolate refuses it before reading its token until the
 *   wait is over (no Durable Object round trip, no key lookup, no hashing).
 */
import type { MiddlewareHandler } from 'hono';
import { authenticate } from '../auth.ts';
import { ApiError } from '../errors.ts';
import type { AppEnv } from './common.ts';

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

function refused(message: string, waitMs: number): ApiError {
  const s = seconds(waitMs);
  return new ApiError('rate_limited', `${message}; retry in ${s} s`, [], { 'retry-after': String(s) });
}

/**
 * The address a request came from: Cloudflare's `CF-Connecting-IP` (set by the edge, which a
 * client cannot forge there), else one shared `unknown` address.
 */
export function clientAddress(req: Request): string {
  return req.headers.get('cf-connecting-ip')?.trim() || 'unknown';
}

/**
 * Addresses this isolate knows are past their failed-authentication allowance, with when they may
 * try again. Bounded: past MAX_BLOCKED the entries whose wait is over are dropped, then the oldest.
 */
const blocked = new Map<string, number>();
const MAX_BLOCKED = 10_000;

function block(client: string, untilMs: number, nowMs: number): void {
  blocked.delete(client);
  blocked.set(client, untilMs);
  if (blocked.size <= MAX_BLOCKED) return;
  for (const [c, until] of blocked) if (until <= nowMs) blocked.delete(c);
  for (const c of blocked.keys()) {
    if (blocked.size <= MAX_BLOCKED) break;
    blocked.delete(c);
  }
}

/** Authenticates the request (src/auth.ts), counting a failure against its client address's allowance. */
export function authenticateLimited(): MiddlewareHandler<AppEnv> {
  return async function authenticateMiddleware(c, next) {
    const svc = c.get('svc');
    const limiter = svc.rateLimiter;
    const watching = limiter !== null && limiter.limits.authFailures > 0;
    const client = clientAddress(c.req.raw);
    const limit = limiter?.limits.authFailures ?? 0;
    const message = `more than ${limit} failed authentications a minute came from this address`;
    if (watching) {
      const until = blocked.get(client);
      if (until !== undefined && until > Date.now()) throw refused(message, until - Date.now());
    }
    try {
      c.set('principal', await authenticate(c.req.header('authorization'), c.env.ADMIN_TOKEN, svc.store));
    } catch (err) {
      if (watching && limiter && err instanceof ApiError && err.code === 'unauthorized') {
        const now = Date.now();
        const waitMs = await limiter.failedAuth(client, now);
        if (waitMs > 0) {
          block(client, now + waitMs, now);
          throw refused(message, waitMs);
        }
      }
      throw err;
    }
    await next();
  };
}

/** 429 with `Retry-After` (whole seconds, at least 1) when the key, or its agent, has used its allowance. */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const limiter = c.get('svc').rateLimiter;
    const principal = c.get('principal');
    // Both off: no Durable Object round trip at all on the hot path.
    if (limiter && principal.kind === 'key' && (limiter.limits.perKey > 0 || limiter.limits.perAgent > 0)) {
      const refusal = await limiter.take(principal.agent, principal.id, Date.now());
      if (refusal?.limit === 'key')
        throw refused(`this key made more than ${limiter.limits.perKey} requests a minute`, refusal.waitMs);
      if (refusal?.limit === 'agent')
        throw refused(
          `the keys of agent ${principal.agent} made more than ${limiter.limits.perAgent} requests a minute together`,
          refusal.waitMs,
        );
    }
    await next();
  };
}
