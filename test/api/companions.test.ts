/**
 * Tools used together, through HTTP on real local D1: two tools that served two requests together,
 * each in two conversations, are each remembered with those wordings (routing memory), which makes them
 * companions; a later request that asks for several things and ranks one first is offered the other
 * too. A request asking one thing is not, and undoing the memory undoes the companion.
 */
import { describe, expect, it } from 'vitest';
import { agentId, api, servedTogether } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const TOOLS = [
  tool('book_flight', 'Book a seat on a flight to a city.', { city: { type: 'string' } }),
  tool('book_hotel', 'Rooms in hotels for a number of nights.', { city: { type: 'string' } }),
  tool('hotel_reviews', 'Reviews of hotel rooms by guests after their nights.', { hotel: { type: 'string' } }),
  tool('cancel_hotel', 'Cancel hotel rooms booked for some nights.', { booking: { type: 'string' } }),
  tool('hotel_amenities', 'What hotel rooms offer: wifi, breakfast, parking.', { hotel: { type: 'string' } }),
  tool('get_weather', 'Current weather and forecast for a city.', { city: { type: 'string' } }),
];

/** A request served by book_flight and book_hotel together, in its own conversation. */
const servedByBoth = (agent: string, conversation: string, request: string) =>
  servedTogether(agent, conversation, request, ['book_flight', 'book_hotel'], { city: 'Rome' });

async function offered(agent: string, request: string): Promise<string[]> {
  const res = await api('POST', `/v1/agents/${agent}/route`, { body: { request, k: 3 } });
  expect(res.status).toBe(200);
  return (res.body.tools as { name: string }[]).map((t) => t.name);
}

const JOINED = 'a hotel room in Lima for three nights and whatever else the trip needs';
const SINGLE = 'a hotel room in Lima for three nights, whatever else the trip needs';

describe('tools used together', () => {
  it('offers the first tool’s companion to a request asking for several things, until the memory is undone', async () => {
    const agent = agentId('companions');
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
    expect(await offered(agent, JOINED)).not.toContain('book_flight');

    // Each wording in two conversations, reviewed after each (a wording routes from two; one is only
    // pending): the other tool's pending copy of a request they served together contests nothing.
    const FLIGHT_HOTEL = 'book a flight to Rome and a hotel near the station';
    const PLANE_ROOM = 'get me on a plane to Oslo and find a room for two nights';
    for (const [first, second] of [
      ['c1', 'c2'],
      ['c3', 'c4'],
    ] as const) {
      await servedByBoth(agent, first, FLIGHT_HOTEL);
      await servedByBoth(agent, second, PLANE_ROOM);
      const review = await api('POST', `/v1/agents/${agent}/reviews`, { body: {} });
      expect(review.status).toBe(200);
      const remembered = (review.body.memory as { tool: string; status: string; memory: { added: string[] } }[]).map(
        (m) => [m.tool, m.status, m.memory.added.length],
      );
      expect(remembered.sort()).toEqual([
        ['book_flight', 'applied', 2],
        ['book_hotel', 'applied', 2],
      ]);
    }

    const joined = await offered(agent, JOINED);
    expect(joined[0]).toBe('book_hotel');
    expect(joined).toContain('book_flight');
    // The same request asking one thing: memory's words alone do not bring the flight in.
    expect(await offered(agent, SINGLE)).not.toContain('book_flight');

    // Undoing book_flight's memory leaves the two tools no shared wording: no companion.
    const undone = await api('POST', `/v1/agents/${agent}/tools/book_flight/undo`, { body: { approved_by: 'op' } });
    expect(undone.status).toBe(200);
    expect(await offered(agent, JOINED)).not.toContain('book_flight');
  });
});
