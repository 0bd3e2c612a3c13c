import { describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/adapters/hash-embedder.ts';
import { companionsOf, companionTable } from '../../src/core/companions.ts';
import { findDisplaced } from '../../src/core/learning.ts';
import { buildLexicalIndex } from '../../src/core/lexical.ts';
import {
  buildRoutingIndex,
  rankTools,
  routingDoc,
  vectorScoreAt,
  vectorScores,
  withDoc,
  type RoutingDoc,
} from '../../src/core/routing.ts';
import { routedTool } from '../helpers/tools.ts';

// The displacement re-check changes one tool at a time in a toolbox of up to 10,000: the index it
// ranks with is the previous one with that tool replaced. These tests hold the replacement to what
// building the changed toolbox from scratch answers, so the re-check predicts `/route` exactly.

const DIMENSIONS = 256;

interface Tool {
  name: string;
  description: string;
  memory: string[];
}

const TOOLS: Tool[] = [
  {
    name: 'book_flight',
    description: 'Book a seat on a flight to a city.',
    memory: ['fly me to Oslo on Friday', 'book a flight and a hotel in Rome', 'two seats to Paris in May'],
  },
  {
    name: 'book_hotel',
    description: 'Rooms in hotels for a number of nights.',
    memory: ['book a flight and a hotel in Rome', 'two seats to Paris in May', 'a double room for two nights'],
  },
  { name: 'flight_status', description: 'Departure and arrival status of a flight.', memory: ['is my plane late'] },
  { name: 'cancel_flight', description: 'Cancel a booked flight and refund the fare.', memory: [] },
  { name: 'weather_now', description: 'Current weather and forecast for a city.', memory: ['will it rain in Oslo'] },
  { name: 'currency_rates', description: 'Exchange rates between currencies.', memory: [] },
];

function doc(t: Tool): RoutingDoc {
  return routingDoc(
    routedTool(t.name, t.description, t.memory),
    hashEmbed(`${t.name} ${t.description} ${t.memory.join(' ')}`, DIMENSIONS),
  );
}

const QUERIES = [
  'book a flight and a hotel in Rome',
  'will it rain in Oslo tomorrow',
  'refund my cancelled flight',
  'how many dollars for 100 euros',
  'a room for two nights near the station',
  'is the plane from Oslo late',
  'weather forecast for Paris and a hotel',
];

/** Every tool changed in turn: memory emptied, grown by new words, and the description rewritten. */
const CHANGES: { name: string; change: (t: Tool) => Tool }[] = [
  { name: 'memory emptied', change: (t) => ({ ...t, memory: [] }) },
  {
    name: 'memory grown with words no tool had',
    change: (t) => ({ ...t, memory: [...t.memory, 'book a flight and a hotel in Rome', 'zanzibar snorkelling trip'] }),
  },
  { name: 'description rewritten', change: (t) => ({ ...t, description: 'Rates of exchange for a city trip.' }) },
];

describe('replacing one tool in a built index', () => {
  const before = buildRoutingIndex(TOOLS.map(doc));

  for (const { name, change } of CHANGES) {
    it(`ranks every request as a fresh build does (${name})`, () => {
      TOOLS.forEach((tool, position) => {
        const changed = TOOLS.map((t, i) => (i === position ? change(t) : t));
        const rebuilt = buildRoutingIndex(changed.map(doc));
        const next = doc(change(tool));
        const replaced = withDoc(before, next, companionTable(changed.map((t) => t.memory)).companions);
        expect(replaced.lexical.terms).toBe(rebuilt.lexical.terms);
        expect(replaced.lexical.postings).toBe(rebuilt.lexical.postings);
        expect([...replaced.companions].sort()).toEqual([...rebuilt.companions].sort());
        for (const text of QUERIES) {
          const query = { text, vector: hashEmbed(text, DIMENSIONS) };
          expect(replaced.lexical.score(text)).toEqual(rebuilt.lexical.score(text));
          expect(rankTools(replaced, query, 3)).toEqual(rankTools(rebuilt, query, 3));
          expect(rankTools(replaced, query, TOOLS.length)).toEqual(rankTools(rebuilt, query, TOOLS.length));
        }
      });
    });
  }

  it('leaves the index it started from as it was', () => {
    const fresh = buildRoutingIndex(TOOLS.map(doc));
    withDoc(before, doc({ ...(TOOLS[0] as Tool), memory: [] }), new Map());
    for (const text of QUERIES) {
      const query = { text, vector: hashEmbed(text, DIMENSIONS) };
      expect(rankTools(before, query, TOOLS.length)).toEqual(rankTools(fresh, query, TOOLS.length));
    }
  });

  it('refuses a tool it does not hold', () => {
    expect(() => withDoc(before, doc({ name: 'unknown_tool', description: 'x', memory: [] }), new Map())).toThrow(
      RangeError,
    );
  });
});

describe('a lexical index with one text replaced', () => {
  it('scores as the index built with that text, down to a word no document holds any more', () => {
    const docs = [
      { id: 'a', text: 'weather forecast for a city' },
      { id: 'b', text: 'exchange rates zanzibar' },
      { id: 'c', text: 'weather alerts and storms' },
    ];
    const built = buildLexicalIndex(docs);
    const replaced = built.withText(1, 'weather weather rates');
    const rebuilt = buildLexicalIndex(docs.map((d, i) => (i === 1 ? { ...d, text: 'weather weather rates' } : d)));
    expect(replaced.terms).toBe(rebuilt.terms);
    for (const q of ['weather', 'zanzibar rates', 'storms city', 'exchange']) {
      expect(replaced.score(q)).toEqual(rebuilt.score(q));
      expect(replaced.top(q, 3)).toEqual(rebuilt.top(q, 3));
    }
    expect(replaced.score('zanzibar').size).toBe(0);
    expect(built.score('zanzibar').get('b')).toBeGreaterThan(0);
  });
});

describe('a companion table with one memory replaced', () => {
  const memories = TOOLS.map((t) => t.memory);

  it('answers the companions of the changed memories', () => {
    const table = companionTable(memories);
    expect(table.companions).toEqual(companionsOf(memories));
    const trials: string[][][] = [
      memories.map((m, i) => (i === 1 ? [] : m)),
      memories.map((m, i) => (i === 4 ? [...m, 'book a flight and a hotel in Rome', 'two seats to Paris in May'] : m)),
      memories.map((m, i) => (i === 0 ? ['is my plane late', 'will it rain in Oslo'] : m)),
    ];
    for (const changed of trials) {
      const position = changed.findIndex((m, i) => m !== memories[i]);
      expect(table.with(position, changed[position] ?? []).companions).toEqual(companionsOf(changed));
    }
    // Two changes in a row, as the applies of one review make them.
    const twice = memories.map((m, i) => (i === 0 ? [] : i === 2 ? [...(memories[1] ?? [])] : m));
    expect(table.with(0, []).with(2, memories[1] ?? []).companions).toEqual(companionsOf(twice));
  });
});

describe('kept vector scores', () => {
  it('score one tool exactly as the scan of every tool does', () => {
    const index = buildRoutingIndex(TOOLS.map(doc));
    for (const text of QUERIES) {
      const vector = hashEmbed(text, DIMENSIONS);
      const all = vectorScores(index, vector);
      index.names.forEach((_, position) => {
        expect(vectorScoreAt(index, vector, position)).toBe(all[position]);
      });
    }
  });

  it('find the same displacements as ranking from scratch', () => {
    const before = buildRoutingIndex(TOOLS.map(doc));
    const pushy: Tool = {
      name: 'cancel_flight',
      description: 'Cancel a booked flight and refund the fare.',
      memory: ['will it rain in Oslo', 'book a flight and a hotel in Rome', 'is my plane late'],
    };
    const changed = TOOLS.map((t) => (t.name === pushy.name ? pushy : t));
    const after = withDoc(before, doc(pushy), companionTable(changed.map((t) => t.memory)).companions);
    const requests = QUERIES.map((text, i) => {
      const vector = hashEmbed(text, DIMENSIONS);
      const served_by = rankTools(before, { text, vector }, 1)[0]?.name ?? '';
      return { text, shown: `request ${i}`, vector, served_by, dense: vectorScores(before, vector) };
    });
    const plain = findDisplaced(
      before,
      buildRoutingIndex(changed.map(doc)),
      requests.map(({ dense: _dense, ...r }) => r),
      1,
    );
    expect(plain.length).toBeGreaterThan(0);
    expect(findDisplaced(before, after, requests, 1, pushy.name)).toEqual(plain);
  });
});
