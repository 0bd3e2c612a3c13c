import { describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/adapters/hash-embedder.ts';
import { companionsOf } from '../../src/core/companions.ts';
import { buildRoutingIndex, rankTools, routingDoc } from '../../src/core/routing.ts';
import { routedTool } from '../helpers/tools.ts';

const TRIP = [
  'book a flight to <value> and a hotel near the old town',
  'get me on a plane to <value> and find a room for three nights',
];

describe('companionsOf', () => {
  it('pairs tools whose memories share two wordings, picking the one sharing the most', () => {
    const memories = [
      [...TRIP, 'fly me to Oslo'],
      [...TRIP, 'a room near the station'],
      [TRIP[0] as string, 'rent a car at the airport'],
      ['what is the weather'],
    ];
    const companions = companionsOf(memories);
    expect(companions.get(0)).toBe(1);
    expect(companions.get(1)).toBe(0);
    // One shared wording is one request, not a habit.
    expect(companions.has(2)).toBe(false);
    expect(companions.has(3)).toBe(false);
  });

  it('reads wordings as retrieval does: case and punctuation do not make two wordings', () => {
    const companions = companionsOf([
      ['Book a flight to <value>, and a hotel!', 'plane and room please'],
      ['book a flight to <value> and a hotel', 'Plane and room, please.'],
    ]);
    expect(companions.get(0)).toBe(1);
  });
});

const TOOLS = [
  {
    name: 'book_flight',
    description: 'Book a seat on a flight to a city.',
    memory: [...TRIP, 'fly me to Oslo on Friday'],
  },
  {
    name: 'book_hotel',
    description: 'Rooms in hotels for a number of nights.',
    memory: [...TRIP, 'a double room for two nights'],
  },
  { name: 'flight_status', description: 'Departure and arrival status of a flight.', memory: [] },
  { name: 'cancel_flight', description: 'Cancel a booked flight and refund the fare.', memory: [] },
  { name: 'flight_checkin', description: 'Check in for a flight and get a boarding pass.', memory: [] },
  { name: 'seat_map', description: 'Which places are still free on a plane.', memory: [] },
];

function index(withMemory: boolean) {
  return buildRoutingIndex(
    TOOLS.map((t) => {
      const tool = routedTool(t.name, t.description, withMemory ? t.memory : []);
      // The vector of the head alone: this test is about the companion, not about memory's words.
      return { ...routingDoc(tool, hashEmbed(t.description, 256)), text: `${t.name} ${t.description}` };
    }),
  );
}

const rank = (text: string, k: number, withMemory = true) =>
  rankTools(index(withMemory), { text, vector: hashEmbed(text, 256) }, k).map((t) => t.name);

describe('the first tool’s companion is offered with it', () => {
  const request = 'a seat on a flight to Lima on the 3rd and sort out the rest of the trip';

  it('takes the last place when the request asks for several things and k leaves room', () => {
    const without = rank(request, 3, false);
    expect(without[0]).toBe('book_flight');
    expect(without).not.toContain('book_hotel');
    const withCompanion = rank(request, 3);
    expect(withCompanion).toEqual([without[0], without[1], 'book_hotel']);
  });

  it('changes nothing for a request asking one thing, or when k has no room beside the runner-up', () => {
    const single = 'a seat on a flight to Lima on the 3rd, by the window';
    expect(rank(single, 3)).toEqual(rank(single, 3, false));
    expect(rank(request, 2)).toEqual(rank(request, 2, false));
  });
});
