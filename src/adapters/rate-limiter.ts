import type { AgentObject } from '../agent-object.ts';
import type { RateLimiter } from '../core/ports.ts';

/**
 * Per-key token buckets in the key's agent's Durable Object. Cost: one DO round trip per
 * request of a key while the limit is on, none when it is off (`perMinute` 0 → no limiter at all).
 * Consistency: exact — one object serialises its agent's buckets, so concurrent requests from many
 * isolates never share a token.
 */
export function createDurableRateLimiter(
  ns: DurableObjectNamespace<AgentObject>,
  perMinute: number,
): RateLimiter | null {
  if (perMinute <= 0) return null;
  return {
    perMinute,
    take: (agent, principal, nowMs) => ns.get(ns.idFromName(agent)).takeRequest(principal, perMinute, nowMs),
  };
}
