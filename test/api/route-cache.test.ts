import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { services } from '../../src/env.ts';
import { registerTools } from '../../src/services/registry.ts';
import { route as routeOnce, routingSnapshot, snapshotCache } from '../../src/services/route-serving.ts';
import { eventually } from '../helpers/eventually.ts';
import { logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const weather = tool('get_weather', 'Current weather and forecast for a city: temperature, rain, wind.', {
  city: { type: 'string' },
});
const email = tool('send_email', 'Send an email message to a recipient with a subject and body.', {
  to: { type: 'string' },
});
const flights = tool('book_flight', 'Search and book airline flights between airports.', { from: { type: 'string' } });

const route = (agent: string, request: string) => api('POST', `/v1/agents/${agent}/route`, { body: { request, k: 2 } });
const names = (res: { body: { tools: { name: string }[] } }) => res.body.tools.map((t) => t.name);

describe('/route caching and batched writes', () => {
  it('sees a tools write in the very next route, though the snapshot is cached per isolate', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [weather, email] } });
    expect(names(await route(agent, 'book a flight to Rome'))).not.toContain('book_flight');
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [flights] } });
    expect(names(await route(agent, 'book a flight to Rome'))[0]).toBe('book_flight');
    expect((await api('DELETE', `/v1/agents/${agent}/tools/book_flight`)).status).toBe(204);
    expect(names(await route(agent, 'book a flight to Rome'))).not.toContain('book_flight');
  });

  it('applies a settings change to the very next route', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [weather, email, flights] } });
    const ask = () => api('POST', `/v1/agents/${agent}/route`, { body: { request: 'rain in Oslo' } });
    expect((await ask()).body.tools).toHaveLength(3);
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: { top_k: 1 } })).status).toBe(200);
    expect((await ask()).body.tools).toHaveLength(1);
  });

  it('answers 50 concurrent first routes of a new agent alike, and stores every turn once', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [weather, email, flights] } });
    const answers = await Promise.all(Array.from({ length: 50 }, () => route(agent, 'is it going to rain in Oslo')));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => JSON.stringify(a.body.tools))).size).toBe(1);
    expect(names(answers[0] as { body: { tools: { name: string }[] } })[0]).toBe('get_weather');
    const ids = answers.map((a) => a.body.turn_id as string).sort();
    const stored = await eventually(async () => {
      const { results } = await logDb(agent)
        .prepare('SELECT turn_id FROM turns WHERE agent = ?1 ORDER BY turn_id')
        .bind(agent)
        .all<{ turn_id: string }>();
      return results.length === 50 ? results.map((r) => r.turn_id) : undefined;
    }, 10_000);
    expect(stored).toEqual(ids);
    const stub = env.AGENTS.get(env.AGENTS.idFromName(agent));
    const counts = await eventually(async () => {
      const c = await stub.offers();
      return c.routed_turns === 50 ? c : undefined;
    }, 10_000);
    const offered = names(answers[0] as { body: { tools: { name: string }[] } });
    const expected = Object.fromEntries(
      ['get_weather', 'send_email', 'book_flight'].map((n) => [n, offered.includes(n) ? 50 : 0]),
    );
    expect(counts.offered).toEqual(expected);
  });

  it('still answers 404 for an agent with no row, under concurrency', async () => {
    const agent = agentId();
    const answers = await Promise.all(Array.from({ length: 10 }, () => route(agent, 'hello')));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 10 }, () => 404));
  });
});

describe('the snapshot cache is bounded by bytes', () => {
  it('keeps at most ROUTING_CACHE_MB of snapshots however many agents route, and answers stay right', async () => {
    // A 1 MiB budget: each agent of 300 tools takes a few hundred KiB, so ten agents overflow it.
    const small = services({ ...env, ROUTING_CACHE_MB: '1' });
    expect(small.routingCacheBytes).toBe(1024 * 1024);
    const agents: string[] = [];
    for (let a = 0; a < 10; a++) {
      const agent = agentId('bytes');
      agents.push(agent);
      const tools = Array.from({ length: 300 }, (_, i) =>
        tool(`tool_${a}_${i}`, `Handles task number ${i} of team ${a}: ${'details '.repeat(10)}`),
      );
      tools.push(tool(`weather_${a}`, 'Current weather and forecast for a city.'));
      await registerTools(small, agent, tools, false, new Date().toISOString());
    }
    const sizes: number[] = [];
    for (const [a, agent] of agents.entries()) {
      const result = await routeOnce(
        small,
        agent,
        { request: 'weather forecast for a city', k: 1 },
        new Date().toISOString(),
        () => {},
      );
      expect(result.tools.map((t) => t.name)).toEqual([`weather_${a}`]);
      sizes.push((await routingSnapshot(small, agent)).bytes);
      expect(snapshotCache().bytes).toBeLessThanOrEqual(small.routingCacheBytes);
    }
    expect(Math.min(...sizes)).toBeGreaterThan(100 * 1024);
    expect(snapshotCache().agents).toBeLessThan(agents.length);
    // An evicted agent is rebuilt on its next route and answers the same.
    const first = await routeOnce(
      small,
      agents[0] ?? '',
      { request: 'weather forecast for a city', k: 1 },
      new Date().toISOString(),
      () => {},
    );
    expect(first.tools.map((t) => t.name)).toEqual(['weather_0']);
  });

  it('keeps a snapshot larger than the whole budget, alone, instead of rebuilding it on every route', async () => {
    const small = services({ ...env, ROUTING_CACHE_MB: '1' });
    const big = agentId('big');
    const tools = Array.from({ length: 600 }, (_, i) =>
      tool(`task_${i}`, `Handles task number ${i}: ${'details '.repeat(10)}`),
    );
    tools.push(tool('get_weather', 'Current weather and forecast for a city.'));
    await registerTools(small, big, tools, false, new Date().toISOString());
    const ask = async (agent: string) =>
      (
        await routeOnce(
          small,
          agent,
          { request: 'weather forecast for a city', k: 1 },
          new Date().toISOString(),
          () => {},
        )
      ).tools.map((t) => t.name);

    expect(await ask(big)).toEqual(['get_weather']);
    const first = await routingSnapshot(small, big);
    expect(first.bytes).toBeGreaterThan(small.routingCacheBytes);
    expect(snapshotCache()).toEqual({ agents: 1, bytes: first.bytes });
    expect(await ask(big)).toEqual(['get_weather']);
    // The same index, not a rebuild.
    expect((await routingSnapshot(small, big)).index).toBe(first.index);

    // Another agent's route drops it: the cache is back within the budget.
    const other = agentId('small');
    await registerTools(small, other, [weather, email], false, new Date().toISOString());
    expect(await ask(other)).toEqual(['get_weather']);
    expect(snapshotCache().agents).toBe(1);
    expect(snapshotCache().bytes).toBeLessThanOrEqual(small.routingCacheBytes);
  });
});
