/**
 * Webhooks (docs/integrations.md "Webhooks") through HTTP against real local D1, the real queue of
 * wrangler.toml and a receiver on loopback (test/webhook-receiver.ts, started by
 * test/global-setup.ts), which stands for the internet. The consumer's retries and the dead-letter
 * queue are driven through the Worker's own `queue` handler with `createMessageBatch`, so a retry's
 * delay need not pass in real time.
 */
import { createHmac } from 'node:crypto';
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import { app } from '../../src/app.ts';
import worker from '../../src/index.ts';
import type { WebhookMessage } from '../../src/services/webhook-delivery.ts';
import { eventually } from '../helpers/eventually.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { CLAIM_TOOLS } from '../helpers/tools.ts';

const RECEIVER = inject('webhookReceiver');
const SECRET = 'whsec_0123456789abcdef';

interface Received {
  headers: Record<string, string>;
  body: string;
}

let hooks = 0;
/** A fresh receiver name, so tests never see each other's deliveries. */
function receiverName(): string {
  hooks += 1;
  return `r${Date.now().toString(36)}${hooks}`;
}

async function received(name: string): Promise<Received[]> {
  const res = await fetch(`${RECEIVER}/_received/${name}`);
  return (await res.json()) as Received[];
}

async function script(name: string, statuses: number[]): Promise<void> {
  await fetch(`${RECEIVER}/_script/${name}`, { method: 'POST', body: JSON.stringify({ statuses }) });
}

/** Checks a delivery's Whetstone-Signature the way docs/integrations.md tells a receiver to. */
function signatureValid(r: Received, secret: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(r.headers['whetstone-signature'] ?? '');
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest('hex');
  return expected === m[2];
}

async function newAgent(prefix: string): Promise<string> {
  const agent = agentId(prefix);
  const tools = [CLAIM_TOOLS.upload_file, CLAIM_TOOLS.lookup_claim];
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
  return agent;
}

const put = (agent: string, webhooks: unknown[], token?: string) =>
  api('PUT', `/v1/agents/${agent}/webhooks`, { body: { webhooks }, token });
const list = (agent: string) => api('GET', `/v1/agents/${agent}/webhooks`);

/** A request through the app with an env of its own (WEBHOOKS_ALLOW_LOCAL as a deployment has it). */
async function withEnv(extra: Record<string, unknown>, method: string, path: string, body: unknown) {
  const res = await app.fetch(
    new Request(`http://whetstone.test${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    { ...env, ...extra },
  );
  return { status: res.status, body: (await res.json()) as unknown };
}

describe('PUT and GET …/webhooks', () => {
  it('stores the webhooks and answers them without their secrets; a Slack URL only as its origin', async () => {
    const agent = await newAgent('wh-put');
    const res = await put(agent, [
      { url: 'https://hooks.example.com/whetstone', kind: 'json', secret: SECRET, events: ['revisions.waiting'] },
      { url: 'https://hooks.slack.com/services/T000/B000/XXXXSECRET', kind: 'slack' },
    ]);
    expect(res.status).toBe(200);
    const at = expect.any(String);
    expect(res.body).toEqual({
      webhooks: [
        {
          id: expect.stringMatching(/^whk_/),
          url: 'https://hooks.example.com/whetstone',
          kind: 'json',
          events: ['revisions.waiting'],
          signed: true,
          created_at: at,
        },
        {
          id: expect.stringMatching(/^whk_/),
          url: 'https://hooks.slack.com/…',
          kind: 'slack',
          events: ['revisions.waiting', 'revisions.applied', 'review.failed', 'quality.dropped'],
          signed: false,
          created_at: at,
        },
      ],
      failures: [],
    });
    const got = await list(agent);
    expect(got.status).toBe(200);
    expect(new Set(got.body.webhooks.map((w: { id: string }) => w.id))).toEqual(
      new Set(res.body.webhooks.map((w: { id: string }) => w.id)),
    );
    for (const text of [JSON.stringify(res.body), JSON.stringify(got.body)]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('XXXXSECRET');
    }
    const row = await env.DB.prepare("SELECT secret FROM webhooks WHERE agent = ?1 AND kind = 'json'")
      .bind(agent)
      .first<{ secret: string }>();
    expect(row?.secret).toBe(SECRET);
    // An empty list removes them all.
    expect((await put(agent, [])).body).toEqual({ webhooks: [], failures: [] });
  });

  it('refuses a bad body with a 400 that names the field and writes nothing', async () => {
    const agent = await newAgent('wh-bad');
    const kept = await put(agent, [{ url: 'https://hooks.example.com/a', kind: 'json', secret: SECRET }]);
    expect(kept.status).toBe(200);
    const cases: [unknown[], string[]][] = [
      [[{ url: 'https://hooks.example.com/b', kind: 'json' }], ['webhooks', '0', 'secret']],
      [[{ url: 'https://hooks.example.com/b', kind: 'teams', secret: SECRET }], ['webhooks', '0', 'kind']],
      [[{ url: 'https://hooks.example.com/b', kind: 'json', secret: 'short' }], ['webhooks', '0', 'secret']],
      [
        [{ url: 'https://hooks.example.com/b', kind: 'slack', events: ['tool.deleted'] }],
        ['webhooks', '0', 'events', '0'],
      ],
      [[{ url: 'https://hooks.example.com/b', kind: 'slack', events: [] }], ['webhooks', '0', 'events']],
      [[{ url: 'https://hooks.example.com/b', kind: 'slack', extra: 1 }], ['webhooks', '0']],
      [Array.from({ length: 11 }, () => ({ url: 'https://hooks.example.com/b', kind: 'slack' })), ['webhooks']],
    ];
    for (const [body, path] of cases) {
      const res = await put(agent, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details.map((d: { path: unknown[] }) => d.path.map(String))).toContainEqual(path);
    }
    expect((await list(agent)).body).toEqual(kept.body);
  });

  it('outside local development refuses http and loopback URLs; WEBHOOKS_ALLOW_LOCAL allows them', async () => {
    const agent = await newAgent('wh-local');
    const path = `/v1/agents/${agent}/webhooks`;
    const deployed = { WEBHOOKS_ALLOW_LOCAL: undefined };
    const http = await withEnv(deployed, 'PUT', path, {
      webhooks: [
        { url: 'https://hooks.example.com/ok', kind: 'slack' },
        { url: 'http://hooks.example.com/x', kind: 'slack' },
        { url: 'https://127.0.0.1:8443/x', kind: 'slack' },
      ],
    });
    expect(http).toEqual({
      status: 400,
      body: {
        error: {
          code: 'invalid_request',
          message: 'a webhook URL is refused',
          details: [
            {
              path: ['webhooks', 1, 'url'],
              message: 'url must be https (http is allowed only with WEBHOOKS_ALLOW_LOCAL)',
            },
            {
              path: ['webhooks', 2, 'url'],
              message:
                'url must name a public host (loopback and private hosts are allowed only with WEBHOOKS_ALLOW_LOCAL)',
            },
          ],
        },
      },
    });
    expect((await list(agent)).body).toEqual({ webhooks: [], failures: [] });
    const local = await withEnv({ WEBHOOKS_ALLOW_LOCAL: 'true' }, 'PUT', path, {
      webhooks: [{ url: 'http://127.0.0.1:9/x', kind: 'slack' }],
    });
    expect(local.status).toBe(200);
  });

  it('answers 404 for an agent that does not exist, and 403 to an agent key', async () => {
    expect((await put('no-such-agent-wh', [])).status).toBe(404);
    const agent = await newAgent('wh-key');
    const key = await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } });
    const res = await put(agent, [], key.body.key);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: { code: 'forbidden', message: 'this route needs an operator key', details: [] },
    });
  });
});

/** A tool whose calls fail for a missing prefix twice and then work twice: a review proposes a fix. */
function failingThenWorking(toolName: string, prefix: string, extra: Record<string, unknown> = {}) {
  const error = (ref: string) => `claim_ref "${ref}" not found; references start with CW-`;
  return [
    {
      id: `${prefix}1`,
      tool: toolName,
      arguments: { claim_ref: '123456', ...extra },
      success: false,
      error: error('123456'),
    },
    {
      id: `${prefix}2`,
      tool: toolName,
      arguments: { claim_ref: '654321', ...extra },
      success: false,
      error: error('654321'),
    },
    { id: `${prefix}3`, tool: toolName, arguments: { claim_ref: 'CW-123456', ...extra }, success: true },
    { id: `${prefix}4`, tool: toolName, arguments: { claim_ref: 'CW-654321', ...extra }, success: true },
  ];
}

/** A fresh receiver hooked to the agent as its one json webhook, for `events` (every event unless told); its name. */
async function hookReceiver(agent: string, events?: string[]): Promise<string> {
  const name = receiverName();
  const webhook = { url: `${RECEIVER}/hook/${name}`, kind: 'json', secret: SECRET, ...(events ? { events } : {}) };
  expect((await put(agent, [webhook])).status).toBe(200);
  return name;
}

/** Records `calls` for the agent, then runs a review asked with `body`; its answer. */
async function reviewAfter(agent: string, calls: unknown[], body: Record<string, unknown> = {}) {
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
  return api('POST', `/v1/agents/${agent}/reviews`, { body });
}

/** What the receiver got, once it got anything (the queue delivers after the answer). */
const firstDeliveries = (name: string) =>
  eventually(async () => {
    const got = await received(name);
    return got.length > 0 ? got : undefined;
  }, 15_000);

describe('a review enqueues its events; the queue delivers them', () => {
  it('a review that leaves two revisions proposed sends one signed revisions.waiting message', async () => {
    const agent = await newAgent('wh-review');
    const name = await hookReceiver(agent);
    const review = await reviewAfter(agent, [
      ...failingThenWorking('upload_file', 'u', { file_mb: 2 }),
      ...failingThenWorking('lookup_claim', 'l'),
    ]);
    expect(review.status).toBe(200);
    expect(review.body.revisions.map((r: { tool: string }) => r.tool).sort()).toEqual(['lookup_claim', 'upload_file']);

    const [delivery] = await firstDeliveries(name);
    // The queue's batch window is one second: wait past two more, and still only one message came.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await received(name)).toHaveLength(1);
    if (!delivery) throw new Error('no delivery');
    expect(signatureValid(delivery, SECRET)).toBe(true);
    expect(signatureValid(delivery, `${SECRET}x`)).toBe(false);
    const body = JSON.parse(delivery.body);
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'revisions.waiting',
      agent,
      created_at: expect.any(String),
      data: {
        review_id: review.body.review_id,
        revisions: review.body.revisions.map((r: { revision_id: string; tool: string }) => ({
          revision_id: r.revision_id,
          tool: r.tool,
        })),
      },
    });
    expect(delivery.headers['whetstone-event-id']).toBe(body.id);
    expect(delivery.headers['content-type']).toBe('application/json');
    const row = await env.DB.prepare('SELECT status, attempts FROM webhook_deliveries WHERE event_id = ?1')
      .bind(body.id)
      .first();
    expect(row).toEqual({ status: 'delivered', attempts: 1 });
  });

  it('a review with auto_apply sends one revisions.applied message naming each applied revision and its version', async () => {
    const agent = await newAgent('wh-applied');
    const name = await hookReceiver(agent, ['revisions.applied']);
    const review = await reviewAfter(agent, failingThenWorking('upload_file', 'u', { file_mb: 2 }), {
      auto_apply: true,
    });
    expect(review.status).toBe(200);
    const [applied] = review.body.revisions;
    expect(applied).toMatchObject({ tool: 'upload_file', status: 'applied', applied_version: 2 });
    const [delivery] = await firstDeliveries(name);
    if (!delivery) throw new Error('no delivery');
    expect(signatureValid(delivery, SECRET)).toBe(true);
    expect(JSON.parse(delivery.body)).toMatchObject({
      type: 'revisions.applied',
      agent,
      data: {
        review_id: review.body.review_id,
        revisions: [{ revision_id: applied.revision_id, tool: 'upload_file', version: 2 }],
      },
    });
  });

  it('a webhook that asked only for review.failed gets nothing from a review with waiting revisions', async () => {
    const agent = await newAgent('wh-filter');
    const name = await hookReceiver(agent, ['review.failed']);
    const review = await reviewAfter(agent, failingThenWorking('upload_file', 'u', { file_mb: 2 }));
    expect(review.body.revisions).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await received(name)).toEqual([]);
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE agent = ?1').bind(agent).first(),
    ).toEqual({
      n: 0,
    });
  });
});

/** One queue message for the agent's only webhook, as a review would have enqueued it. */
async function messageFor(agent: string, name: string, kind: 'json' | 'slack' = 'json'): Promise<WebhookMessage> {
  const hook = await put(agent, [{ url: `${RECEIVER}/hook/${name}`, kind, secret: SECRET }]);
  expect(hook.status).toBe(200);
  return {
    webhook_id: hook.body.webhooks[0].id,
    event: {
      id: `evt_${crypto.randomUUID()}`,
      type: 'revisions.waiting',
      agent,
      created_at: new Date().toISOString(),
      data: { review_id: 'rvw_test', revisions: [{ revision_id: 'rev_test', tool: 'upload_file' }] },
    },
  };
}

/** Hands one message to the Worker's `queue` handler as the queue `queue` would, at try `attempts`. */
async function consume(queue: string, body: WebhookMessage, attempts: number) {
  const batch = createMessageBatch<WebhookMessage>(queue, [
    { id: `msg-${attempts}`, timestamp: new Date(), attempts, body },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, ctx);
}

describe('the queue consumer', () => {
  it('retries after a 500 with a delay, then delivers the same event id, signed each time', async () => {
    const agent = await newAgent('wh-retry');
    const name = receiverName();
    const message = await messageFor(agent, name);
    await script(name, [500]);
    const first = await consume('whetstone-webhooks', message, 1);
    expect(first.explicitAcks).toEqual([]);
    // (Its delay, 10 s then doubling, is src/core/webhook-events.ts `retryDelaySeconds`; the test harness does not report it.)
    expect(first.retryMessages).toEqual([{ msgId: 'msg-1' }]);
    const second = await consume('whetstone-webhooks', message, 2);
    expect(second.explicitAcks).toEqual(['msg-2']);
    expect(second.retryMessages).toEqual([]);
    const got = await received(name);
    expect(got).toHaveLength(2);
    expect(got.map((r) => JSON.parse(r.body).id)).toEqual([message.event.id, message.event.id]);
    expect(got.map((r) => r.headers['whetstone-event-id'])).toEqual([message.event.id, message.event.id]);
    expect(got.every((r) => signatureValid(r, SECRET))).toBe(true);
    // The queue hands a delivered message over again (at least once): acknowledged, not posted twice.
    const again = await consume('whetstone-webhooks', message, 3);
    expect(again.explicitAcks).toEqual(['msg-3']);
    expect(await received(name)).toHaveLength(2);
    expect((await list(agent)).body.failures).toEqual([]);
  });

  it('a Slack webhook gets {text, blocks}', async () => {
    const agent = await newAgent('wh-slack');
    const name = receiverName();
    const message = await messageFor(agent, name, 'slack');
    expect((await consume('whetstone-webhooks', message, 1)).explicitAcks).toEqual(['msg-1']);
    const [got] = await received(name);
    expect(JSON.parse(got?.body ?? '{}')).toMatchObject({
      text: `Whetstone: 1 revision of agent *${agent}* waits for approval: \`upload_file\`.`,
      blocks: [{ type: 'section' }, { type: 'context' }],
    });
  });

  it('after the last try the message goes to the dead-letter queue, and the failure shows in GET …/webhooks', async () => {
    const agent = await newAgent('wh-dlq');
    const name = receiverName();
    const message = await messageFor(agent, name);
    await script(name, [500, 503]);
    // The last of wrangler.toml's tries (max_retries = 8): the consumer asks for a retry, which the
    // queue turns into a move to the dead-letter queue.
    expect((await consume('whetstone-webhooks', message, 8)).retryMessages).toEqual([{ msgId: 'msg-8' }]);
    expect((await consume('whetstone-webhooks', message, 9)).retryMessages).toEqual([{ msgId: 'msg-9' }]);
    const dead = await consume('whetstone-webhooks-dlq', message, 1);
    expect(dead.explicitAcks).toEqual(['msg-1']);
    expect(await received(name)).toHaveLength(2);
    const answer = await list(agent);
    expect(answer.body.failures).toEqual([
      {
        event_id: message.event.id,
        webhook_id: message.webhook_id,
        type: 'revisions.waiting',
        attempts: 9,
        error: 'the receiver answered HTTP 503',
        at: expect.any(String),
      },
    ]);
  });

  it('acknowledges, without posting, a message for a webhook a PUT has since removed', async () => {
    const agent = await newAgent('wh-gone');
    const name = receiverName();
    const message = await messageFor(agent, name);
    expect((await put(agent, [])).status).toBe(200);
    expect((await consume('whetstone-webhooks', message, 1)).explicitAcks).toEqual(['msg-1']);
    expect(await received(name)).toEqual([]);
  });
});
