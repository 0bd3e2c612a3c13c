-- Indexes for the dashboard's activity chart (GET …/tools/:tool/activity): both reads are
-- a range over a time window, so they do not grow with the size of the log outside it.

-- Calls and failed calls of one tool per day or hour: covering (success included), no table reads.
CREATE INDEX calls_agent_tool_at ON calls (agent, tool, at, success);

-- Routing offers per day or hour: only routed turns offer (docs/learning.md), newest first within the window.
CREATE INDEX turns_agent_routed_created ON turns (agent, created_at) WHERE routed = 1;
