-- The log (turns, calls, outcomes, trace_tools) lives in each agent's Durable Object from here on
-- (docs/capacity.md "Where the log lives"). D1 keeps, per agent, the newest call seq of that log,
-- so the cron finds agents with calls since their last review without asking every object.
ALTER TABLE agents ADD COLUMN last_call_seq INTEGER NOT NULL DEFAULT 0;
UPDATE agents SET last_call_seq = COALESCE((SELECT MAX(c.seq) FROM calls c WHERE c.agent = agents.agent), 0);
