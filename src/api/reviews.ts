/**
 * Tool learning over HTTP (docs/api.md): `POST …/reviews` (operator), the revisions it stored
 * (`GET …/revisions`, `GET …/revisions/:id`) and `POST …/outcomes`, the application's word on which
 * tool should have served a turn (`verified` evidence).
 */
import { z } from '@hono/zod-openapi';
import { type CursorKey, encodeCursor } from '../core/pagination.ts';
import { ApiError, notFound } from '../errors.ts';
import { OutcomeBody, Review, ReviewBody, Revision, RevisionPage, RevisionStatus, ToolName } from '../schemas.ts';
import { runReview } from '../services/review.ts';
import { IdParams, MAX_PAGE, PageQuery, actorOf, createApi, cursorOf, nowIso, agentRow, agentRoute } from './common.ts';
import { turnWritten } from '../services/turn-writer.ts';

export const reviewsApi = createApi();

agentRoute(reviewsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/reviews',
  need: 'operator',
  summary: 'Review the tools from the call log: one checked model call per tool with something to fix',
  description:
    'Stores the revisions as `proposed` (not with `dry_run`). 409 `conflict` while another review of the same agent runs ' +
    '(a manual one or the cron); 502 never: a model failure for one tool is a skip with its reason.',
  body: ReviewBody,
  answer: Review,
  answered: 'the review: revisions, refusals, skips, usage flags, model calls',
  errors: [400, 401, 403, 404, 409],
  handler: async (c, { agent, body }) => {
    const opts = { dry_run: body.dry_run, auto_apply: body.auto_apply, config: body.config, actor: actorOf(c) };
    return c.json(await runReview(c.get('svc'), agent, opts, nowIso(), 'api'), 200);
  },
});

const RevisionQuery = z
  .object({
    tool: ToolName.optional().openapi({ param: { name: 'tool', in: 'query' } }),
    status: RevisionStatus.optional().openapi({ param: { name: 'status', in: 'query' } }),
  })
  .extend(PageQuery.shape);

agentRoute(reviewsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/revisions',
  need: 'read',
  summary: 'Revisions, newest first, optionally of one tool and one status',
  query: RevisionQuery,
  answer: RevisionPage,
  answered: 'revisions, newest first; next_cursor is null on the last page',
  handler: async (c, { agent, query: { tool, status, limit, cursor } }) => {
    const svc = c.get('svc');
    await agentRow(c, agent);
    const after = revisionCursor(cursorOf(cursor));
    const page = await svc.revisions.pageRevisions(agent, { tool, status, limit: limit ?? MAX_PAGE }, after);
    return c.json({ revisions: page.revisions, next_cursor: page.next ? encodeCursor(page.next) : null }, 200);
  },
});

agentRoute(reviewsApi, {
  method: 'get',
  path: '/v1/agents/{agent}/revisions/{id}',
  need: 'read',
  summary: 'One revision with its evidence and ranks',
  params: IdParams,
  answer: Revision,
  answered: 'the revision',
  handler: async (c, { agent, id }) => {
    const revision = await c.get('svc').revisions.getRevision(agent, id);
    if (!revision) throw notFound(`revision ${id}`);
    return c.json(revision, 200);
  },
});

agentRoute(reviewsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/outcomes',
  need: 'agent',
  summary: 'Report how a turn ended and which tool should have served it (docs/learning.md `verified`)',
  description:
    'The turn must have been routed (or traced) for this agent: 404 otherwise. A later report for the same turn replaces the earlier one.',
  body: OutcomeBody,
  answer: null,
  answered: 'stored',
  handler: async (c, { agent, body }) => {
    const log = c.get('svc').log;
    // A turn /route answered a moment ago may still be in this isolate's write window.
    await turnWritten(agent, body.turn_id);
    if (!(await log.getTurn(agent, body.turn_id))) throw notFound(`turn ${body.turn_id}`);
    await log.upsertOutcome(agent, {
      turn_id: body.turn_id,
      ok: body.ok,
      served_by: body.served_by ?? null,
      at: nowIso(),
    });
    return c.body(null, 204);
  },
});

/** A revisions cursor holds the created_at and rowid of the last revision served. */
function revisionCursor(key: CursorKey | null): [string, number] | null {
  if (key === null) return null;
  const [at, position] = key;
  if (typeof at === 'string' && typeof position === 'number') return [at, position];
  throw new ApiError('invalid_request', 'cursor is not a next_cursor of this list', [
    { path: ['cursor'], message: 'pass back the next_cursor of the previous page unchanged' },
  ]);
}
