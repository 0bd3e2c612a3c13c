-- Webhooks (docs/integrations.md "Webhooks"): where an agent's events are sent. The secret signs
-- each delivery and is never answered; `events` is a JSON array of the event types sent.
CREATE TABLE webhooks (
  agent       TEXT NOT NULL,
  webhook_id  TEXT NOT NULL,
  url         TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('json', 'slack')),
  secret      TEXT,
  events      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (agent, webhook_id)
);

-- One row per event and webhook once its delivery is settled or failing: `delivered` lets a message
-- the queue hands over again be acknowledged without a second POST; `retrying` keeps the last
-- error; `failed` is a message that reached the dead-letter queue, kept so the API can show it.
CREATE TABLE webhook_deliveries (
  agent       TEXT NOT NULL,
  event_id    TEXT NOT NULL,
  webhook_id  TEXT NOT NULL,
  type        TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('delivered', 'retrying', 'failed')),
  attempts    INTEGER NOT NULL,
  last_error  TEXT,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (event_id, webhook_id)
);
CREATE INDEX webhook_deliveries_agent_status ON webhook_deliveries (agent, status, updated_at);
