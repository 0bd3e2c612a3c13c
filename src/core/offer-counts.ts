/**
 * How a group of routed turns adds to an agent's offer counts (docs/learning.md "Usage flags"): each
 * tool once per turn that offered it, however often the turn listed it, and a tool first seen in
 * the group starts its window at the turn that first offered it.
 */
import type { ToolOffers } from './ports.ts';

/** The offers of `turns`, routed in order after `routedBefore` earlier turns: one entry per distinct tool. */
export function offersOfTurns(turns: readonly (readonly string[])[], routedBefore: number): ToolOffers[] {
  const offers = new Map<string, ToolOffers>();
  turns.forEach((tools, i) => {
    for (const tool of new Set(tools)) {
      const o = offers.get(tool);
      if (o) o.count += 1;
      else offers.set(tool, { tool, count: 1, sinceTurn: routedBefore + i });
    }
  });
  return [...offers.values()];
}
