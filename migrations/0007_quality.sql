-- Routing quality per day (GET …/quality, docs/api.md "Quality"): the window's turns (routed or
-- not: a stable-list turn can still be served) and calls are read by time.
CREATE INDEX turns_agent_created ON turns (agent, created_at);
CREATE INDEX calls_agent_at ON calls (agent, at);
