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

describe('isReAsk: how the next request opens', () => {
  it('a request that opens as a correction is a re-ask even when it shares no word', () => {
    expect(isReAsk('claw back the overpayment please', 'no, I meant start recovery on the claim', [])).toBe(true);
    expect(isReAsk('show my invoices', 'Not that, I need the shipping status', [])).toBe(true);
    expect(isReAsk('weather in Porto', 'I said a hotel booking in Porto', ['Porto'])).toBe(true);
    expect(isReAsk('weather in Porto', "That's wrong, book a room", [])).toBe(true);
  });

  it('an opening that only sounds like a correction is not one', () => {
    expect(isReAsk('weather in Porto', 'no worries, book a hotel in Porto', ['Porto'])).toBe(false);
    expect(isReAsk('show my invoices', 'nothing else, thanks', [])).toBe(false);
  });

  it('a request that opens with the next step is a follow-up even when it repeats a word', () => {
    expect(isReAsk('book the flight to Rome', 'now book the hotel, not the hostel', [])).toBe(false);
    expect(isReAsk('check the order status', 'then cancel the order', [])).toBe(false);
    expect(isReAsk('check the order status', 'And then email the order summary', [])).toBe(false);
    expect(isReAsk('check the order status', 'Also, refund the order', [])).toBe(false);
    expect(readsAsFollowUp('now book the hotel, not the hostel')).toBe(true);
  });
});
