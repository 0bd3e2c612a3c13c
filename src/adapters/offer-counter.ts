import type { AgentNamespace } from './agent-object-rpc.ts';
import type { OfferCounter, OfferCounts } from '../core/ports.ts';

/**
 * Offer counts kept in each agent's Durable Object: exact (one object serialises its agent's
 * counts) and durable (its SQLite storage); sent off the hot path, one RPC per group of routed
 * turns that `/route` gathered in an isolate (src/services/turn-writer.ts).
 */
export function createDurableOfferCounter(ns: AgentNamespace): OfferCounter {
  const stub = (agent: string) => ns.get(ns.idFromName(agent));
  return {
    async countOffers(agent, tools) {
      await stub(agent).countOffers([...tools]);
    },
    async countTurns(agent, turns) {
      await stub(agent).countTurns(turns.map((t) => [...t]));
    },
    async toolsRegistered(agent, tools) {
      await stub(agent).toolsRegistered([...tools]);
    },
    async offers(agent): Promise<OfferCounts> {
      const c = await stub(agent).offers();
      return { routed_turns: c.routed_turns, offered: { ...c.offered }, observed: { ...c.observed } };
    },
  };
}
