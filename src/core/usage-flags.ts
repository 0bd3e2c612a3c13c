/**
 * Usage flags (docs/learning.md): tools routing keeps offering that the model never calls, and tools routing
 * never offers. Plain data in: the offer counts of the agent's Durable Object and the call counts
 * of the log. Flags are for a person; nothing is proposed from them.
 */
import type { Flag, Settings } from '../schemas.ts';
import type { OfferCounts } from './ports.ts';

export interface UsageInput {
  /** The agent's registered tools. */
  tools: readonly string[];
  offers: OfferCounts;
  /** tool name → more than 0 when the tool was ever called (a tool absent here never was). */
  calls: ReadonlyMap<string, number>;
  settings: Pick<Settings, 'min_offers' | 'min_turns'>;
}

/**
 * `retrieved_never_called`: offered in ≥ `min_offers` routed turns, never called.
 * `never_retrieved`: never offered and never called over ≥ `min_turns` routed turns, counted from
 * the tool's registration (`observed`), or over all routed turns when the counter never saw it.
 * Routed turns only: the stable-list rule counts nothing (docs/learning.md), so it raises no flag either.
 * Sorted by tool name.
 */
export function usageFlags(input: UsageInput): Flag[] {
  const { offers, calls, settings } = input;
  const flags: Flag[] = [];
  for (const tool of [...new Set(input.tools)].sort()) {
    const called = calls.get(tool) ?? 0;
    if (called > 0) continue;
    const offered = offers.offered[tool] ?? 0;
    const observed = offers.observed[tool] ?? offers.routed_turns;
    const flag =
      offered >= settings.min_offers
        ? 'retrieved_never_called'
        : offered === 0 && observed >= settings.min_turns
          ? 'never_retrieved'
          : null;
    if (flag) flags.push({ tool, flag, offered_turns: offered, calls: 0, routed_turns: observed });
  }
  return flags;
}
