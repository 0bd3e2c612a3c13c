import { describe, expect, it } from 'vitest';
import { DEFAULT_MEMORY_BYTES, mergeMemory, wordingBytes } from '../../src/core/routing-memory.ts';

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

  it('never keeps a wording longer than the budget and refuses a bad budget', () => {
    expect(mergeMemory([], [{ text: 'a very long wording indeed', at: 1 }], 5)).toEqual([]);
    expect(() => mergeMemory([], [], -1)).toThrow(RangeError);
  });
});
