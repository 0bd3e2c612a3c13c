/**
 * An agent's webhooks (docs/integrations.md "Webhooks"): `PUT …/webhooks` sets them all at once
 * (operator), `GET …/webhooks` lists them and the deliveries that reached the dead-letter queue. A
 * secret is write-only, and a Slack URL, which is itself a credential, is answered as its origin.
 */
import { z } from '@hono/zod-openapi';
import type { StoredWebhook } from '../core/ports.ts';
import { WEBHOOK_EVENT_TYPES, webhookUrlProblem } from '../core/webhook-events.ts';
import { ApiError } from '../errors.ts';
import { ALL_EVENT_TYPES } from '../services/webhook-delivery.ts';
import { createApi, nowIso, type AppContext, agentRow, agentRoute } from './common.ts';

export const webhooksApi = createApi();

/** Webhooks one agent may have: each event is one queue message per webhook. */
export const MAX_WEBHOOKS = 10;
/** Dead-lettered deliveries `GET …/webhooks` lists, newest first. */
const FAILURES_LISTED = 50;

const EventType = z.enum(WEBHOOK_EVENT_TYPES);
const WebhookInput = z
  .object({
    url: z
      .string()
      .max(2048)
      .openapi({ description: 'https, to a public host (docs/configuration.md WEBHOOKS_ALLOW_LOCAL)' }),
    kind: z.enum(['json', 'slack']).openapi({ description: '`json`: the signed event; `slack`: a Slack message' }),
    secret: z
      .string()
      .min(16)
      .max(256)
      .optional()
      .openapi({ description: 'signs each delivery (Whetstone-Signature); required for `json`; never answered' }),
    events: z
      .array(EventType)
      .min(1)
      .max(WEBHOOK_EVENT_TYPES.length)
      .refine((e) => new Set(e).size === e.length, 'each event type at most once')
      .optional()
      .openapi({ description: 'the event types sent (default: all)' }),
  })
  .strict()
  .refine((w) => w.kind !== 'json' || w.secret !== undefined, {
    message: 'a json webhook needs a secret (16-256 characters) to sign its deliveries',
    path: ['secret'],
  });
const WebhooksBody = z.object({ webhooks: z.array(WebhookInput).max(MAX_WEBHOOKS) }).strict();

const Webhook = z.object({
  id: z.string(),
  url: z.string(),
  kind: z.enum(['json', 'slack']),
  events: z.array(EventType),
  signed: z.boolean(),
  created_at: z.string(),
});
const Failure = z.object({
  event_id: z.string(),
  webhook_id: z.string(),
  type: z.string(),
  attempts: z.number().int(),
  error: z.string().nullable(),
  at: z.string(),
});
const WebhookList = z.object({ webhooks: z.array(Webhook), failures: z.array(Failure) });

/** What a webhook answers: never its secret; a Slack URL only as its origin. */
function answered(h: StoredWebhook): z.infer<typeof Webhook> {
  return {
    id: h.webhook_id,
    url: h.kind === 'slack' ? `${new URL(h.url).origin}/…` : h.url,
    kind: h.kind,
    events: h.events,
    signed: h.secret !== null,
    created_at: h.created_at,
  };
}

async function listAnswer(c: AppContext, agent: string): Promise<z.infer<typeof WebhookList>> {
  const svc = c.get('svc');
  const [hooks, failures] = await Promise.all([
    svc.webhooks.list(agent),
    svc.webhooks.failures(agent, FAILURES_LISTED),
  ]);
  return {
    webhooks: hooks.map(answered),
    failures: failures.map((f) => ({
      event_id: f.event_id,
      webhook_id: f.webhook_id,
      type: f.type,
      attempts: f.attempts,
      error: f.last_error,
      at: f.updated_at,
    })),
  };
}

agentRoute(webhooksApi, {
  method: 'get',
  path: '/v1/agents/{agent}/webhooks',
  need: 'read',
  summary: "The agent's webhooks (secrets never answered) and the deliveries that reached the dead-letter queue",
  answer: WebhookList,
  answered: 'webhooks in the order they were set; failed deliveries, newest first',
  handler: async (c, { agent }) => {
    await agentRow(c, agent);
    return c.json(await listAnswer(c, agent), 200);
  },
});

agentRoute(webhooksApi, {
  method: 'put',
  path: '/v1/agents/{agent}/webhooks',
  need: 'operator',
  summary: "Set the agent's webhooks (replaces them all; an empty list removes them)",
  description:
    'Each URL must be https to a public host unless the deployment sets WEBHOOKS_ALLOW_LOCAL (local development). ' +
    'A refused body writes nothing.',
  body: WebhooksBody,
  answer: WebhookList,
  answered: 'the webhooks as stored',
  handler: async (c, { agent, body: { webhooks } }) => {
    const svc = c.get('svc');
    const problems = webhooks.flatMap((w, i) => {
      const problem = webhookUrlProblem(w.url, svc.allowLocalWebhooks);
      return problem === null ? [] : [{ path: ['webhooks', i, 'url'], message: `url ${problem}` }];
    });
    if (problems.length > 0) throw new ApiError('invalid_request', 'a webhook URL is refused', problems);
    await agentRow(c, agent);
    const now = nowIso();
    await svc.webhooks.replace(
      agent,
      webhooks.map((w) => ({
        webhook_id: `whk_${crypto.randomUUID()}`,
        url: w.url,
        kind: w.kind,
        secret: w.secret ?? null,
        events: w.events ?? ALL_EVENT_TYPES,
        created_at: now,
      })),
    );
    return c.json(await listAnswer(c, agent), 200);
  },
});
