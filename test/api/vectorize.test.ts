/**
 * Routing with a Vectorize binding, through HTTP on real local D1, with a stand-in that behaves like
 * Vectorize (test/fixtures/vectorize-stand-in.ts): the isolate's snapshot holds no vectors, dense
 * candidates come from the binding, the ranking is the exact index's once upserts are visible,
 * namespaces stay apart, and an outage of the index costs ranking quality, never a turn.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { services } from '../../src/env.ts';
import { routingSnapshot } from '../../src/services/route-serving.ts';
import { VectorizeStandIn } from '../fixtures/vectorize-stand-in.ts';
import { send } from '../security/fixtures.ts';
import { logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const TOPICS: readonly (readonly [string, string])[] = [
  ['get_weather', 'Current weather and the forecast for a city: temperature, rain and wind.'],
  ['send_email', 'Send an email message to a recipient with a subject and a body.'],
  ['convert_currency', 'Convert an amount of money from one currency to another at the current rate.'],
  ['book_flight', 'Book a flight ticket between two airports on a given date.'],
  ['find_restaurant', 'Find restaurants nearby by cuisine, price and opening hours.'],
  ['translate_text', 'Translate a text from one language into another.'],
  ['track_parcel', 'Track a parcel or package delivery by its tracking number.'],
  ['stock_quote', 'Latest share price and market data for a stock ticker.'],
  ['set_reminder', 'Set a reminder or an alarm at a date and time.'],
  ['play_music', 'Play a song, an album or a playlist by an artist.'],
  ['search_recipes', 'Search cooking recipes by ingredient, dish or diet.'],
  ['news_headlines', 'Top news headlines by topic or country.'],
  ['calculate_math', 'Evaluate a math expression or solve an equation.'],
  ['hotel_booking', 'Book a hotel room in a city for some nights.'],
  ['movie_showtimes', 'Cinema showtimes for a movie near a location.'],
  ['sports_scores', 'Live scores and results of football, basketball and tennis matches.'],
  ['define_word', 'Dictionary definition, synonyms and pronunciation of a word.'],
  ['currency_history', 'Historical exchange rates of a currency pair over time.'],
  ['traffic_status', 'Road traffic and travel time for a route by car.'],
  ['pay_invoice', 'Pay an open invoice from the company bank account.'],
];
const REQUESTS = [
  'will it rain in Lyon tomorrow',
  'how many yen is 40 euros',
  'email my landlord about the broken heater',
  'where is my package 1Z999',
  'a cheap flight to Lisbon next Friday',
  'what does ephemeral mean',
  'who won the match last night',
  'remind me to call mum at 6pm',
  'how has the dollar moved against the pound this year',
  'is the motorway jammed right now',
];

const dims = services(env).embedder.dimensions;

async function registered(
  e: typeof env,
  prefix: string,
  tools: readonly (readonly [string, string])[] = TOPICS,
): Promise<string> {
  const agent = agentId(prefix);
  const res = await send(e, 'PUT', `/v1/agents/${agent}/tools`, { body: { tools: tools.map(([n, d]) => tool(n, d)) } });
  expect(res.status).toBe(200);
  return agent;
}

const ranked = (body: { tools: { name: string; rank: number; score: number }[] }) =>
  body.tools.map((t) => [t.name, t.rank, Number(t.score.toFixed(6))]);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('routing with a Vectorize binding', () => {
  it('keeps no vector in the snapshot, answers lexically until upserts are visible, then ranks as the exact index', async () => {
    const standIn = new VectorizeStandIn(dims);
    const bound = { ...env, VECTORIZE: standIn as unknown as VectorizeIndex };
    const agent = await registered(bound, 'vec');

    const early = await send(bound, 'POST', `/v1/agents/${agent}/route`, { body: { request: REQUESTS[0], k: 5 } });
    expect(early.status).toBe(200);
    // Nothing visible yet: the lexical side alone still finds the weather tool.
    expect(early.body.tools[0].name).toBe('get_weather');
    expect(standIn.queries.at(-1)).toEqual({ namespace: agent, topK: 100 });

    standIn.flush();
    expect(standIn.visibleIn(agent)).toHaveLength(TOPICS.length);
    for (const request of REQUESTS) {
      const withIndex = await send(bound, 'POST', `/v1/agents/${agent}/route`, { body: { request, k: 5 } });
      const exact = await api('POST', `/v1/agents/${agent}/route`, { body: { request, k: 5 } });
      expect(withIndex.status).toBe(200);
      expect(ranked(withIndex.body), request).toEqual(ranked(exact.body));
    }

    const vectorless = await routingSnapshot(services(bound), agent);
    const exact = await routingSnapshot(services(env), agent);
    expect([vectorless.index.dimensions, vectorless.index.matrix.byteLength]).toEqual([0, 0]);
    expect(exact.index.matrix.byteLength).toBe(TOPICS.length * dims * 4);
    expect(vectorless.bytes).toBe(exact.bytes - exact.index.matrix.byteLength);
  });

  it('keeps two agents apart: a tool name both have is two vectors, and deleting one agent removes only its own', async () => {
    const standIn = new VectorizeStandIn(dims);
    const bound = { ...env, VECTORIZE: standIn as unknown as VectorizeIndex };
    const a = await registered(bound, 'vec-a', TOPICS.slice(0, 3));
    const b = await registered(bound, 'vec-b', [
      ['get_weather', 'Weather on Mars from the rover station.'],
      ['pay_invoice', 'Pay an open invoice.'],
    ]);
    standIn.flush();
    expect(standIn.visibleIn(a).sort()).toEqual([`${a}/convert_currency`, `${a}/get_weather`, `${a}/send_email`]);
    expect(standIn.visibleIn(b).sort()).toEqual([`${b}/get_weather`, `${b}/pay_invoice`]);

    const routed = await send(bound, 'POST', `/v1/agents/${b}/route`, { body: { request: 'email the team', k: 5 } });
    expect(routed.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(['get_weather', 'pay_invoice']);

    expect((await send(bound, 'DELETE', `/v1/agents/${b}`)).status).toBe(204);
    standIn.flush();
    expect(standIn.visibleIn(b)).toEqual([]);
    expect(standIn.visibleIn(a)).toHaveLength(3);
  });

  it('goes on with the lexical ranking when the index fails, logs the failure, and loses no turn', async () => {
    const standIn = new VectorizeStandIn(dims);
    const bound = { ...env, VECTORIZE: standIn as unknown as VectorizeIndex };
    const agent = await registered(bound, 'vec-down');
    standIn.flush();
    standIn.failWith = new Error('VECTOR_QUERY_ERROR: upstream unavailable');
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const res = await send(bound, 'POST', `/v1/agents/${agent}/route`, {
      body: { request: 'convert 40 euros to yen', k: 3 },
    });
    expect(res.status).toBe(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toHaveLength(3);
    expect(res.body.tools[0].name).toBe('convert_currency');
    // No word in common with any tool and no dense side: still k tools, never an empty list.
    const blind = await send(bound, 'POST', `/v1/agents/${agent}/route`, { body: { request: 'yen?', k: 3 } });
    expect(blind.body.tools).toHaveLength(3);
    const lines = logged.mock.calls.map((c) => JSON.parse(String(c[0])));
    expect(lines).toContainEqual({
      level: 'error',
      event: 'vector_index_failed',
      agent,
      error: 'VECTOR_QUERY_ERROR: upstream unavailable',
    });
    const turn = await logDb(agent)
      .prepare('SELECT offered FROM turns WHERE agent = ?1 AND turn_id = ?2')
      .bind(agent, res.body.turn_id)
      .first<{ offered: string }>();
    expect(JSON.parse(turn?.offered ?? '[]').map((t: { name: string }) => t.name)).toEqual(
      res.body.tools.map((t: { name: string }) => t.name),
    );
  });
});
