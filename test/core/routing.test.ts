import { describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/adapters/hash-embedder.ts';
import { buildLexicalIndex } from '../../src/core/lexical.ts';
import { buildRoutingIndex, embeddingText, namePhrases, rankTools, type RoutingDoc } from '../../src/core/routing.ts';

const TOOLS = [
  { name: 'get_weather', description: 'Current weather and the forecast for a city.' },
  { name: 'convertCurrency', description: 'Convert an amount of money between currencies at todays rate.' },
  { name: 'SearchFlights', description: 'Find flights between two airports on a date.' },
  { name: 'translate_text', description: 'Translate text from one language into another.' },
  { name: 'stock_quote', description: 'Latest share price of a listed company.' },
  { name: 'recipe_finder', description: 'Recipes by ingredient, cuisine or diet.' },
];

function docs(tools = TOOLS): RoutingDoc[] {
  return tools.map((t) => {
    const text = embeddingText({
      name: t.name,
      description: null,
      docstring: t.description,
      parameters: {},
      examples: [],
    });
    return { name: t.name, text, vector: hashEmbed(text, 512) };
  });
}

function query(text: string) {
  return { text, vector: hashEmbed(text, 512) };
}

describe('embeddingText', () => {
  const tool = {
    name: 'getWeather',
    description: null,
    docstring: 'Weather for a city.',
    parameters: { type: 'object', properties: { city_name: { type: 'string' }, units: { type: 'string' } } },
    examples: [{ text: 'is it raining in Oslo' }, { text: 'forecast for Lima' }],
  };

  it('is the split name, the docstring, the argument names and every example, one per line', () => {
    expect(embeddingText(tool)).toBe(
      'get Weather\nWeather for a city.\ncity name, units\nis it raining in Oslo\nforecast for Lima',
    );
  });

  it('uses the augmented description instead of the docstring when there is one', () => {
    expect(embeddingText({ ...tool, description: 'Weather and forecasts.' })).toContain('Weather and forecasts.');
    expect(embeddingText({ ...tool, description: 'Weather and forecasts.' })).not.toContain('Weather for a city.');
  });

  it('skips empty parts and a schema without properties', () => {
    expect(embeddingText({ name: 'ping', description: null, docstring: '', parameters: {}, examples: [] })).toBe(
      'ping',
    );
    expect(embeddingText({ ...tool, parameters: { properties: ['not', 'an', 'object'] }, examples: [] })).toBe(
      'get Weather\nWeather for a city.',
    );
  });
});

describe('namePhrases', () => {
  it('names a tool by its split words and its identifier as one word, never by one ordinary word', () => {
    expect(namePhrases('get_weather')).toEqual(['get weather', 'getweather']);
    expect(namePhrases('PDFReader')).toEqual(['pdf reader', 'pdfreader']);
    expect(namePhrases('search')).toEqual([]);
  });
});

describe('rankTools', () => {
  const index = buildRoutingIndex(docs());

  it('ranks first the tool that shares words with the request', () => {
    expect(rankTools(index, query('will it rain in Lisbon? weather please'), 3)[0]?.name).toBe('get_weather');
    expect(rankTools(index, query('how much is 50 dollars in euros, convert the money'), 3)[0]?.name).toBe(
      'convertCurrency',
    );
    expect(rankTools(index, query('cheap flights from JFK to LAX'), 3)[0]?.name).toBe('SearchFlights');
  });

  it('matches words of a split tool name', () => {
    const index2 = buildRoutingIndex(
      docs([{ name: 'SummarizeAnything_pr', description: 'Short notes for a link.' }, ...TOOLS]),
    );
    expect(rankTools(index2, query('summarize this article for me'), 1)[0]?.name).toBe('SummarizeAnything_pr');
  });

  it('returns k tools, ranks 1-based, scores descending', () => {
    const ranked = rankTools(index, query('share price of Apple'), 4);
    expect(ranked.map((t) => t.rank)).toEqual([1, 2, 3, 4]);
    expect(ranked[0]?.name).toBe('stock_quote');
    for (let i = 1; i < ranked.length; i++)
      expect(ranked[i - 1]?.score).toBeGreaterThanOrEqual(ranked[i]?.score ?? Infinity);
  });

  it('returns every tool when k is larger than the toolbox, and nothing for an empty toolbox or k 0', () => {
    expect(rankTools(index, query('weather'), 50)).toHaveLength(TOOLS.length);
    expect(rankTools(buildRoutingIndex([]), query('weather'), 5)).toEqual([]);
    expect(rankTools(index, query('weather'), 0)).toEqual([]);
  });

  it('is deterministic and breaks ties by name (a request with no content word scores every tool 0)', () => {
    const a = rankTools(index, query('could you please help me with this'), 6);
    expect(a).toEqual(rankTools(index, query('could you please help me with this'), 6));
    expect(a.map((t) => t.name)).toEqual([...TOOLS.map((t) => t.name)].sort());
    expect(a.every((t) => t.score === 0)).toBe(true);
  });

  it('uses vector matches from an index instead of the scan, ignoring names it does not know', () => {
    const ranked = rankTools(index, query('unrelated words'), 3, [
      { id: 'translate_text', score: 0.9 },
      { id: 'removed_tool', score: 0.95 },
      { id: 'recipe_finder', score: 0.5 },
    ]);
    expect(ranked.map((t) => t.name).slice(0, 2)).toEqual(['translate_text', 'recipe_finder']);
    expect(ranked[0]).toEqual({ name: 'translate_text', rank: 1, score: expect.closeTo(0.9, 5) });
  });

  it('fills up to k with the tools the index did not name, after those it did, so k tools come back', () => {
    const ranked = rankTools(index, query('unrelated words'), 3, [{ id: 'recipe_finder', score: 0.5 }]);
    expect(ranked.map((t) => t.rank)).toEqual([1, 2, 3]);
    expect(ranked[0]?.name).toBe('recipe_finder');
    // Nothing is known of the others but that they scored no higher: the answer's lowest score, by name.
    const others = ranked.slice(1);
    expect(others.map((t) => t.score)).toEqual([0.5, 0.5]);
    expect(others.map((t) => t.name)).toEqual([...others.map((t) => t.name)].sort());
    expect(rankTools(index, query('unrelated words'), 3, [])).toHaveLength(3);
  });

  it('still offers a tool BM25 finds when the vector matches leave it out', () => {
    const ranked = rankTools(index, query('recipes with tomato'), 2, [{ id: 'translate_text', score: 0.2 }]);
    expect(ranked.map((t) => t.name)).toContain('recipe_finder');
  });

  it('refuses vectors of different lengths in one toolbox', () => {
    const [first, second] = docs();
    if (first === undefined || second === undefined) throw new Error('fixture');
    expect(() => buildRoutingIndex([first, { ...second, vector: new Float32Array(8) }])).toThrow(RangeError);
  });
});

describe('buildLexicalIndex (BM25)', () => {
  const lexical = buildLexicalIndex([
    { id: 'weather', text: 'weather forecast for a city' },
    { id: 'news', text: 'city news and local events in a city' },
    { id: 'stocks', text: 'share prices' },
  ]);

  it('scores only the tools that share a word, the rarer word counting more', () => {
    const scores = lexical.score('forecast for my city');
    expect([...scores.keys()].sort()).toEqual(['news', 'weather']);
    expect(scores.get('weather')).toBeGreaterThan(scores.get('news') ?? Infinity);
  });

  it('matches word forms through the stemmer and returns at most n hits', () => {
    expect(lexical.top('forecasting cities', 1)).toEqual([{ id: 'weather', score: expect.any(Number) }]);
    expect(lexical.top('translate a poem', 5)).toEqual([]);
    expect(lexical.top('share price', 0)).toEqual([]);
  });

  it('counts its distinct words and its (word, tool) postings, a word repeated in a tool once', () => {
    // weather forecast citi | citi new local event (citi twice) | shar pric
    expect({ terms: lexical.terms, postings: lexical.postings }).toEqual({ terms: 8, postings: 9 });
  });
});
