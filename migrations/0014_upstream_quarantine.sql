-- Gateway safety (docs/security.md "The MCP gateway"): an upstream tool whose definition fails the
-- definition check is held here, not registered, until a person releases it; a tool that is served
-- but should be read by a person carries flags.

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

-- Why a served tool should be read by a person: JSON [{kind, field, match, why}], kinds
-- other_named (its text names another tool), name_collision (its name folds to another tool's),
-- calls_other_tool, name.
ALTER TABLE upstream_tools ADD COLUMN flags TEXT NOT NULL DEFAULT '[]';
