-- Routing quality by UTC hour (GET …/quality, docs/api.md "Quality"). Once an hour has settled (its
-- conversations have had time to re-ask), its counts are computed once from the log and kept here,
-- per tool and for the whole agent (tool = ''), so a report reads at most a few thousand rows
-- whatever the log holds. quality_settled says up to which hour (excluded) an agent is counted.
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
