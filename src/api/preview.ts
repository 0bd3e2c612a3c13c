/**
 * `POST /v1/agents/:agent/tools/:tool/preview`: the tool's model view now and with a
 * revision's additions, rendered by the same code as every model view (src/core/revision-preview.ts). The
 * dashboard sends a proposed revision's fields and shows the two as a diff. It writes nothing, so
 * it is a read (role `agent`).
 */
import { z } from '@hono/zod-openapi';
import { previewRevision } from '../core/revision-preview.ts';
import { notFound } from '../errors.ts';
import { Preview } from '../schemas.ts';
import { settingsOf } from '../services/route-serving.ts';
import { ToolParams, createApi, agentRoute } from './common.ts';

export const previewApi = createApi();

const Line = z.string().max(1000);
/** The Revision fields that change the model view (docs/api.md), so a Revision can be sent as it is. */
export const PreviewBody = z
  .object({
    notes_added: z.array(Line).max(50).default([]),
    avoid_added: z.array(Line).max(50).default([]),
    queries_added: z.array(Line).max(50).default([]),
    call_example: Line.nullable().default(null),
  })
  .openapi('PreviewBody');

agentRoute(previewApi, {
  method: 'post',
  path: '/v1/agents/{agent}/tools/{tool}/preview',
  need: 'read',
  summary: 'The model view of a tool now and with a revision applied (writes nothing)',
  params: ToolParams,
  body: PreviewBody,
  answer: Preview,
  answered: 'before and after',
  handler: async (c, { agent, tool, body }) => {
    const store = c.get('svc').store;
    const [row, agentRow] = await Promise.all([store.getTool(agent, tool), store.getAgent(agent)]);
    if (!row || !agentRow) throw notFound(`tool ${tool}`);
    return c.json(previewRevision(row, body, settingsOf(agentRow.settings).show_learned_examples), 200);
  },
});
