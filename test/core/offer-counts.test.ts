import { describe, expect, it } from 'vitest';
import { offersOfTurns } from '../../src/core/offer-counts.ts';

describe('offersOfTurns (how routed turns add to the offer counts)', () => {
  it('counts a tool once per turn that offered it, and starts a new tool at the turn that first offered it', () => {
    const turns = [['a', 'b', 'a'], ['b'], ['c', 'b']];
    expect(offersOfTurns(turns, 10)).toEqual([
      { tool: 'a', count: 1, sinceTurn: 10 },
      { tool: 'b', count: 3, sinceTurn: 10 },
      { tool: 'c', count: 1, sinceTurn: 12 },
    ]);
  });

  it('leaves the turns as they were, and answers nothing for no turns', () => {
    const turns = [['a', 'a']];
    offersOfTurns(turns, 0);
    expect(turns).toEqual([['a', 'a']]);
    expect(offersOfTurns([], 5)).toEqual([]);
  });
});
