/**
 * Usage flags of one agent (docs/learning.md): the offer counts of its Durable Object joined with the call
 * counts of the log. `GET …/flags` and reviews (which carry the same list) both call this.
 */
import { usageFlags as flagsFrom } from '../core/usage-flags.ts';
import type { Services } from '../env.ts';
import type { Flag, Settings } from '../schemas.ts';

/** The agent's usage flags under `settings` (`min_offers`, `min_turns`), sorted by tool name. */
export async function usageFlags(svc: Services, agent: string, settings: Settings): Promise<Flag[]> {
  const [offers, counts] = await Promise.all([
    svc.offers.offers(agent),
    svc.store.toolNames(agent).then((names) => svc.usage.registeredCallCounts(agent, names)),
  ]);
  return flagsFrom({
    tools: counts.map((c) => c.tool),
    offers,
    calls: new Map(counts.map((c) => [c.tool, c.calls])),
    settings,
  });
}
