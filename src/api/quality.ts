/**
 * `GET /v1/agents/:agent/quality`: routing quality per UTC day from the log — did routing offer the
 * tool that finally served each request — and what each applied revision changed (docs/api.md
 * "Quality"). A read (role `agent`).
 */
import { z } from '@hono/zod-openapi';
import { MAX_QUALITY_DAYS, qualityOf } from '../services/quality-report.ts';
import { notFound } from '../errors.ts';
import { AgentParams, agentFor, createApi, nowIso, agentRow, apiRoute } from './common.ts';

export const qualityApi = createApi();

const QualityQuery = z.object({
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_QUALITY_DAYS)
    .default(30)
    .openapi({ param: { name: 'days', in: 'query' }, description: `UTC days ending today (1–${MAX_QUALITY_DAYS})` }),
  tool: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ param: { name: 'tool', in: 'query' }, description: 'only this registered tool' }),
});

const Counts = z.object({ served_turns: z.number().int(), hits: z.number().int() });

export const Quality = z
  .object({
    days: z.array(
      z.object({
        date: z.string(),
        routed_turns: z.number().int(),
        served_turns: z.number().int(),
        hits: z.number().int(),
        hit_rate: z.number().nullable(),
        mrr: z.number().nullable(),
        misses: z.number().int(),
        confusions: z.number().int(),
        failed_calls: z.number().int(),
      }),
    ),
    revisions: z.array(
      z.object({
        revision_id: z.string(),
        tool: z.string(),
        applied_at: z.string(),
        undone_at: z.string().nullable(),
        before: Counts,
        after: Counts,
      }),
    ),
    top_missed: z.array(z.object({ tool: z.string(), misses: z.number().int() })),
    top_confused: z.array(z.object({ tool: z.string(), served_by: z.string(), count: z.number().int() })),
    truncated: z.boolean(),
  })
  .openapi('Quality');

qualityApi.openapi(
  apiRoute({
    method: 'get',
    path: '/v1/agents/{agent}/quality',
    summary: 'Routing hit rate per UTC day and what each applied revision changed',
    params: AgentParams,
    query: QualityQuery,
    answer: Quality,
    answered: 'zero-filled days, oldest first',
  }),
  async (c) => {
    const agent = agentFor(c, c.req.valid('param').agent, 'read');
    const { days, tool } = c.req.valid('query');
    const svc = c.get('svc');
    await agentRow(c, agent);
    if (tool !== undefined && !(await svc.store.getTool(agent, tool))) throw notFound(`tool ${tool}`);
    const now = nowIso();
    const [applied, undone] = await Promise.all([
      svc.revisions.listRevisions(agent, { status: 'applied', ...(tool ? { tool } : {}) }),
      svc.revisions.listRevisions(agent, { status: 'undone', ...(tool ? { tool } : {}) }),
    ]);
    const windowStart = `${new Date(Date.parse(`${now.slice(0, 10)}T00:00:00.000Z`) - (days - 1) * 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z`;
    // Revisions of lines: routing memory comes with every review of a busy tool, and what it does
    // shows in the hit rate itself (docs/api.md "Quality").
    const revisions = [...applied, ...undone]
      .filter((r) => r.kind !== 'memory' && r.applied_at !== null && r.applied_at >= windowStart)
      .sort((a, b) => (a.applied_at ?? '').localeCompare(b.applied_at ?? ''))
      .map((r) => ({
        revision_id: r.revision_id,
        tool: r.tool,
        applied_at: r.applied_at ?? '',
        undone_at: r.undone_at,
      }));
    const report = await qualityOf(svc, agent, { days, tool }, revisions, now);
    return c.json(report, 200);
  },
);
