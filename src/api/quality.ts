/**
 * `GET /v1/agents/:agent/quality`: routing quality per UTC day from the log — did routing offer the
 * tool that finally served each request — and what each applied revision changed (docs/api.md
 * "Quality"). A read (role `agent`).
 */
import { z } from '@hono/zod-openapi';
import { approvalStats } from '../core/approval-stats.ts';
import { Quality } from '../schemas.ts';
import { MAX_QUALITY_DAYS, qualityOf } from '../services/quality-report.ts';
import { AUTO_APPLY_BY } from '../services/review.ts';
import { notFound } from '../errors.ts';
import { createApi, nowIso, agentRow, agentRoute } from './common.ts';

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

agentRoute(qualityApi, {
  method: 'get',
  path: '/v1/agents/{agent}/quality',
  need: 'read',
  summary: 'Routing hit rate per UTC day and what each applied revision changed',
  query: QualityQuery,
  answer: Quality,
  answered: 'zero-filled days, oldest first',
  handler: async (c, { agent, query: { days, tool } }) => {
    const svc = c.get('svc');
    await agentRow(c, agent);
    if (tool !== undefined && !(await svc.store.getTool(agent, tool))) throw notFound(`tool ${tool}`);
    const now = nowIso();
    const [applied, undone, dismissed] = await Promise.all([
      svc.revisions.listRevisions(agent, { status: 'applied', ...(tool ? { tool } : {}) }),
      svc.revisions.listRevisions(agent, { status: 'undone', ...(tool ? { tool } : {}) }),
      svc.revisions.listRevisions(agent, { status: 'dismissed', ...(tool ? { tool } : {}) }),
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
    const approvals = approvalStats([...applied, ...undone, ...dismissed], windowStart, AUTO_APPLY_BY);
    return c.json({ ...report, approvals }, 200);
  },
});
