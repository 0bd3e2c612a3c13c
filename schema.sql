-- The whole Whetstone schema in one place (the sum of migrations/). Keep in step with them.
-- Every row belongs to one agent (docs/api.md). JSON columns hold arrays/objects as text.

CREATE TABLE agents (
  agent            TEXT PRIMARY KEY,
  created_at       TEXT NOT NULL,
  settings         TEXT NOT NULL DEFAULT '{}',      -- overrides of docs/configuration.md defaults
  tools_gen        INTEGER NOT NULL DEFAULT 0,      -- bumped on every tool write: invalidates isolate caches
  last_review_at   TEXT,
  last_review_seq  INTEGER NOT NULL DEFAULT 0,      -- highest calls.seq seen by the last review (cron: "calls since")
  last_call_seq    INTEGER NOT NULL DEFAULT 0,      -- 0010: newest calls.seq of the agent's log (moved on each write)
  calls_logged     INTEGER NOT NULL DEFAULT 0       -- 0010: calls the agent's log holds (writes add, retention takes away)
);

-- One row per tool: the author's definition plus what augmentation and learning added.
-- The vector lives in the row so a row and its vector are always written together.
CREATE TABLE tools (
  agent            TEXT NOT NULL,
  name             TEXT NOT NULL,
  docstring        TEXT NOT NULL,
  description      TEXT,                            -- augmented description, or NULL
  parameters       TEXT NOT NULL,                   -- the author's JSON Schema, verbatim
  examples         TEXT NOT NULL DEFAULT '[]',      -- [{text, source, revision_id}]
  notes            TEXT NOT NULL DEFAULT '[]',
  avoid            TEXT NOT NULL DEFAULT '[]',
  call_example     TEXT,
  queries_source   TEXT,                            -- 'augmentation' or NULL
  version          INTEGER NOT NULL,
  definition_hash  TEXT NOT NULL,                   -- of the author's definition: re-registering it is a no-op
  vector           BLOB,                            -- Float32 little-endian, L2-normalised
  embedder         TEXT NOT NULL,                   -- which embedder wrote the vector
  reviewed_seq     INTEGER NOT NULL DEFAULT 0,      -- highest calls.seq the last review of this tool read
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  memory           TEXT NOT NULL DEFAULT '[]',      -- 0012: routing memory [{text, at}], never in the model view
  test_endpoint    TEXT,                            -- 0016: {url, token_sealed} a try run calls, or NULL
  PRIMARY KEY (agent, name)
);

-- The registry's audit log: every version of every row, newest = highest version.
CREATE TABLE tool_versions (
  agent       TEXT NOT NULL,
  name        TEXT NOT NULL,
  version     INTEGER NOT NULL,
  definition  TEXT NOT NULL,                        -- {name, description, parameters} as registered
  source      TEXT NOT NULL,                        -- registered | revision:<id> | undo:<id>
  created_at  TEXT NOT NULL,
  PRIMARY KEY (agent, name, version)
);

-- The log: turns, calls, outcomes, trace_tools. Since 0010 it lives in each agent's Durable Object,
-- in these same tables (src/adapters/agent-log-schema.ts); the D1 tables below hold only what an
-- earlier version wrote, which the scheduled handler moves into the objects and removes here.

-- One row per routed turn (docs/api.md). seq orders turns of one conversation.
CREATE TABLE turns (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  agent            TEXT NOT NULL,
  turn_id          TEXT NOT NULL,
  request          TEXT,
  conversation_id  TEXT,
  routed           INTEGER NOT NULL,                -- 0 when the stable-list rule sent every tool
  offered          TEXT NOT NULL DEFAULT '[]',      -- [{name, rank, score}]
  source           TEXT NOT NULL DEFAULT 'route',   -- route | trace | call
  created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX turns_agent_turn ON turns (agent, turn_id);
CREATE INDEX turns_agent_conversation ON turns (agent, conversation_id, seq);
CREATE INDEX turns_agent_seq ON turns (agent, seq);
-- Turns where routing ranked a tool first (review `ranked_first`); offered is stored best first (0002).
CREATE INDEX turns_agent_top ON turns (agent, json_extract(offered, '$[0].name'), seq) WHERE routed = 1;
-- 0003: routing offers per day/hour for the activity chart (only routed turns offer, docs/learning.md).
CREATE INDEX turns_agent_routed_created ON turns (agent, created_at) WHERE routed = 1;
-- 0007: routing quality per day reads the window's turns and calls by time.
CREATE INDEX turns_agent_created ON turns (agent, created_at);

-- The call log. call_id is the caller's idempotency key (or generated).
CREATE TABLE calls (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  agent            TEXT NOT NULL,
  call_id          TEXT NOT NULL,
  tool             TEXT NOT NULL,
  arguments        TEXT NOT NULL,
  success          INTEGER NOT NULL,
  error            TEXT,
  request          TEXT,
  turn_id          TEXT,
  conversation_id  TEXT,
  at               TEXT NOT NULL
);
CREATE UNIQUE INDEX calls_agent_id ON calls (agent, call_id);
CREATE INDEX calls_agent_tool_seq ON calls (agent, tool, seq);
CREATE INDEX calls_agent_turn ON calls (agent, turn_id);
CREATE INDEX calls_agent_seq ON calls (agent, seq);
-- Neighbouring runs of a conversation logged as calls without a turn (0002).
CREATE INDEX calls_agent_conversation ON calls (agent, conversation_id, seq);
-- 0003: the dashboard's activity chart: calls per tool per day/hour, covering.
CREATE INDEX calls_agent_tool_at ON calls (agent, tool, at, success);
CREATE INDEX calls_agent_at ON calls (agent, at);

-- Outcomes an application reports (docs/learning.md "verified").
CREATE TABLE outcomes (
  agent      TEXT NOT NULL,
  turn_id    TEXT NOT NULL,
  ok         INTEGER NOT NULL,
  served_by  TEXT,
  at         TEXT NOT NULL,
  PRIMARY KEY (agent, turn_id)
);
-- 0008: retention removes old outcomes by time.
CREATE INDEX outcomes_agent_at ON outcomes (agent, at);

CREATE TABLE revisions (
  revision_id      TEXT PRIMARY KEY,
  agent            TEXT NOT NULL,
  tool             TEXT NOT NULL,
  status           TEXT NOT NULL,                   -- proposed | applied | dismissed | undone
  created_at       TEXT NOT NULL,
  applied_at       TEXT,
  approved_by      TEXT,
  approved_key     TEXT,                            -- key_id (or 'admin') that applied/dismissed/undid
  reason           TEXT,                            -- dismissal reason
  body             TEXT NOT NULL,                   -- notes_added, queries_added, avoid_added, evidence, ranks, …
  before_row       TEXT,                            -- the row's learned state before apply (for undo)
  applied_version  INTEGER,                         -- row version the apply produced
  review_id        TEXT
);
CREATE INDEX revisions_agent_created ON revisions (agent, created_at);
CREATE INDEX revisions_agent_tool_status ON revisions (agent, tool, status);
-- Revisions waiting (status 'proposed') per agent (0002).
CREATE INDEX revisions_agent_status ON revisions (agent, status, tool);

CREATE TABLE reviews (
  review_id   TEXT PRIMARY KEY,
  agent       TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  trigger     TEXT NOT NULL,                        -- api | cron
  summary     TEXT NOT NULL                         -- counts and skips, for the dashboard
);
CREATE INDEX reviews_agent_created ON reviews (agent, created_at);

-- Agent keys (docs/security.md): stored as salted SHA-256, never in clear.
CREATE TABLE keys (
  key_id      TEXT PRIMARY KEY,
  agent       TEXT NOT NULL,
  role        TEXT NOT NULL,                        -- agent | operator
  salt        TEXT NOT NULL,
  hash        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT,
  tool_access TEXT                                  -- 0011: {allow, deny} for the MCP gateway, NULL = all
);
CREATE INDEX keys_agent ON keys (agent);

-- tools=[…] definitions seen in traces, for unregistered drafts (docs/api.md).
CREATE TABLE trace_tools (
  agent       TEXT NOT NULL,
  name        TEXT NOT NULL,
  definition  TEXT NOT NULL,
  seen_at     TEXT NOT NULL,
  PRIMARY KEY (agent, name)
);

-- Cron cursor (docs/learning.md): where the last tick stopped.
CREATE TABLE cron_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  cursor      TEXT NOT NULL DEFAULT '',
  updated_at  TEXT NOT NULL
);

-- 0004: compare-and-set guard for D1 batches (see migrations/0004_write_guards.sql).
CREATE TABLE write_guards (ok INTEGER NOT NULL CHECK (ok = 1));

-- 0005: who undid a revision, apart from who applied it.
ALTER TABLE revisions ADD COLUMN undone_at TEXT;
ALTER TABLE revisions ADD COLUMN undone_by TEXT;
ALTER TABLE revisions ADD COLUMN undone_key TEXT;

-- 0006: pinned tools (always loaded, never deferred in the stable list).
CREATE TABLE pins (
  agent TEXT NOT NULL,
  tool TEXT NOT NULL,
  pinned_at TEXT NOT NULL,
  pinned_by TEXT NOT NULL,
  PRIMARY KEY (agent, tool)
);

-- 0009: routing quality by settled UTC hour (see migrations/0009_quality_hours.sql).
CREATE TABLE quality_hours (
  agent         TEXT NOT NULL,
  tool          TEXT NOT NULL,
  hour          TEXT NOT NULL,
  routed_turns  INTEGER NOT NULL,
  served_turns  INTEGER NOT NULL,
  hits          INTEGER NOT NULL,
  rr            REAL NOT NULL,
  misses        INTEGER NOT NULL,
  confusions    INTEGER NOT NULL,
  failed_calls  INTEGER NOT NULL,
  PRIMARY KEY (agent, tool, hour)
);
CREATE INDEX quality_hours_agent_hour ON quality_hours (agent, hour);

CREATE TABLE quality_pairs (
  agent      TEXT NOT NULL,
  hour       TEXT NOT NULL,
  tool       TEXT NOT NULL,
  served_by  TEXT NOT NULL,
  count      INTEGER NOT NULL,
  PRIMARY KEY (agent, hour, tool, served_by)
);

CREATE TABLE quality_settled (
  agent    TEXT PRIMARY KEY,
  through  TEXT NOT NULL
);

-- 0011: the MCP gateway (see migrations/0011_upstreams.sql).
-- One upstream MCP server (Streamable HTTP) of an agent. Header values are sealed with the Worker
-- secret UPSTREAM_SECRET_KEY (AES-GCM, src/adapters/secret-box.ts) and never answered.
CREATE TABLE upstreams (
  agent          TEXT NOT NULL,
  name           TEXT NOT NULL,
  url            TEXT NOT NULL,
  header_names   TEXT NOT NULL DEFAULT '[]',        -- the names alone, for answers
  headers_sealed TEXT,                              -- sealed JSON {name: value}, or NULL when none
  timeout_ms     INTEGER NOT NULL,
  status         TEXT NOT NULL DEFAULT 'new',       -- new | ok | failing
  last_error     TEXT,
  failures       INTEGER NOT NULL DEFAULT 0,        -- failed syncs in a row (backoff)
  last_sync_at   TEXT,                              -- the last sync attempt
  next_sync_at   TEXT,                              -- when the cron tries it next
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  PRIMARY KEY (agent, name)
);
CREATE INDEX upstreams_next_sync ON upstreams (next_sync_at);

-- Which of the agent's tools an upstream serves, under which of its own names. A tool the upstream
-- no longer lists keeps its row (and its tool row, history and learned lines) with available = 0.
CREATE TABLE upstream_tools (
  agent        TEXT NOT NULL,
  tool         TEXT NOT NULL,                       -- the agent-level name (tools.name)
  upstream     TEXT NOT NULL,
  remote_name  TEXT NOT NULL,                       -- the name the upstream lists
  available    INTEGER NOT NULL DEFAULT 1,
  flags        TEXT NOT NULL DEFAULT '[]',          -- 0014: JSON [{kind, field, match, why}] a person should read
  definition   TEXT,                                -- 0015: JSON {name, description, inputSchema} in force (pinned)
  PRIMARY KEY (agent, tool)
);
CREATE INDEX upstream_tools_upstream ON upstream_tools (agent, upstream);

-- An MCP session's last search_tools turn: a forwarded call is logged on it.
CREATE TABLE gateway_sessions (
  agent            TEXT NOT NULL,
  session_id       TEXT NOT NULL,
  turn_id          TEXT NOT NULL,
  request          TEXT NOT NULL,
  conversation_id  TEXT,
  updated_at       TEXT NOT NULL,
  PRIMARY KEY (agent, session_id)
);

-- 0013: webhooks and their deliveries (see migrations/0013_webhooks.sql).
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

-- 0014: gateway safety (see migrations/0014_upstream_quarantine.sql).
-- A held definition of one upstream tool. A release holds for this definition only (its hash): a
-- later changed definition is checked again. A tool the upstream no longer lists loses its row.
CREATE TABLE upstream_quarantine (
  agent            TEXT NOT NULL,
  upstream         TEXT NOT NULL,
  remote_name      TEXT NOT NULL,                   -- the name the upstream lists
  tool             TEXT NOT NULL,                   -- the agent-level name it would be served under
  definition       TEXT NOT NULL,                   -- JSON {name, description, inputSchema} as listed
  definition_hash  TEXT NOT NULL,                   -- SHA-256 of the canonical definition
  findings         TEXT NOT NULL,                   -- JSON [{severity, check, field, text, match, why}]
  quarantined_at   TEXT NOT NULL,
  released_by      TEXT,                            -- the person who released it; NULL while held
  released_key     TEXT,                            -- the key that did (a key id, or 'admin')
  released_at      TEXT,
  PRIMARY KEY (agent, upstream, remote_name)
);
