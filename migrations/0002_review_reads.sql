-- Indexes for the bounded reads of a tool-learning review (docs/learning.md). Every review
-- read is an index range with a LIMIT, so review time does not grow with the size of the log.

-- "Turns where routing ranked a tool first" (docs/learning.md confused request, `ranked_first`): `offered`
-- is stored best first, so its first entry is the rank-1 tool. Partial: only routed turns rank.
CREATE INDEX turns_agent_top ON turns (agent, json_extract(offered, '$[0].name'), seq) WHERE routed = 1;

-- Neighbouring runs of a conversation whose calls were logged without a recorded turn
-- (`next_request`, `re_asked`): the previous and next call of the conversation.
CREATE INDEX calls_agent_conversation ON calls (agent, conversation_id, seq);

-- Tools with a revision waiting (status 'proposed') are not reviewed again (docs/learning.md).
CREATE INDEX revisions_agent_status ON revisions (agent, status, tool);
