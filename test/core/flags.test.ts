import { describe, expect, it } from 'vitest';
import { usageFlags } from '../../src/core/usage-flags.ts';
import type { OfferCounts } from '../../src/core/ports.ts';

const settings = { min_offers: 5, min_turns: 20 };

function offers(routed: number, offered: Record<string, number>, observed: Record<string, number> = {}): OfferCounts {
  return { routed_turns: routed, offered, observed };
}

describe('usageFlags (docs/learning.md)', () => {
  it('flags retrieved_never_called at min_offers offers and not one below', () => {
    const flags = usageFlags({
      tools: ['a', 'b'],
      offers: offers(10, { a: 4, b: 5 }, { a: 10, b: 10 }),
      calls: new Map(),
      settings,
    });
    expect(flags).toEqual([
      { tool: 'b', flag: 'retrieved_never_called', offered_turns: 5, calls: 0, routed_turns: 10 },
    ]);
  });

  it('never flags a tool that was called, however often it was offered', () => {
    const flags = usageFlags({
      tools: ['a'],
      offers: offers(50, { a: 50 }, { a: 50 }),
      calls: new Map([['a', 1]]),
      settings,
    });
    expect(flags).toEqual([]);
  });

  it('flags never_retrieved at min_turns observed turns, counted from registration', () => {
    const flags = usageFlags({
      tools: ['old', 'new', 'offered_once'],
      offers: offers(30, { offered_once: 1 }, { old: 20, new: 19, offered_once: 30 }),
      calls: new Map(),
      settings,
    });
    expect(flags).toEqual([{ tool: 'old', flag: 'never_retrieved', offered_turns: 0, calls: 0, routed_turns: 20 }]);
  });

  it('falls back to all routed turns for a tool the counter never saw', () => {
    const flags = usageFlags({ tools: ['unseen'], offers: offers(20, {}), calls: new Map(), settings });
    expect(flags).toEqual([{ tool: 'unseen', flag: 'never_retrieved', offered_turns: 0, calls: 0, routed_turns: 20 }]);
  });

  it('raises nothing when no turn was routed (the stable-list rule counts nothing)', () => {
    expect(
      usageFlags({ tools: ['a', 'b'], offers: offers(0, {}, { a: 0, b: 0 }), calls: new Map(), settings }),
    ).toEqual([]);
  });

  it('ignores counts of tools that are not registered and sorts by tool name', () => {
    const flags = usageFlags({
      tools: ['zeta', 'alpha', 'alpha'],
      offers: offers(25, { zeta: 7, gone: 9 }, { zeta: 25, alpha: 25, gone: 25 }),
      calls: new Map(),
      settings,
    });
    expect(flags.map((f) => [f.tool, f.flag])).toEqual([
      ['alpha', 'never_retrieved'],
      ['zeta', 'retrieved_never_called'],
    ]);
  });

  it('follows the thresholds it is given', () => {
    const flags = usageFlags({
      tools: ['a'],
      offers: offers(3, { a: 2 }, { a: 3 }),
      calls: new Map(),
      settings: { min_offers: 2, min_turns: 1 },
    });
    expect(flags).toEqual([{ tool: 'a', flag: 'retrieved_never_called', offered_turns: 2, calls: 0, routed_turns: 3 }]);
  });
});
