import { describe, expect, it } from 'vitest';
import { contentWords } from '../../src/core/text.ts';
import {
  conversationMark,
  DEFAULT_MEMORY_BYTES,
  AGENT_MEMORY_BYTES,
  indexClaims,
  memoryBudget,
  mergeMemory,
  routedWordings,
  sameWhole,
  sameWords,
  withoutSaid,
  wordingBytes,
} from '../../src/core/routing-memory.ts';

describe('routing memory', () => {
  it('keeps one copy of a wording retrieval reads the same, with its latest time', () => {
    const memory = mergeMemory(
      [{ text: 'Book a flight to Paris', at: 1 }],
      [{ text: 'book a flight to paris!', at: 5 }],
      DEFAULT_MEMORY_BYTES,
    );
    expect(memory).toEqual([{ text: 'book a flight to paris!', at: 5 }]);
  });

  it('stays within the byte budget', () => {
    const incoming = Array.from({ length: 60 }, (_, i) => ({ text: `find hotel number word${i} tonight`, at: i }));
    const memory = mergeMemory([], incoming, 200);
    expect(memory.reduce((s, w) => s + wordingBytes(w.text), 0)).toBeLessThanOrEqual(200);
    expect(memory.length).toBeGreaterThan(0);
  });

  it('drops a wording that adds no new word before an older one that does', () => {
    const memory = mergeMemory(
      [
        { text: 'convert currency rates', at: 1 },
        { text: 'exchange money', at: 2 },
      ],
      [{ text: 'currency rates', at: 3 }],
      wordingBytes('convert currency rates') + wordingBytes('exchange money'),
    );
    expect(memory.map((w) => w.text)).toEqual(['exchange money', 'convert currency rates']);
  });

  it('breaks a tie in coverage by dropping the oldest', () => {
    const memory = mergeMemory(
      [
        { text: 'alpha', at: 1 },
        { text: 'bravo', at: 2 },
      ],
      [{ text: 'delta', at: 3 }],
      10,
    );
    expect(memory.map((w) => w.text)).toEqual(['delta', 'bravo']);
  });

  it('gives each tool the setting, or its share of what an agent may remember when the toolbox is large', () => {
    expect(memoryBudget(DEFAULT_MEMORY_BYTES, 199)).toBe(16_384);
    expect(memoryBudget(DEFAULT_MEMORY_BYTES, 10_000)).toBe(1024);
    expect(memoryBudget(512, 10_000)).toBe(512);
    expect(memoryBudget(0, 3)).toBe(0);
    expect(memoryBudget(DEFAULT_MEMORY_BYTES, 2_000) * 2_000).toBeLessThanOrEqual(AGENT_MEMORY_BYTES);
  });

  it('never keeps a wording longer than the budget and refuses a bad budget', () => {
    expect(mergeMemory([], [{ text: 'a very long wording indeed', at: 1 }], 5)).toEqual([]);
    expect(() => mergeMemory([], [], -1)).toThrow(RangeError);
  });

  describe('a wording routes once served in two conversations', () => {
    const served = (text: string, at: number, ...conversations: string[]) => ({ text, at, conversations });

    it('waits, pending, after one conversation, and routes after a second in a later merge', () => {
      const once = mergeMemory([], [served('book a flight to Lisbon', 1, 'c1')], DEFAULT_MEMORY_BYTES, 2);
      expect(once).toEqual([{ text: 'book a flight to Lisbon', at: 1, pending: ['c1'] }]);
      expect(routedWordings(once)).toEqual([]);
      const again = mergeMemory(once, [served('book a flight to Lisbon', 5, 'c1')], DEFAULT_MEMORY_BYTES, 2);
      expect(routedWordings(again)).toEqual([]);
      const twice = mergeMemory(once, [served('please book a flight to Lisbon now', 9, 'c2')], DEFAULT_MEMORY_BYTES, 2);
      expect(twice).toEqual([{ text: 'book a flight to Lisbon', at: 9 }]);
    });

    it('routes a wording at once when it says what a routed wording of the tool says', () => {
      const memory = mergeMemory(
        [{ text: 'check the weather forecast for the coast this weekend', at: 1 }],
        [
          served('please check the weather forecast for the coast this weekend, Ana', 2, 'c9'),
          served('send an invoice', 3, 'c9'),
        ],
        DEFAULT_MEMORY_BYTES,
        2,
      );
      expect(routedWordings(memory).map((w) => w.text)).toEqual([
        'please check the weather forecast for the coast this weekend, Ana',
        'check the weather forecast for the coast this weekend',
      ]);
      expect(memory.find((w) => w.text === 'send an invoice')?.pending).toEqual(['c9']);
    });

    it('lets no routed wording vouch for a request served together with other tools: it waits for its own conversations', () => {
      const routed = { text: 'book a flight to Rome for the weekend', at: 1 };
      const joined = 'book a flight to Rome for the weekend and count the words of this paragraph';
      const once = mergeMemory([routed], [{ ...served(joined, 2, 'c9'), together: true }], DEFAULT_MEMORY_BYTES, 2);
      expect(routedWordings(once)).toEqual([routed]);
      expect(once.find((w) => w.text === joined)?.pending).toEqual(['c9']);
      // Served alone, the same request is another way of asking what the tool serves.
      const alone = mergeMemory([routed], [served(joined, 2, 'c9')], DEFAULT_MEMORY_BYTES, 2);
      expect(routedWordings(alone).map((w) => w.text)).toEqual([joined, routed.text]);
      // Together again in a second conversation: now it routes.
      const twice = mergeMemory(once, [{ ...served(joined, 3, 'c10'), together: true }], DEFAULT_MEMORY_BYTES, 2);
      expect(routedWordings(twice).map((w) => w.text)).toEqual([joined, routed.text]);
    });

    it('keeps a request served together pending through later reviews that bring other wordings', () => {
      const routed = { text: 'book a flight to Rome for the weekend', at: 1 };
      const joined = 'book a flight to Rome for the weekend and count the words of this paragraph';
      const once = mergeMemory([routed], [{ ...served(joined, 2, 'c9'), together: true }], DEFAULT_MEMORY_BYTES, 2);
      const later = mergeMemory(once, [served('find cheap flights to Lisbon', 3, 'c11')], DEFAULT_MEMORY_BYTES, 2);
      expect(routedWordings(later)).toEqual([routed]);
      expect(later.find((w) => w.text === joined)).toEqual({ text: joined, at: 2, pending: ['c9'], together: true });
    });

    it('marks a wording every run of which was served together; a run of the tool alone saying it clears the mark', () => {
      const joined = 'book a flight to Rome for the weekend and count the words of this paragraph';
      const once = mergeMemory([], [{ ...served(joined, 1, 'c1'), together: true }], DEFAULT_MEMORY_BYTES, 2);
      expect(once).toEqual([{ text: joined, at: 1, pending: ['c1'], together: true }]);
      const again = mergeMemory(once, [{ ...served(joined, 2, 'c2'), together: true }], DEFAULT_MEMORY_BYTES, 2);
      expect(again).toEqual([{ text: joined, at: 2, together: true }]);
      const alone = mergeMemory(once, [served(joined, 3, 'c3')], DEFAULT_MEMORY_BYTES, 2);
      expect(alone).toEqual([{ text: joined, at: 3 }]);
    });

    it('keeps pending wordings within their own budget, the oldest going first, without touching routed ones', () => {
      const routed = { text: 'convert currency rates', at: 1 };
      const budget = wordingBytes(routed.text);
      const memory = mergeMemory(
        [routed],
        [served('translate text to french', 2, 'a'), served('summarise a pdf file', 3, 'b')],
        budget,
        2,
      );
      expect(memory).toEqual([routed, { text: 'summarise a pdf file', at: 3, pending: ['b'] }]);
    });
  });

  it('finds the tools whose claimed wordings say what a wording says, in either direction', () => {
    const claims = indexClaims([
      { tool: 'book_hotel', text: 'find me somewhere to sleep near the station' },
      { tool: 'get_weather', text: 'umbrella tomorrow' },
      { tool: 'send_email', text: 'email the invoice to the accountant' },
    ]);
    expect([...claims.claimants('please find me somewhere to sleep near the station tonight')]).toEqual(['book_hotel']);
    expect([...claims.claimants('do I need an umbrella tomorrow in Oslo')]).toEqual(['get_weather']);
    expect([...claims.claimants('book a table near the station')]).toEqual([]);
  });

  it('tells a request said whole from a part of it: a part of a request for two things says it, never all of it', () => {
    const joined = contentWords('book a flight to Rome and a hotel near the Colosseum');
    const part = contentWords('a hotel near the Colosseum');
    expect(sameWords(part, joined)).toBe(true);
    expect(sameWhole(part, joined)).toBe(false);
    expect(sameWhole(contentWords('please book a flight to Rome and a hotel near the Colosseum'), joined)).toBe(true);
    expect(sameWhole(contentWords(''), joined)).toBe(false);
  });

  it('leaves out, for a holder, a claimed request it served together with other tools: no contest', () => {
    const joined = 'book a flight to Rome and a hotel near the Colosseum';
    const claims = indexClaims([
      { tool: 'book_flight', text: joined, together: true },
      { tool: 'book_hotel', text: joined, together: true },
      { tool: 'book_taxi', text: 'book a flight to Rome' },
    ]);
    const ask = 'book a flight to Rome please';
    expect([...claims.claimants(ask)].sort()).toEqual(['book_flight', 'book_hotel', 'book_taxi']);
    // book_flight served the joined request together with book_hotel: book_hotel's copy is no
    // contest; book_taxi's wording is not one book_flight served together, so it still is.
    expect([...claims.claimants(ask, 'book_flight')].sort()).toEqual(['book_flight', 'book_taxi']);
    // A wording two tools each served alone stays contested for both.
    const apart = indexClaims([
      { tool: 'book_flight', text: joined },
      { tool: 'book_hotel', text: joined },
    ]);
    expect([...apart.claimants(ask, 'book_flight')].sort()).toEqual(['book_flight', 'book_hotel']);
  });

  it('finds every claimant that holding the wording against each claim finds, reading only claims that may say it', () => {
    // Wordings of 1 to 12 words from a small vocabulary, so that many overlap in part or in whole.
    const vocabulary =
      'flight hotel weather umbrella invoice station refund order parcel tonight city room email price'.split(' ');
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const wording = (): string =>
      Array.from({ length: 1 + next(12) }, () => vocabulary[next(vocabulary.length)]).join(' ');
    const claimed = Array.from({ length: 400 }, (_, i) => ({ tool: `tool_${i % 37}`, text: wording() }));
    const claims = indexClaims(claimed);
    let found = 0;
    for (let q = 0; q < 300; q++) {
      const text = wording();
      const mine = contentWords(text);
      const expected = new Set(claimed.filter((c) => sameWords(contentWords(c.text), mine)).map((c) => c.tool));
      expect(claims.claimants(text)).toEqual(expected);
      found += expected.size;
    }
    expect(found).toBeGreaterThan(300);
  });

  it('lets go of the wordings an example request says, in either direction, and keeps the rest', () => {
    const memory = [
      { text: 'find me somewhere to sleep near the station', at: 1 },
      { text: 'is it going to rain tomorrow', at: 2 },
    ];
    expect(withoutSaid(memory, ['please find me somewhere to sleep near the station tonight'])).toEqual([memory[1]]);
    expect(withoutSaid(memory, ['book a table near the station'])).toBe(memory);
  });

  it('keeps a mark of a conversation, not its id: the same id the same mark, another id another', () => {
    const mark = conversationMark('conv-ana.pereira@example.com');
    expect(mark).toMatch(/^[0-9a-f]{16}$/);
    expect(mark).not.toContain('ana');
    expect(conversationMark('conv-ana.pereira@example.com')).toBe(mark);
    expect(conversationMark('conv-2')).not.toBe(conversationMark('conv-3'));
  });
});
