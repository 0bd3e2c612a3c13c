/** Pinned tools (docs/tool-delivery.md): pin, unpin, list, and the suggestion read from the log. */
import { z } from '@hono/zod-openapi';
import { attributeRuns } from '../core/attribution.ts';
import { suggestPins } from '../core/pin-suggestion.ts';
import { groupRuns } from '../core/serving.ts';
import { notFound } from '../errors.ts';
import { ToolParams, actorOf, createApi, nowIso, agentRow, agentRoute } from './common.ts';

export const pinsApi = createApi();

/** At most this many turns and calls of the window are read for a suggestion, newest first. */
const WINDOW_ROWS = 20000;

const Pin = z.object({ tool: z.string(), pinned_at: z.string(), pinned_by: z.string() });
const PinSuggestion = z.object({
  share: z.number(),
  days: z.number().int(),
  served_runs: z.number().int(),
  covered_runs: z.number().int(),
  covered_share: z.number(),
  tools: z.array(z.object({ name: z.string(), served_runs: z.number().int(), share: z.number(), pinned: z.boolean() })),
});
const SuggestQuery = z
  .object({
    share: z.coerce.number().gt(0).max(1).default(0.8),
    days: z.coerce.number().int().min(1).max(365).default(14),
  })
  .strict();

agentRoute(pinsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/pins',
  need: 'read',
  summary: 'Pinned tools (always loaded, never deferred)',
  answer: z.object({ pins: z.array(Pin) }),
  answered: 'pinned tools by name',
  handler: async (c, { agent }) => {
    await agentRow(c, agent);
    return c.json({ pins: await c.get('svc').pins.list(agent) }, 200);
  },
});

agentRoute(pinsApi, {
  method: 'put',
  path: '/v1/agents/{agent}/tools/{tool}/pin',
  need: 'operator',
  summary: 'Pin a tool (an operator decision); pinning a pinned tool changes nothing',
  params: ToolParams,
  answer: z.object({ pins: z.array(Pin) }),
  answered: 'every pin of the agent',
  handler: async (c, { agent, tool }) => {
    const svc = c.get('svc');
    if (!(await svc.store.getTool(agent, tool))) throw notFound(`tool ${tool}`);
    await svc.pins.pin(agent, tool, nowIso(), actorOf(c));
    return c.json({ pins: await svc.pins.list(agent) }, 200);
  },
});

agentRoute(pinsApi, {
  method: 'delete',
  path: '/v1/agents/{agent}/tools/{tool}/pin',
  need: 'operator',
  summary: 'Unpin a tool',
  params: ToolParams,
  answer: null,
  answered: 'unpinned',
  handler: async (c, { agent, tool }) => {
    if (!(await c.get('svc').pins.unpin(agent, tool))) throw notFound(`pin of ${tool}`);
    return c.body(null, 204);
  },
});

agentRoute(pinsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/pins/suggested',
  need: 'read',
  summary:
    'The smallest set of tools that finally served `share` of the served runs over `days` (pinning stays an operator decision)',
  query: SuggestQuery,
  answer: PinSuggestion,
  answered: 'suggested pins, most served first',
  handler: async (c, { agent, query: { share, days } }) => {
    await agentRow(c, agent);
    const svc = c.get('svc');
    const since = new Date(Date.now() - days * 86_400_000).toISOString();
    const [log, pinned] = await Promise.all([svc.log.windowLog(agent, since, WINDOW_ROWS), svc.pins.pinned(agent)]);
    const runs = groupRuns(log.turns, log.calls);
    const served = [...attributeRuns(runs).values()].flatMap((a) => (a.served_by === null ? [] : [a.served_by]));
    const s = suggestPins(served, share);
    return c.json({ share, days, ...s, tools: s.tools.map((t) => ({ ...t, pinned: pinned.has(t.name) })) }, 200);
  },
});
