/**
 * An agent's webhooks and their deliveries in D1 (migrations/0013_webhooks.sql). Strongly
 * consistent (one primary): the consumer reads a webhook as the last PUT left it.
 */
import type { DeliveryRow, StoredWebhook, WebhookKind, WebhookStore } from '../core/ports.ts';
import type { WebhookEventType } from '../core/webhook-events.ts';

interface WebhookRow extends Omit<StoredWebhook, 'events'> {
  events: string;
}

function webhookOf(r: WebhookRow): StoredWebhook {
  return { ...r, events: JSON.parse(r.events) as WebhookEventType[] };
}

const COLUMNS = 'webhook_id, url, kind, secret, events, created_at';

export function createD1Webhooks(db: D1Database): WebhookStore {
  return {
    /** The agent's webhooks in the order the last PUT listed them. */
    async list(agent: string): Promise<StoredWebhook[]> {
      const { results } = await db
        .prepare(`SELECT ${COLUMNS} FROM webhooks WHERE agent = ?1 ORDER BY rowid`)
        .bind(agent)
        .all<WebhookRow>();
      return results.map(webhookOf);
    },

    async get(agent: string, webhookId: string): Promise<StoredWebhook | null> {
      const row = await db
        .prepare(`SELECT ${COLUMNS} FROM webhooks WHERE agent = ?1 AND webhook_id = ?2`)
        .bind(agent, webhookId)
        .first<WebhookRow>();
      return row ? webhookOf(row) : null;
    },

    /** Replaces the agent's webhooks with `hooks` in one batch. */
    async replace(agent: string, hooks: readonly StoredWebhook[]): Promise<void> {
      await db.batch([
        db.prepare('DELETE FROM webhooks WHERE agent = ?1').bind(agent),
        ...hooks.map((h) =>
          db
            .prepare(
              'INSERT INTO webhooks (agent, webhook_id, url, kind, secret, events, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)',
            )
            .bind(agent, h.webhook_id, h.url, h.kind, h.secret, JSON.stringify(h.events), h.created_at),
        ),
      ]);
    },

    /** True when this event already reached this webhook (a message the queue hands over again). */
    async delivered(eventId: string, webhookId: string): Promise<boolean> {
      const row = await db
        .prepare(
          "SELECT 1 AS ok FROM webhook_deliveries WHERE event_id = ?1 AND webhook_id = ?2 AND status = 'delivered'",
        )
        .bind(eventId, webhookId)
        .first();
      return row !== null;
    },

    /**
     * Records a delivery's state. `failed` keeps the last error a retry recorded and the larger
     * attempt count (a dead-letter queue counts its own attempts from 1).
     */
    async record(agent: string, d: Omit<DeliveryRow, 'last_error'> & { last_error: string | null }): Promise<void> {
      await db
        .prepare(
          `INSERT INTO webhook_deliveries (agent, event_id, webhook_id, type, status, attempts, last_error, updated_at)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
           ON CONFLICT (event_id, webhook_id) DO UPDATE SET
             status = excluded.status,
             attempts = MAX(webhook_deliveries.attempts, excluded.attempts),
             last_error = COALESCE(excluded.last_error, webhook_deliveries.last_error),
             updated_at = excluded.updated_at`,
        )
        .bind(agent, d.event_id, d.webhook_id, d.type, d.status, d.attempts, d.last_error, d.updated_at)
        .run();
    },

    /** The agent's deliveries that reached the dead-letter queue, newest first. */
    async failures(agent: string, limit: number): Promise<DeliveryRow[]> {
      const { results } = await db
        .prepare(
          `SELECT event_id, webhook_id, type, status, attempts, last_error, updated_at FROM webhook_deliveries
           WHERE agent = ?1 AND status = 'failed' ORDER BY updated_at DESC LIMIT ?2`,
        )
        .bind(agent, limit)
        .all<DeliveryRow>();
      return results;
    },
  };
}
