import type { AgentNamespace } from './agent-object-rpc.ts';
import type { ModelBudget, RateLimiter, RateLimits } from '../core/ports.ts';

/**
 * The Durable Object a client address's failed authentications are counted in. `:` never occurs in
 * an agent id (src/schemas.ts AgentId), so this name is never an agent's object.
 */
export const clientObjectName = (client: string): string => `client:${client}`;

/**
 * Token buckets in Durable Objects. A key's request: one round trip to its agent's object, which
 * holds the key's bucket and the agent's (both taken, or neither), none when both limits are off. A
 * failed authentication: one round trip to its client address's object. Consistency: exact — one
 * object serialises its buckets, so concurrent requests from many isolates never share a token.
 */
export function createDurableRateLimiter(ns: AgentNamespace, limits: RateLimits): RateLimiter | null {
  if (limits.perKey <= 0 && limits.perAgent <= 0 && limits.authFailures <= 0) return null;
  return {
    limits,
    take: (agent, principal, nowMs) =>
      limits.perKey <= 0 && limits.perAgent <= 0
        ? Promise.resolve(null)
        : ns.get(ns.idFromName(agent)).takeRequest(principal, limits.perKey, limits.perAgent, nowMs),
    failedAuth: (client, nowMs) =>
      limits.authFailures <= 0
        ? Promise.resolve(0)
        : ns.get(ns.idFromName(clientObjectName(client))).takeAuthFailure(limits.authFailures, nowMs),
  };
}

/** Each agent's model-call budget in its Durable Object: one round trip per review or registration that calls the model. */
export function createDurableModelBudget(ns: AgentNamespace): ModelBudget {
  return {
    take: (agent, wanted, perHour, nowMs) => ns.get(ns.idFromName(agent)).takeModelCalls(wanted, perHour, nowMs),
  };
}
