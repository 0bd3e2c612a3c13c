import { describe, expect, it } from 'vitest';
import { contentWords, normalize, splitIdentifier, stem, tokenize } from '../../src/core/text.ts';

describe('normalize', () => {
  it('lower-cases, strips accents and apostrophes, and collapses punctuation to single spaces', () => {
    expect(normalize("  Café's   Menu — what's NEW?! ")).toBe('cafes menu whats new');
  });

  it('keeps digits and letters of other scripts', () => {
    expect(normalize('Order #CW-1234 für Zürich')).toBe('order cw 1234 fur zurich');
  });
});

describe('stem', () => {
  it('brings plural, -ing and -ed forms of a word together', () => {
    expect(stem('cities')).toBe(stem('city'));
    expect(stem('movies')).toBe(stem('movie'));
    expect(stem('booking')).toBe(stem('book'));
    expect(stem('booked')).toBe(stem('books'));
    expect(stem('planned')).toBe(stem('plan'));
    expect(stem('making')).toBe(stem('make'));
    expect(stem('searches')).toBe(stem('search'));
  });

  it('leaves short words, numbers and words that only look suffixed alone', () => {
    for (const word of ['bus', 'class', 'analysis', 'string', 'need', '2024']) expect(stem(word)).toBe(word);
  });
});

describe('tokenize', () => {
  it('drops stopwords and request filler, stems the rest, keeps order and repeats', () => {
    expect(tokenize('Can you please find me the weather forecasts for Paris, Paris!')).toEqual([
      'weather',
      'forecast',
      'paris',
      'paris',
    ]);
  });

  it('gives nothing for an empty or all-stopword text', () => {
    expect(tokenize('')).toEqual([]);
    expect(tokenize('Could you help me with this?')).toEqual([]);
  });
});

describe('contentWords', () => {
  it('is the set of stems of three characters or more', () => {
    expect(contentWords('Book a flight to NY on the 3rd of June, booking flights')).toEqual(
      new Set(['book', 'flight', '3rd', 'jun']),
    );
  });

  it('makes two wordings of one request share a word, and unrelated ones not', () => {
    const a = contentWords('Show me hotels in Rome');
    const b = contentWords('I am looking for a hotel near the Colosseum');
    const c = contentWords('What is the stock price of Apple?');
    expect([...a].some((w) => b.has(w))).toBe(true);
    expect([...a].some((w) => c.has(w))).toBe(false);
  });
});

describe('splitIdentifier', () => {
  it('splits snake, camel, Pascal and acronym names into words', () => {
    const names = {
      get_weather: 'get weather',
      getWeather: 'get Weather',
      SummarizeAnything_pr: 'Summarize Anything pr',
      PDFReader: 'PDF Reader',
      'crm/contacts.search-v2': 'crm contacts search v2',
    };
    for (const [name, words] of Object.entries(names)) expect(splitIdentifier(name)).toBe(words);
  });
});
