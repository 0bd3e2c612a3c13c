-- The MCP gateway (docs/integrations.md "Whetstone as an MCP gateway"): an agent's upstream MCP
-- servers, which of its tools came from which upstream, each MCP session's last search_tools turn,
-- and the tools a key may use.

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

-- The tools a key may use through the MCP endpoint: {"allow": [...], "deny": [...]} of tool names
-- or `upstream:<name>`; NULL = every tool.
ALTER TABLE keys ADD COLUMN tool_access TEXT;
