/**
 * The scheduled review pass (docs/learning.md) through the Worker's own `scheduled` handler, against real
 * local D1 and the real per-agent Durable Objects, with the offline extractive model. Tests in this
 * file share one database (and the cron cursor), so each starts the cursor from the beginning and
 * leaves no agent with unreviewed calls behind.
 */
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { services } from '../src/env.ts';
import worker from '../src/index.ts';
import { eventually } from './helpers/eventually.ts';
import { count } from './helpers/log.ts';
import { agentId, api } from './helpers/requests.ts';
import { CLAIM_TOOLS, tool } from './helpers/tools.ts';

const svc = services(env);
const TOOLS = [
  CLAIM_TOOLS.upload_file,
  tool('lookup_claim', 'Look up an insurance claim by its claim reference.', { claim_ref: { type: 'string' } }),
];
const error = (ref: string) => `claim_ref "${ref}" not found; references start with CW-`;
const uploads = (tag: string) => [
  {
    id: `${tag}-1`,
    tool: 'upload_file',
    arguments: { claim_ref: '123456', file_mb: 3 },
    success: false,
    error: error('123456'),
  },
  {
    id: `${tag}-2`,
    tool: 'upload_file',
    arguments: { claim_ref: '654321', file_mb: 1 },
    success: false,
    error: error('654321'),
  },
  { id: `${tag}-3`, tool: 'upload_file', arguments: { claim_ref: 'CW-123456', file_mb: 3 }, success: true },
  { id: `${tag}-4`, tool: 'upload_file', arguments: { claim_ref: 'CW-654321', file_mb: 2 }, success: true },
];

async function agentWithCalls(settings: Record<string, unknown> = {}): Promise<string> {
  const agent = agentId('cron');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
  if (Object.keys(settings).length > 0)
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: settings })).status).toBe(200);
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: uploads(agent) } })).status).toBe(200);
  return agent;
}

/** Runs the Worker's own scheduled handler (src/index.ts) for a tick at `at`. */
async function tick(at = Date.now()): Promise<void> {
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: '*/10 * * * *' }), env);
}

const reviewsOf = async (agent: string) =>
  (
    await env.DB.prepare('SELECT review_id, trigger, summary FROM reviews WHERE agent = ?1 ORDER BY created_at')
      .bind(agent)
      .all<{ review_id: string; trigger: string; summary: string }>()
  ).results;

const agentRow = (agent: string) =>
  env.DB.prepare('SELECT last_review_at, last_review_seq FROM agents WHERE agent = ?1')
    .bind(agent)
    .first<{ last_review_at: string | null; last_review_seq: number }>();

beforeEach(async () => {
  await svc.revisions.setCronCursor('', new Date().toISOString());
});

describe('scheduled review pass', () => {
  it('reviews every agent with calls since its last review and leaves one with none alone', async () => {
    const quiet = await agentWithCalls();
    expect((await api('POST', `/v1/agents/${quiet}/reviews`, { body: {} })).status).toBe(200);
    const [a, b] = [await agentWithCalls(), await agentWithCalls()];
    const at = Date.now() + 1000;
    await tick(at);
    for (const agent of [a, b]) {
      expect((await reviewsOf(agent)).map((r) => r.trigger)).toEqual(['cron']);
      const revisions = (await api('GET', `/v1/agents/${agent}/revisions`)).body.revisions;
      expect(
        revisions.map((r: { tool: string; status: string; call_example: string }) => [
          r.tool,
          r.status,
          r.call_example,
        ]),
      ).toEqual([['upload_file', 'proposed', 'Example call: {"claim_ref": "CW-######", "file_mb": "<number>"}']]);
      expect((await agentRow(agent))?.last_review_at).toBe(new Date(at).toISOString());
    }
    expect((await reviewsOf(quiet)).map((r) => r.trigger)).toEqual(['api']);
    expect(await count('revisions', quiet)).toBe(1);
  });

  it('answers 409 to a manual review while the lease is held; the cron skips that agent until it is free', async () => {
    const agent = await agentWithCalls();
    const stub = env.AGENTS.get(env.AGENTS.idFromName(agent));
    expect(await stub.acquireReviewLease('someone-else', Date.now(), 60_000)).toBe(true);
    const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: {} });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: {
        code: 'conflict',
        message: `a review of agent ${agent} is already running; try again when it has finished`,
        details: [],
      },
    });
    await tick();
    expect(await count('reviews', agent)).toBe(0);
    expect(await count('revisions', agent)).toBe(0);
    // A dry run reads only: it does not need the lease.
    expect((await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } })).status).toBe(200);
    await stub.releaseReviewLease('someone-else');
    await tick();
    expect((await reviewsOf(agent)).map((r) => r.trigger)).toEqual(['cron']);
  });

  it('leaves an agent whose schedule is off, or not yet due, alone', async () => {
    const off = await agentWithCalls({ review_schedule: 'off' });
    const hourly = await agentWithCalls({ review_schedule: '*/60' });
    expect((await api('POST', `/v1/agents/${hourly}/reviews`, { body: {} })).status).toBe(200);
    await api('POST', `/v1/agents/${hourly}/calls`, {
      body: { calls: [{ id: `${hourly}-new`, tool: 'lookup_claim', arguments: {}, success: true }] },
    });
    await tick(Date.now() + 10 * 60_000);
    expect(await count('reviews', off)).toBe(0);
    expect((await reviewsOf(hourly)).map((r) => r.trigger)).toEqual(['api']);
    await tick(Date.now() + 61 * 60_000);
    expect((await reviewsOf(hourly)).map((r) => r.trigger)).toEqual(['api', 'cron']);
    expect(await count('reviews', off)).toBe(0);
    await api('PUT', `/v1/agents/${off}/config`, { body: { review_schedule: '*/10' } });
    await tick();
    expect((await reviewsOf(off)).map((r) => r.trigger)).toEqual(['cron']);
  });

  it('reviews at most five agents a tick and resumes where it stopped', async () => {
    const agents: string[] = [];
    for (let i = 0; i < 7; i++) agents.push(await agentWithCalls());
    const sorted = [...agents].sort();
    await tick();
    const reviewed = async () => {
      const out: string[] = [];
      for (const a of sorted) if ((await count('reviews', a)) > 0) out.push(a);
      return out;
    };
    expect(await reviewed()).toEqual(sorted.slice(0, 5));
    expect(await svc.revisions.getCronCursor()).toBe(sorted[4]);
    await tick();
    expect(await reviewed()).toEqual(sorted);
    expect(await svc.revisions.getCronCursor()).toBe('');
  });

  it('records a failing agent, tells its review.failed webhook, and goes on with the others', async () => {
    const broken = await agentWithCalls();
    const fine = await agentWithCalls();
    const hook = `${inject('webhookReceiver')}/hook/${broken}`;
    const webhooks = [{ url: hook, kind: 'json', secret: 'whsec_cron_0123456789', events: ['review.failed'] }];
    expect((await api('PUT', `/v1/agents/${broken}/webhooks`, { body: { webhooks } })).status).toBe(200);
    // A row the review cannot read (hand-edited, not valid JSON): this agent's review throws.
    await env.DB.prepare("UPDATE tools SET notes = '{broken' WHERE agent = ?1").bind(broken).run();
    await tick();
    const [failure] = await reviewsOf(broken);
    expect(failure?.trigger).toBe('cron');
    expect(JSON.parse(failure?.summary ?? '{}')).toEqual({ error: expect.stringContaining('JSON') });
    const received = `${inject('webhookReceiver')}/_received/${broken}`;
    const [delivery] = await eventually(async () => {
      const got = (await (await fetch(received)).json()) as { body: string }[];
      return got.length > 0 ? got : undefined;
    }, 15_000);
    expect(JSON.parse(delivery?.body ?? '{}')).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'review.failed',
      agent: broken,
      created_at: expect.any(String),
      data: { review_id: failure?.review_id, trigger: 'cron', error: JSON.parse(failure?.summary ?? '{}').error },
    });
    expect((await agentRow(broken))?.last_review_seq).toBe(0);
    expect((await reviewsOf(fine)).map((r) => r.trigger)).toEqual(['cron']);
    expect(await count('revisions', fine)).toBe(1);
    await env.DB.prepare("UPDATE tools SET notes = '[]' WHERE agent = ?1").bind(broken).run();
  });
});
