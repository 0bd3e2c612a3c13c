-- The log (turns, calls, outcomes, trace_tools) lives in each agent's Durable Object from here on
-- (docs/capacity.md "Where the log lives"). D1 keeps, per agent, the newest call seq of that log,
-- so the cron finds agents with calls since their last review without asking every object, and
-- how many calls the log holds, so the agent list does not either.
ALTER TABLE agents ADD COLUMN last_call_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN calls_logged INTEGER NOT NULL DEFAULT 0;
UPDATE agents SET
  last_call_seq = COALESCE((SELECT MAX(c.seq) FROM calls c WHERE c.agent = agents.agent), 0),
  calls_logged = (SELECT COUNT(*) FROM calls c WHERE c.agent = agents.agent);
