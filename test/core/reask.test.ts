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

describe('readsAsFollowUp: a request that stands alone does not point back', () => {
  it('a later sentence that says "help me with that" or "additionally" points into the request itself', () => {
    expect(readsAsFollowUp("I'm looking for recent IELTS speaking questions. Can you help me with that?")).toBe(false);
    expect(readsAsFollowUp('Summarise this paper. Additionally, list its sources.')).toBe(false);
    expect(
      isReAsk(
        'find IELTS practice questions',
        "I'm looking for recent IELTS speaking questions to practise. Can you help me with that?",
        [],
      ),
    ).toBe(true);
  });

  it('"as well as" joins two things, "next week" picks a time, "right now" and "too much" are no next step', () => {
    expect(readsAsFollowUp('find hotels as well as hostels in the old town')).toBe(false);
    expect(readsAsFollowUp('book a flight for next week')).toBe(false);
    expect(readsAsFollowUp("what's the weather right now")).toBe(false);
    expect(readsAsFollowUp('these hotels cost too much, find cheaper ones')).toBe(false);
    expect(isReAsk('show the weather in Porto', "what's the weather in Porto right now", ['Porto'])).toBe(true);
  });

  it('a follow-up still reads as one after thanks, and "too" where its clause ends says "as well"', () => {
    expect(readsAsFollowUp('Great, thanks! Now check Ana in for that flight.')).toBe(true);
    expect(readsAsFollowUp('ok, also refund it')).toBe(true);
    expect(readsAsFollowUp('Can you book a hotel there too?')).toBe(true);
    expect(readsAsFollowUp('book a hotel as well')).toBe(true);
    expect(isReAsk('book the flight to Rome', 'Perfect. Now book the hotel in Rome', [])).toBe(false);
  });

  it('a correction after thanks is still a correction', () => {
    expect(isReAsk('weather in Porto', 'Thanks. No, I meant a hotel booking', [])).toBe(true);
    expect(isReAsk('weather in Porto', 'ok, not that, I need a hotel', [])).toBe(true);
  });
});
