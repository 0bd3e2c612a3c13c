import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { agentId } from '../helpers/requests.ts';

const stub = (name: string) => env.AGENTS.get(env.AGENTS.idFromName(name));

describe('AgentObject.countTurns (/route counts a group of turns in one call)', () => {
  it('counts exactly as the same turns sent one countOffers call at a time', async () => {
    const one = stub(agentId('offers-one'));
    const many = stub(agentId('offers-many'));
    for (const s of [one, many]) await s.toolsRegistered(['weather', 'email']);
    await one.countOffers(['weather']);
    await many.countOffers(['weather']);
    // "news" is first offered by the second turn of the group, "maps" by the third; a repeat in a turn counts once.
    const turns = [['weather', 'email'], ['news', 'weather'], ['maps', 'news', 'news'], ['email']];
    for (const t of turns) await one.countOffers(t);
    await many.countTurns(turns);
    const [a, b] = [await one.offers(), await many.offers()];
    expect(b).toEqual(a);
    // A tool's window opens at the routed turn that first offered it: news at the 3rd, maps at the 4th.
    expect(b).toMatchObject({
      routed_turns: 5,
      offered: { weather: 3, email: 2, news: 2, maps: 1 },
      observed: { weather: 5, email: 5, news: 3, maps: 2 },
    });
  });
});
