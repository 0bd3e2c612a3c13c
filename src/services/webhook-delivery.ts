/**
 * Webhook delivery (docs/integrations.md "Webhooks"). A review only enqueues: one queue message per
 * event and webhook that asked for it, so a slow or down receiver never slows a review, and each
 * receiver is retried on its own. The Worker's `queue` handler posts each message: a 2xx
 * acknowledges it; anything else, or no answer in DELIVERY_TIMEOUT_MS, retries it later; after the
 * queue's last try (wrangler.toml `max_retries`) it goes to the dead-letter queue, whose messages
 * this Worker also consumes to record the failure for `GET …/webhooks`. Delivery is at least once:
 * the event id is the same on every try, and a message handed over again after a 2xx is
 * acknowledged without a second POST.
 */
import { z } from '@hono/zod-openapi';
import { logError, logInfo } from '../logger.ts';
import type { StoredWebhook } from '../core/ports.ts';
import {
  jsonBody,
  retryDelaySeconds,
  reviewEvents,
  SIGNATURE_HEADER,
  signatureHeader,
  slackBody,
  WEBHOOK_EVENT_TYPES,
  type HitRateDrop,
  type ReviewedRevision,
  type WebhookEvent,
} from '../core/webhook-events.ts';
import type { Services } from '../env.ts';

/** The dead-letter queue's name (wrangler.toml): its batches are recorded, never posted. */
export const DEAD_LETTER_QUEUE = 'whetstone-webhooks-dlq';
/** How long a receiver has to answer one delivery; past it the try counts as failed. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** An error kept for the API is cut to this many characters. */
const ERROR_CHARS = 300;

const EventRevision = z.object({ revision_id: z.string(), tool: z.string() });
const Event = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('revisions.waiting'),
    data: z.object({ review_id: z.string(), revisions: z.array(EventRevision) }),
  }),
  z.object({
    type: z.literal('revisions.applied'),
    data: z.object({
      review_id: z.string(),
      revisions: z.array(EventRevision.extend({ version: z.number().int().nullable() })),
    }),
  }),
  z.object({
    type: z.literal('review.failed'),
    data: z.object({ review_id: z.string(), trigger: z.string(), error: z.string() }),
  }),
  z.object({
    type: z.literal('quality.dropped'),
    data: z.object({
      date: z.string(),
      hit_rate: z.number(),
      previous_date: z.string(),
      previous_hit_rate: z.number(),
      fell_by: z.number(),
      threshold: z.number(),
    }),
  }),
]);
/** A queue message: one event for one webhook. The secret is never in it; it is read when posting. */
const WebhookMessage = z.object({
  webhook_id: z.string(),
  event: z.intersection(z.object({ id: z.string(), agent: z.string(), created_at: z.string() }), Event),
});
export type WebhookMessage = { webhook_id: string; event: WebhookEvent };

/** A new event id. */
export const newEventId = (): string => `evt_${crypto.randomUUID()}`;

/**
 * Enqueues each event for every webhook of its agent that asked for its type. A queue failure is
 * logged, never thrown: the review it reports on has already been stored.
 */
export async function notify(svc: Services, events: readonly WebhookEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  try {
    const messages: { body: WebhookMessage }[] = [];
    for (const event of events) {
      const hooks = await svc.webhooks.list(event.agent);
      for (const h of hooks)
        if (h.events.includes(event.type)) messages.push({ body: { webhook_id: h.webhook_id, event } });
    }
    if (messages.length > 0) await svc.webhookQueue.sendBatch(messages);
    return messages.length;
  } catch (err) {
    logError('webhook_enqueue_failed', { error: err instanceof Error ? err.message : String(err) });
    return 0;
  }
}

/** The events of a stored review (src/core/webhook-events.ts `reviewEvents`), enqueued. */
export function notifyReview(
  svc: Services,
  agent: string,
  reviewId: string,
  revisions: readonly ReviewedRevision[],
  now: string,
): Promise<number> {
  return notify(svc, reviewEvents(agent, reviewId, revisions, now, newEventId));
}

/** A review that failed (the cron records why on its review row), enqueued. */
export function notifyReviewFailed(
  svc: Services,
  agent: string,
  reviewId: string,
  trigger: string,
  error: string,
  now: string,
): Promise<number> {
  const event: WebhookEvent = {
    id: newEventId(),
    type: 'review.failed',
    agent,
    created_at: now,
    data: { review_id: reviewId, trigger, error },
  };
  return notify(svc, [event]);
}

/**
 * A day whose hit rate fell past the agent's share, enqueued. The id is the agent's and the day's,
 * so a day settled twice (a report and a tick at once) is still one event to a receiver.
 */
export function notifyHitRateDrop(svc: Services, agent: string, drop: HitRateDrop, now: string): Promise<number> {
  const event: WebhookEvent = {
    id: `evt_quality_dropped_${drop.date}_${agent}`,
    type: 'quality.dropped',
    agent,
    created_at: now,
    data: drop,
  };
  return notify(svc, [event]);
}

/** The Worker's `queue` handler: posts a batch of the webhook queue, or records a dead-letter batch. */
export async function consumeWebhooks(batch: MessageBatch<unknown>, svc: Services, nowMs: number): Promise<void> {
  const handle = batch.queue === DEAD_LETTER_QUEUE ? recordDeadLetter : deliver;
  await Promise.all(batch.messages.map((m) => handle(svc, m, nowMs)));
}

function parsed(message: Message<unknown>): WebhookMessage | null {
  const r = WebhookMessage.safeParse(message.body);
  if (r.success) return r.data as WebhookMessage;
  logError('webhook_message_unreadable', { message_id: message.id });
  message.ack();
  return null;
}

async function deliver(svc: Services, message: Message<unknown>, nowMs: number): Promise<void> {
  const m = parsed(message);
  if (!m) return;
  const { event, webhook_id } = m;
  if (await svc.webhooks.delivered(event.id, webhook_id)) {
    message.ack();
    return;
  }
  const hook = await svc.webhooks.get(event.agent, webhook_id);
  if (!hook) {
    // A PUT replaced the agent's webhooks after the event was enqueued: nobody asks for it now.
    logInfo('webhook_gone', { agent: event.agent, webhook_id, event_id: event.id });
    message.ack();
    return;
  }
  const error = await post(hook, event, nowMs);
  await svc.webhooks.record(event.agent, {
    event_id: event.id,
    webhook_id,
    type: event.type,
    status: error === null ? 'delivered' : 'retrying',
    attempts: message.attempts,
    last_error: error,
    updated_at: new Date(nowMs).toISOString(),
  });
  if (error === null) message.ack();
  else message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
}

/** A message the queue gave up on: recorded as `failed` for `GET …/webhooks`, then acknowledged. */
async function recordDeadLetter(svc: Services, message: Message<unknown>, nowMs: number): Promise<void> {
  const m = parsed(message);
  if (!m) return;
  await svc.webhooks.record(m.event.agent, {
    event_id: m.event.id,
    webhook_id: m.webhook_id,
    type: m.event.type,
    status: 'failed',
    attempts: 0,
    last_error: null,
    updated_at: new Date(nowMs).toISOString(),
  });
  logError('webhook_dead_lettered', { agent: m.event.agent, webhook_id: m.webhook_id, event_id: m.event.id });
  message.ack();
}

/** POSTs the event's body to the webhook; null on a 2xx, else why not. */
async function post(hook: StoredWebhook, event: WebhookEvent, nowMs: number): Promise<string | null> {
  const body = hook.kind === 'slack' ? slackBody(event) : jsonBody(event);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Whetstone-Webhooks',
    'whetstone-event-id': event.id,
    'whetstone-event-type': event.type,
  };
  if (hook.secret !== null)
    headers[SIGNATURE_HEADER] = await signatureHeader(hook.secret, Math.floor(nowMs / 1000), body);
  try {
    const res = await fetch(hook.url, {
      method: 'POST',
      headers,
      body,
      // A redirect is not followed: it could lead a signed body anywhere. It counts as a failure.
      redirect: 'manual',
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return res.status >= 200 && res.status < 300 ? null : `the receiver answered HTTP ${res.status}`;
  } catch (err) {
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
      return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
    return `the request failed: ${(err instanceof Error ? err.message : String(err)).slice(0, ERROR_CHARS)}`;
  }
}

/** Every event type, for a webhook that names none. */
export const ALL_EVENT_TYPES = [...WEBHOOK_EVENT_TYPES];
