/**
 * The `quality.dropped` webhook (docs/integrations.md "Webhooks"): once a UTC day's hours are
 * settled, its routing hit rate is compared with the day before's, and a fall by more than the
 * agent's `hit_rate_drop_share` is posted to the webhooks that asked for it — once, however often
 * the day is settled. Real local D1, the Durable Object log, the real queue and a receiver on
 * loopback (test/webhook-receiver.ts).
 */
import { env } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import { hitRateDrop } from '../../src/core/webhook-events.ts';
import { services } from '../../src/env.ts';
import { settleQuality } from '../../src/services/quality-report.ts';
import { eventually } from '../helpers/eventually.ts';
import { logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const RECEIVER = inject('webhookReceiver');
const svc = services(env);
const DAY = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const dayAt = (daysBack: number) =>
  new Date(Date.parse(`${today}T00:00:00.000Z`) - daysBack * DAY).toISOString().slice(0, 10);
/** The day whose fall is checked (yesterday) and the day before it. */
const DROP_DAY = dayAt(1);
const DAY_BEFORE = dayAt(2);
/** A scheduled tick early today: yesterday's last hour has just settled. */
const NOW = `${today}T01:30:00.000Z`;

const turn = (agent: string, id: string, when: string, offered: string[]) =>
  logDb(agent)
    .prepare(
      "INSERT INTO turns (agent, turn_id, request, conversation_id, routed, offered, source, created_at) VALUES (?1, ?2, ?3, NULL, 1, ?4, 'route', ?5)",
    )
    .bind(
      agent,
      id,
      `request ${id}`,
      JSON.stringify(offered.map((name, i) => ({ name, rank: i + 1, score: 0.9 }))),
      when,
    );
const call = (agent: string, id: string, name: string, turnId: string, when: string) =>
  logDb(agent)
    .prepare(
      "INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at) VALUES (?1, ?2, ?3, '{}', 1, NULL, NULL, ?4, NULL, ?5)",
    )
    .bind(agent, id, name, turnId, when);

/**
 * The day before: four requests, each served by the tool routing offered (hit rate 1). Yesterday:
 * four requests routing offered only `lookup` for, three served by `cancel` (hit rate 0.25).
 */
async function agentWithFall(share: number | null, receiver: string): Promise<string> {
  const agent = agentId('wh-quality');
  const tools = [tool('lookup', 'Look up an order.'), tool('cancel', 'Cancel an order.')];
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
  if (share !== null)
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: { hit_rate_drop_share: share } })).status).toBe(200);
  const hook = {
    url: `${RECEIVER}/hook/${receiver}`,
    kind: 'json',
    secret: 'whsec_0123456789abcdef',
    events: ['quality.dropped'],
  };
  expect((await api('PUT', `/v1/agents/${agent}/webhooks`, { body: { webhooks: [hook] } })).status).toBe(200);
  const rows = [];
  for (let i = 0; i < 4; i++) {
    const before = `${DAY_BEFORE}T1${i}:05:00.000Z`;
    rows.push(turn(agent, `b${i}`, before, ['lookup', 'cancel']), call(agent, `cb${i}`, 'lookup', `b${i}`, before));
    const during = `${DROP_DAY}T1${i}:05:00.000Z`;
    rows.push(
      turn(agent, `d${i}`, during, ['lookup']),
      call(agent, `cd${i}`, i === 0 ? 'lookup' : 'cancel', `d${i}`, during),
    );
  }
  await logDb(agent).batch(rows);
  return agent;
}

async function received(name: string): Promise<{ body: string }[]> {
  return (await (await fetch(`${RECEIVER}/_received/${name}`)).json()) as { body: string }[];
}

describe('the quality.dropped webhook', () => {
  it('fires when the fall passes the share, not at it', () => {
    const before = { date: '2026-01-01', hit_rate: 0.8 };
    expect(hitRateDrop(before, { date: '2026-01-02', hit_rate: 0.6 }, 0.25)).toBeNull();
    expect(hitRateDrop(before, { date: '2026-01-02', hit_rate: 0.59 }, 0.25)?.fell_by).toBeCloseTo(0.2625);
    expect(hitRateDrop(before, { date: '2026-01-02', hit_rate: 0 }, 1)).toBeNull();
    expect(hitRateDrop(before, { date: '2026-01-02', hit_rate: null }, 0)).toBeNull();
  });

  it("posts yesterday's fall once to the webhook that asked, and nothing for an agent whose share the fall stays within", async () => {
    const name = `q${Date.now().toString(36)}`;
    // A share of 0.9: the fall from 1 to 0.25 (0.75 of it) stays within.
    const calm = await agentWithFall(0.9, name);
    await settleQuality(svc, calm, NOW, 1_000);
    const alarmed = await agentWithFall(null, name);
    await settleQuality(svc, alarmed, NOW, 1_000);

    const [delivery] = await eventually(async () => {
      const got = await received(name);
      return got.length > 0 ? got : undefined;
    }, 15_000);
    expect(JSON.parse(delivery?.body ?? '{}')).toEqual({
      id: `evt_quality_dropped_${DROP_DAY}_${alarmed}`,
      type: 'quality.dropped',
      agent: alarmed,
      created_at: NOW,
      data: {
        date: DROP_DAY,
        hit_rate: 0.25,
        previous_date: DAY_BEFORE,
        previous_hit_rate: 1,
        fell_by: 0.75,
        threshold: 0.25,
      },
    });
    // Settled again (a report, or the next tick): the day is not news twice.
    await settleQuality(svc, alarmed, `${today}T02:30:00.000Z`, 1_000);
    // The queue's batch window is one second: wait past two more, and still only the one message came.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await received(name)).toHaveLength(1);
  });
});
