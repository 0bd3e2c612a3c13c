/** `GET …/quality` through HTTP on real local D1: today's numbers from a small log, and the errors. */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.ts';
import { count } from '../helpers/log.ts';
import { agentId, agentWithTools, api } from '../helpers/requests.ts';
import { CLAIM_TOOLS, tool } from '../helpers/tools.ts';
import { qualityDay } from '../helpers/quality.ts';

const TOOLS = [
  CLAIM_TOOLS.lookup_claim,
  CLAIM_TOOLS.refer_llu,
  tool('get_weather', 'Current weather for a city.', { city: { type: 'string' } }),
];

/** A fresh agent with the file's tools. */
const setup = () => agentWithTools(TOOLS, 'quality');

async function routeAndCall(agent: string, request: string, k: number, called: string | null) {
  const res = await api('POST', `/v1/agents/${agent}/route`, { body: { request, k } });
  const offered = res.body.tools.map((t: { name: string }) => t.name);
  if (called) {
    const calls = [{ tool: called, arguments: {}, success: true, turn_id: res.body.turn_id }];
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
  }
  return offered as string[];
}

describe('GET …/quality', () => {
  it('answers today with routed, served, hits, misses and the hit rate, zero-filled days before', async () => {
    const agent = await setup();
    expect(await routeAndCall(agent, 'look up claim CW-123456 status', 1, 'lookup_claim')).toEqual(['lookup_claim']);
    const missed = await routeAndCall(agent, 'the Titan desk should take this claim', 1, 'refer_llu');
    expect(missed).not.toContain('refer_llu');
    await routeAndCall(agent, 'what is the weather in Paris', 1, null);
    const failed = [{ tool: 'lookup_claim', arguments: { claim_ref: '1' }, success: false, error: 'not found' }];
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: failed } })).status).toBe(200);
    await eventually(async () => ((await count('turns', agent)) === 3 ? true : undefined));
    const res = await api('GET', `/v1/agents/${agent}/quality?days=3`);
    expect(res.status).toBe(200);
    expect(res.body.days).toHaveLength(3);
    expect(
      res.body.days.slice(0, 2).map((d: { served_turns: number; hit_rate: null }) => [d.served_turns, d.hit_rate]),
    ).toEqual([
      [0, null],
      [0, null],
    ]);
    expect(res.body.days[2]).toEqual(
      qualityDay(new Date().toISOString().slice(0, 10), {
        routed_turns: 3,
        served_turns: 2,
        hits: 1,
        hit_rate: 0.5,
        mrr: 0.5,
        misses: 1,
        failed_calls: 1,
      }),
    );
    expect(res.body.top_missed).toEqual([{ tool: 'refer_llu', misses: 1 }]);
    expect(res.body.truncated).toBe(false);
    const one = await api('GET', `/v1/agents/${agent}/quality?days=1&tool=refer_llu`);
    expect(one.body.days[0]).toMatchObject({ served_turns: 1, hits: 0, misses: 1, failed_calls: 0 });
  });

  it('refuses a window out of range, and answers 404 for an unknown agent or tool', async () => {
    const agent = await setup();
    for (const days of ['0', '91', 'x']) {
      const res = await api('GET', `/v1/agents/${agent}/quality?days=${days}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await api('GET', `/v1/agents/${agentId('nobody')}/quality`)).status).toBe(404);
    const unknown = await api('GET', `/v1/agents/${agent}/quality?tool=no_such_tool`);
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });
});
