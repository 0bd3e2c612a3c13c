/**
 * Apply, undo and dismiss (docs/learning.md;). Each reads the row and the revision, asks the pure
 * plan in src/core/learning.ts what the row becomes, and writes row + vector + version entry +
 * revision status in ONE D1 batch guarded twice: the tool_versions primary key (nobody else wrote
 * the row) and a write guard on the revision's status (nobody else applied or dismissed it).
 * Two concurrent applies of one revision: one wins, the other gets 409 and writes nothing.
 */
import { isWriteConflict, revisionStatusGuard, VersionConflict, type ToolWrite } from '../adapters/d1-store.ts';
import {
  findDisplaced,
  learnedState,
  planApply,
  requestsServedByOthers,
  withdrawExamples,
  type LearnedState,
} from '../core/learning.ts';
import type { StoredTool } from '../core/records.ts';
import { buildRoutingIndex, embeddingText } from '../core/routing.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import type { Displacement, Revision, Settings } from '../schemas.ts';
import { routingDocs, settingsOf } from './routing.ts';
import { embedTools } from './tool-vectors.ts';

/** Recent turns and calls read for the displacement re-check, and distinct requests checked. */
const RECHECK_ROWS = 1000;
const RECHECK_REQUESTS = 200;

/** What the audit columns record for a write: the person's name and the key that did it. */
export interface Approval {
  approved_by: string;
  actor: string;
}

/** Applies a proposed revision; returns it as stored (now `applied`). */
export async function applyRevision(
  svc: Services,
  agent: string,
  revisionId: string,
  who: Approval,
  now: string,
): Promise<Revision> {
  const rev = await requireStatus(svc, agent, revisionId, 'proposed');
  const [row, settings, tools] = await Promise.all([
    svc.store.getTool(agent, rev.tool),
    agentSettings(svc, agent),
    svc.store.listTools(agent),
  ]);
  if (!row) throw new ApiError('conflict', `tool ${rev.tool} is no longer registered`);
  const registered = new Set(tools.map((t) => t.name));
  let plan = planApply(learnedState(row), rev, settings, registered);
  let next = await withState(svc, row, plan.state, now);
  const recheck = plan.queries_added.length > 0 ? await recheckOf(svc, agent, tools, row.name) : null;
  const displaced = recheck ? recheck.displacedBy(next, settings.top_k) : [];
  let withdrawn: string[] = [];
  if (recheck && displaced.length > 0) {
    // Only the examples that push a served tool out are withdrawn: each is tried in turn on top of
    // those kept so far, and kept when the re-check finds no displacement.
    const kept: string[] = [];
    for (const text of plan.queries_added) {
      const trial = planApply(learnedState(row), { ...rev, queries_added: [...kept, text] }, settings, registered);
      const trialRow = await withState(svc, row, trial.state, now);
      if (recheck.displacedBy(trialRow, settings.top_k).length === 0) kept.push(text);
    }
    withdrawn = plan.queries_added.filter((q) => !kept.includes(q));
    plan =
      kept.length > 0
        ? planApply(learnedState(row), { ...rev, queries_added: kept }, settings, registered)
        : withdrawExamples(learnedState(row), plan);
    next = await withState(svc, row, plan.state, now);
  }
  const guard = revisionStatusGuard(svc.store.db, agent, revisionId, 'proposed');
  const update = await svc.revisions.updateRevisionStatement(agent, revisionId, 'proposed', {
    status: 'applied',
    applied_at: now,
    approved_by: who.approved_by,
    approved_key: who.actor,
    before_row: JSON.stringify(snapshot(row)),
    applied_version: next.version,
    body: {
      queries_added: plan.queries_added,
      queries_withdrawn: withdrawn,
      displaced,
      queries_displaced: plan.queries_displaced,
      refused: [...rev.refused, ...plan.refused],
    },
  });
  if (!update) throw notFound(`revision ${revisionId}`);
  await writeGuarded(svc, agent, rowWrite(row, next, `revision:${revisionId}`), now, [
    guard.before,
    update,
    guard.after,
  ]);
  return reread(svc, agent, revisionId);
}

/**
 * Takes back the newest applied revision of a tool and restores the row as it was before it.
 * Repeated, it steps back through the applied revisions while only undos changed the row.
 */
export async function undoTool(
  svc: Services,
  agent: string,
  tool: string,
  who: Approval,
  now: string,
): Promise<Revision> {
  const row = await svc.store.getTool(agent, tool);
  if (!row) throw notFound(`tool ${tool}`);
  const [newest] = await svc.revisions.listRevisions(agent, { tool, status: 'applied', limit: 1 });
  if (!newest) throw new ApiError('conflict', `tool ${tool} has no applied revision to undo`);
  const record = await svc.revisions.getRevisionRecord(agent, newest.revision_id);
  if (!record?.before_row)
    throw new ApiError('conflict', `revision ${newest.revision_id} kept no earlier state to restore`);
  if (row.version !== newest.applied_version && !(await onlyUndosSince(svc, agent, tool, newest.applied_version))) {
    throw new ApiError(
      'conflict',
      `tool ${tool} was edited since revision ${newest.revision_id} was applied (version ${newest.applied_version ?? '?'}, now ${row.version}); undo would lose that edit`,
    );
  }
  const before = JSON.parse(record.before_row) as Snapshot;
  const restored: StoredTool = {
    ...row,
    ...before.state,
    vector: before.vector ? Float32Array.from(before.vector) : null,
    embedder: before.embedder,
    version: row.version + 1,
    updated_at: now,
  };
  const guard = revisionStatusGuard(svc.store.db, agent, newest.revision_id, 'applied');
  const update = await svc.revisions.updateRevisionStatement(agent, newest.revision_id, 'applied', {
    status: 'undone',
    undone_at: now,
    undone_by: who.approved_by,
    undone_key: who.actor,
  });
  if (!update) throw notFound(`revision ${newest.revision_id}`);
  await writeGuarded(svc, agent, rowWrite(row, restored, `undo:${newest.revision_id}`), now, [
    guard.before,
    update,
    guard.after,
  ]);
  return reread(svc, agent, newest.revision_id);
}

/**
 * True when the tool's writes since `version` are later revisions and their undos, each revision
 * undone (docs/learning.md "Undo"): undo then steps back through the tool's applied revisions,
 * newest first. Each undo restored the state before its revision, so the row is as `version` left it.
 */
async function onlyUndosSince(svc: Services, agent: string, tool: string, version: number | null): Promise<boolean> {
  if (version === null) return false;
  const since = (await svc.store.listVersions(agent, tool)).filter((v) => v.version > version);
  const undone = new Set(since.flatMap((v) => (v.source.startsWith('undo:') ? [v.source.slice('undo:'.length)] : [])));
  return (
    since.length > 0 &&
    since.every(
      (v) =>
        v.source.startsWith('undo:') ||
        (v.source.startsWith('revision:') && undone.has(v.source.slice('revision:'.length))),
    )
  );
}

/** Closes a proposed revision without touching the tool. */
export async function dismissRevision(
  svc: Services,
  agent: string,
  revisionId: string,
  who: Approval & { reason: string | null },
): Promise<Revision> {
  await requireStatus(svc, agent, revisionId, 'proposed');
  const update = await svc.revisions.updateRevisionStatement(agent, revisionId, 'proposed', {
    status: 'dismissed',
    approved_by: who.approved_by,
    approved_key: who.actor,
    reason: who.reason,
  });
  if (!update || (await update.run()).meta.changes === 0)
    throw new ApiError('conflict', `revision ${revisionId} changed while it was being dismissed`);
  return reread(svc, agent, revisionId);
}

async function requireStatus(svc: Services, agent: string, id: string, status: Revision['status']): Promise<Revision> {
  const rev = await svc.revisions.getRevision(agent, id);
  if (!rev) throw notFound(`revision ${id}`);
  if (rev.status !== status) throw new ApiError('conflict', `revision ${id} is ${rev.status}, not ${status}`);
  return rev;
}

async function agentSettings(svc: Services, agent: string): Promise<Settings> {
  const row = await svc.store.getAgent(agent);
  if (!row) throw notFound(`agent ${agent}`);
  return settingsOf(row.settings);
}

/** The row with a new learned state, version + 1, re-embedded when its embedding text changed. */
async function withState(svc: Services, row: StoredTool, state: LearnedState, now: string): Promise<StoredTool> {
  const next: StoredTool = { ...row, ...state, version: row.version + 1, updated_at: now };
  if (embeddingText(next) !== embeddingText(row) || !row.vector) {
    const [vector] = await embedTools(svc.embedder, [next]);
    next.vector = vector ?? null;
    next.embedder = svc.embedder.id;
  }
  return next;
}

/**
 * docs/learning.md re-check: routing again, from stored vectors, for the recent requests other
 * tools served. The log is read and those requests embedded once per apply; `displacedBy` then
 * answers, for a changed row, the requests whose serving tool it pushes out of the offered set.
 */
async function recheckOf(
  svc: Services,
  agent: string,
  tools: StoredTool[],
  name: string,
): Promise<{ displacedBy(changed: StoredTool, k: number): Displacement[] }> {
  const registered = new Set(tools.map((t) => t.name));
  const served = requestsServedByOthers(await svc.log.recentLog(agent, RECHECK_ROWS), name, RECHECK_REQUESTS).filter(
    (r) => registered.has(r.served_by),
  );
  if (served.length === 0) return { displacedBy: () => [] };
  const docs = await routingDocs(svc, tools);
  const before = buildRoutingIndex(docs);
  const vectors = await svc.embedder.embed(served.map((r) => r.text));
  const requests = served.map((r, i) => ({ ...r, vector: vectors[i] ?? new Float32Array(svc.embedder.dimensions) }));
  return {
    displacedBy(changed, k) {
      const after = buildRoutingIndex(
        docs.map((d) =>
          d.name === changed.name
            ? { name: d.name, text: embeddingText(changed), vector: changed.vector ?? d.vector }
            : d,
        ),
      );
      return findDisplaced(before, after, requests, k);
    },
  };
}

/** What undo restores byte for byte: the learned state and the vector with its embedder. */
interface Snapshot {
  state: LearnedState;
  vector: number[] | null;
  embedder: string;
}

function snapshot(row: StoredTool): Snapshot {
  return { state: learnedState(row), vector: row.vector ? Array.from(row.vector) : null, embedder: row.embedder };
}

function rowWrite(prev: StoredTool, next: StoredTool, source: string): ToolWrite {
  return {
    tool: next,
    expected_version: prev.version,
    definition: {
      name: next.name,
      description: next.docstring,
      parameters: next.parameters,
      learned: { examples: next.examples, notes: next.notes, avoid: next.avoid, call_example: next.call_example },
    },
    source,
  };
}

async function writeGuarded(
  svc: Services,
  agent: string,
  write: ToolWrite,
  now: string,
  extra: D1PreparedStatement[],
): Promise<void> {
  try {
    await svc.store.writeTools(agent, [write], now, extra);
  } catch (err) {
    if (err instanceof VersionConflict || isWriteConflict(err))
      throw new ApiError(
        'conflict',
        `tool ${write.tool.name} or its revision was changed by another request; nothing was written`,
      );
    throw err;
  }
  if (svc.vectorIndex && write.tool.vector)
    await svc.vectorIndex.upsert(agent, [{ id: write.tool.name, vector: write.tool.vector }]);
}

async function reread(svc: Services, agent: string, id: string): Promise<Revision> {
  const rev = await svc.revisions.getRevision(agent, id);
  if (!rev) throw notFound(`revision ${id}`);
  return rev;
}
