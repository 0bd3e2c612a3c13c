/** Apply, dismiss and undo (docs/api.md): the operator's decisions on revisions. */

import { bulkAnswer, bulkItem } from '../core/bulk.ts';
import { ApiError } from '../errors.ts';
import { ApplyBody, BulkAnswer, BulkBody, DismissBody, Revision, UndoBody } from '../schemas.ts';
import { applyContext, applyRevision, dismissRevision, undoTool } from '../services/apply.ts';
import { approverEdit } from '../services/edit.ts';
import { IdParams, ToolParams, actorOf, createApi, nowIso, agentRoute } from './common.ts';

export const revisionsApi = createApi();

const decisionErrors = [400, 401, 403, 404, 409];

agentRoute(revisionsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/revisions/{id}/apply',
  need: 'decide',
  summary:
    'Apply a proposed revision, optionally with its lines edited (400 naming the line and check an edit fails; 409 when it is not proposed, or the row moved under it)',
  params: IdParams,
  body: ApplyBody,
  answer: Revision,
  answered: 'the revision, now applied',
  errors: decisionErrors,
  handler: async (c, { agent, id, body }) => {
    const svc = c.get('svc');
    const edit = body.edit ? { ...approverEdit(svc, agent, body.edit), edited_by: body.approved_by } : null;
    const rev = await applyRevision(
      svc,
      agent,
      id,
      { approved_by: body.approved_by, actor: actorOf(c) },
      nowIso(),
      applyContext(),
      edit,
    );
    return c.json(rev, 200);
  },
});

agentRoute(revisionsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/revisions/{id}/dismiss',
  need: 'decide',
  summary: 'Close a proposed revision without applying it',
  params: IdParams,
  body: DismissBody,
  answer: Revision,
  answered: 'the revision, now dismissed',
  errors: decisionErrors,
  handler: async (c, { agent, id, body }) => {
    const rev = await dismissRevision(c.get('svc'), agent, id, {
      approved_by: body.approved_by,
      actor: actorOf(c),
      reason: body.reason ?? null,
    });
    return c.json(rev, 200);
  },
});

agentRoute(revisionsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/tools/{tool}/undo',
  need: 'decide',
  summary: 'Take back the newest applied revision of a tool (409 when the row was edited since)',
  params: ToolParams,
  body: UndoBody,
  answer: Revision,
  answered: 'the revision, now undone',
  errors: decisionErrors,
  handler: async (c, { agent, tool, body }) => {
    const rev = await undoTool(
      c.get('svc'),
      agent,
      tool,
      { approved_by: body.approved_by, actor: actorOf(c) },
      nowIso(),
    );
    return c.json(rev, 200);
  },
});

agentRoute(revisionsApi, {
  method: 'post',
  path: '/v1/agents/{agent}/revisions/bulk',
  need: 'decide',
  summary:
    'Apply or dismiss several proposed revisions, each on its own; the answer says which were decided and why the others were not',
  body: BulkBody,
  answer: BulkAnswer,
  answered: 'one result per revision, in the order asked',
  errors: [400, 401, 403, 404],
  handler: async (c, { agent, body }) => {
    const svc = c.get('svc');
    const who = { approved_by: body.approved_by, actor: actorOf(c) };
    const ctx = applyContext();
    const items = [];
    // One at a time: the applies share one context, and each decision is its own guarded write.
    for (const id of body.revision_ids) {
      try {
        const rev =
          body.action === 'apply'
            ? await applyRevision(svc, agent, id, who, nowIso(), ctx)
            : await dismissRevision(svc, agent, id, { ...who, reason: body.reason ?? null });
        items.push(bulkItem(id, { status: rev.status }, errorOf));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        items.push(bulkItem(id, { error }, errorOf));
      }
    }
    return c.json(bulkAnswer(items), 200);
  },
});

function errorOf(err: unknown): { code: string; message: string } {
  return err instanceof ApiError ? { code: err.code, message: err.message } : { code: 'internal', message: 'failed' };
}
