/**
 * The agent's log (turns, calls, outcomes, trace-seen tool definitions) as it lives in the agent's
 * Durable Object SQLite storage (docs/capacity.md "Where the log lives"). One database per agent,
 * so the `agent` column is the same on every row; it stays so the log's SQL reads the same
 * wherever it runs, and so an exported row says whose it is. Idempotent: it runs on every start
 * of the object and after the agent is forgotten.
 *
 * Indexes: each bounded read of the log (src/adapters/log-turns.ts, log-review-reads.ts, log-usage.ts, log-activity.ts)
 * is an index range with a LIMIT; test/adapters/query-plans.test.ts checks the plans.
 */
import type { SqlStatement } from './log-db.ts';

/** The columns of each log table that a write fills after `agent` (`seq` is SQLite's), in order. */
export const LOG_COLUMNS = {
  turns: ['turn_id', 'request', 'conversation_id', 'routed', 'offered', 'source', 'created_at'],
  calls: ['call_id', 'tool', 'arguments', 'success', 'error', 'request', 'turn_id', 'conversation_id', 'at'],
  outcomes: ['turn_id', 'ok', 'served_by', 'at'],
  trace_tools: ['name', 'definition', 'seen_at'],
} as const;
export const AGENT_LOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS turns (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  agent            TEXT NOT NULL,
  turn_id          TEXT NOT NULL,
  request          TEXT,
  conversation_id  TEXT,
  routed           INTEGER NOT NULL,
  offered          TEXT NOT NULL DEFAULT '[]',
  source           TEXT NOT NULL DEFAULT 'route',
  created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS turns_agent_turn ON turns (agent, turn_id);
CREATE INDEX IF NOT EXISTS turns_agent_conversation ON turns (agent, conversation_id, seq);
CREATE INDEX IF NOT EXISTS turns_agent_seq ON turns (agent, seq);
CREATE INDEX IF NOT EXISTS turns_agent_top ON turns (agent, json_extract(offered, '$[0].name'), seq) WHERE routed = 1;
CREATE INDEX IF NOT EXISTS turns_agent_routed_created ON turns (agent, created_at) WHERE routed = 1;
CREATE INDEX IF NOT EXISTS turns_agent_created ON turns (agent, created_at);

CREATE TABLE IF NOT EXISTS calls (
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
CREATE UNIQUE INDEX IF NOT EXISTS calls_agent_id ON calls (agent, call_id);
CREATE INDEX IF NOT EXISTS calls_agent_tool_seq ON calls (agent, tool, seq);
CREATE INDEX IF NOT EXISTS calls_agent_turn ON calls (agent, turn_id);
CREATE INDEX IF NOT EXISTS calls_agent_seq ON calls (agent, seq);
CREATE INDEX IF NOT EXISTS calls_agent_conversation ON calls (agent, conversation_id, seq);
CREATE INDEX IF NOT EXISTS calls_agent_tool_at ON calls (agent, tool, at, success);
CREATE INDEX IF NOT EXISTS calls_agent_at ON calls (agent, at);

CREATE TABLE IF NOT EXISTS outcomes (
  agent      TEXT NOT NULL,
  turn_id    TEXT NOT NULL,
  ok         INTEGER NOT NULL,
  served_by  TEXT,
  at         TEXT NOT NULL,
  PRIMARY KEY (agent, turn_id)
);
CREATE INDEX IF NOT EXISTS outcomes_agent_at ON outcomes (agent, at);

CREATE TABLE IF NOT EXISTS trace_tools (
  agent       TEXT NOT NULL,
  name        TEXT NOT NULL,
  definition  TEXT NOT NULL,
  seen_at     TEXT NOT NULL,
  PRIMARY KEY (agent, name)
);
`;

/**
 * The statements that start the log's seqs above `floor` (the highest seqs a D1 log of an earlier
 * version gave): a placeholder row at the floor, removed at once, leaves AUTOINCREMENT past it.
 */
export function seqFloorStatements(floor: { turns: number; calls: number }): SqlStatement[] {
  return [
    ...(floor.turns > 0
      ? [
          {
            sql: "INSERT OR IGNORE INTO turns (seq, agent, turn_id, routed, created_at) VALUES (?, '', '', 0, '')",
            params: [floor.turns],
          },
          { sql: "DELETE FROM turns WHERE seq = ? AND agent = '' AND turn_id = ''", params: [floor.turns] },
        ]
      : []),
    ...(floor.calls > 0
      ? [
          {
            sql: "INSERT OR IGNORE INTO calls (seq, agent, call_id, tool, arguments, success, at) VALUES (?, '', '', '', '{}', 0, '')",
            params: [floor.calls],
          },
          { sql: "DELETE FROM calls WHERE seq = ? AND agent = '' AND call_id = ''", params: [floor.calls] },
        ]
      : []),
  ];
}
