-- Routing memory (docs/learning.md "Routing memory"): per tool, the wordings of requests it finally
-- served, masked by the privacy rule, one copy each, within the agent's `memory_bytes` per tool.
-- Routing reads them beside the example requests; the model view never does. A JSON array of
-- {text, at} (at: epoch milliseconds of the latest request with that wording), newest first.
ALTER TABLE tools ADD COLUMN memory TEXT NOT NULL DEFAULT '[]';
