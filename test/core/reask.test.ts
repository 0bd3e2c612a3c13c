import { describe, expect, it } from 'vitest';
import { isReAsk, readsAsFollowUp } from '../../src/core/reask.ts';

describe('isReAsk: a paraphrase or a correction, not a follow-up', () => {
  it('a correction that restates the request is a re-ask', () => {
    expect(isReAsk('the reserve on this claim needs raising', 'no, set the reserve figure on the claim', [])).toBe(
      true,
    );
  });

  it('a follow-up that points back or says it comes next is a new task', () => {
    const values = ['Ana Pereira', 'Lisbon', '3 May'];
    expect(
      isReAsk('book a flight to Lisbon on 3 May for Ana Pereira', 'now check Ana in for that flight', values),
    ).toBe(false);
    expect(readsAsFollowUp('also refund it for that order')).toBe(true);
    expect(readsAsFollowUp('no, I meant refund that order')).toBe(false);
  });

  it('values never count as shared words: the same city names two tasks', () => {
    expect(isReAsk("what's the weather in Porto", 'book a hotel in Porto', ['Porto'])).toBe(false);
    expect(isReAsk('order 4471-XK status', 'cancel 4471-XK', [])).toBe(false);
    expect(isReAsk('show the weather in Porto', 'weather forecast for Porto please', ['Porto'])).toBe(true);
  });
});
