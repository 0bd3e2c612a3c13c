-- Pinned tools: always loaded, never deferred in the stable list (docs/tool-delivery.md). An
-- operator's decision; GET …/pins/suggested only proposes.
CREATE TABLE pins (
  agent TEXT NOT NULL,
  tool TEXT NOT NULL,
  pinned_at TEXT NOT NULL,
  pinned_by TEXT NOT NULL,
  PRIMARY KEY (agent, tool)
);
