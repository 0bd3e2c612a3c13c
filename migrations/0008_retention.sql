-- Log retention (docs/configuration.md log_retention_days): the scheduled handler removes an
-- agent's outcomes older than its window, oldest first, by this index (turns and calls use 0007's).
CREATE INDEX outcomes_agent_at ON outcomes (agent, at);
