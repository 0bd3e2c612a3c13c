/**
 * Apply, undo and dismiss (docs/learning.md;). Each reads the row and the revision, asks the pure
 * plan in src/core/learning.ts what the row becomes, and writes row + vector + version entry +
 * revision status in ONE D1 batch guarded twice: the tool_versions primary key (nobody else wrote
 * the row) and a write guard on the revision's status (nobody else applied or dismissed it).
 * Two concurrent applies of one revision: one wins, the other gets 409 and writes nothing.
 */
import { type LogSlice, type ToolWrite, VersionConflict } from '../core/ports.ts';
import {
  findDisplaced,
  learnedState,
  planApply,
  requestsServedByOthers,
  withdrawExamples,
  type LearnedState,
} from '../core/learning.ts';
import type { StoredTool } from '../core/records.ts';
import { companionTable, type CompanionTable } from '../core/companions.ts';
import {
  buildRoutingIndex,
  embeddingText,
  routingDoc,
  vectorScoreAt,
  vectorScores,
  withDoc,
  type RoutingDoc,
  type RoutingIndex,
} from '../core/routing.ts';
import { isEmpty, linesOf, type EditResult, type LineEdit, type RevisionLines } from '../core/edits.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import type { Displacement, MemoryChange, Revision, Settings } from '../schemas.ts';
import { isMemoryRevision, planMemory, withMemory } from './memory.ts';
import { routingDocs, settingsOf } from './route-serving.ts';
import { embedTools } from './tool-vectors.ts';

/** Recent turns and calls read for the displacement re-check, and distinct requests checked. */
const RECHECK_ROWS = 1000;
const RECHECK_REQUESTS = 200;

/** What the audit columns record for a write: the person's name and the key that did it. */
export interface Approval {
  approved_by: string;
  actor: string;
}

/**
 * What the applies of one auto-applied review share: the toolbox as routing sees it, the recent
 * log the displacement re-check reads and the vectors of its requests. Applying 50 revisions used
 * to load every row with its vector (~1.1 MB of D1 results at 199 tools), read 1,000 log rows from
 * the Durable Object and embed the same 200 requests once per revision, all in one request:
 * workerd's memory climbed by hundreds of MB over a few reviews (docs/performance.md "Soak"). Now
 * they are read once per review. The rows are read again when the agent's tools_gen moved by a write other than these
 * applies; the log and the vectors are bounded by RECHECK_ROWS.
 */
export interface ApplyContext {
  /** The agent's rows as of `gen`, with the applies made through this context. */
  tools: Map<string, StoredTool> | null;
  /** tools_gen the rows reflect (each apply moves it by one). */
  gen: number;
  /** Routing documents of `tools`, and the index built from them (null once a row changed). */
  docs: Map<string, RoutingDoc> | null;
  /**
   * The index of `docs` and the companion table it rests on. Built once per review; each apply's
   * write replaces its row in them (`withDoc`, `CompanionTable.with`) instead of building again: at
   * 10,000 tools with full memory a build takes about a second, a replacement a few milliseconds.
   */
  index: RoutingIndex | null;
  companions: CompanionTable | null;
  /** The recent log of the re-check, read at the first apply that needs it. */
  log: LogSlice | null;
  /** Request text → its vector, for the re-check. */
  vectors: Map<string, Float32Array>;
  /**
   * Request text → its vector scores against `index`, kept up to date at each write (one tool's
   * score), so a re-check ranks each request without scanning every tool's vector again.
   */
  dense: Map<string, Float64Array>;
}

/** A context for one apply, or for the applies of one review. */
export function applyContext(): ApplyContext {
  return {
    tools: null,
    gen: -1,
    docs: null,
    index: null,
    companions: null,
    log: null,
    vectors: new Map(),
    dense: new Map(),
  };
}

/** Applies a proposed revision; returns it as stored (now `applied`). */
export async function applyRevision(
  svc: Services,
  agent: string,
  revisionId: string,
  who: Approval,
  now: string,
  ctx: ApplyContext = applyContext(),
  edit: ApplyEdit | null = null,
): Promise<Revision> {
  const proposed = await requireStatus(svc, agent, revisionId, 'proposed');
  const agentRow = await svc.store.getAgent(agent);
  if (!agentRow) throw notFound(`agent ${agent}`);
  const settings = settingsOf(agentRow.settings);
  const [row, tools] = await Promise.all([
    svc.store.getTool(agent, proposed.tool),
    toolsOf(svc, agent, agentRow.tools_gen, ctx),
  ]);
  if (!row) throw new ApiError('conflict', `tool ${proposed.tool} is no longer registered`);
  if (isMemoryRevision(proposed)) {
    if (edit) throw new ApiError('invalid_request', 'a memory revision has no lines to edit; apply or dismiss it');
    return applyMemory(svc, agent, proposed, row, settings, tools.size, who, now, ctx);
  }
  const registered = new Set(tools.keys());
  const edited = edit ? await editedLines(edit, proposed, row, tools, settings) : null;
  const rev: Revision = edited ? { ...proposed, ...edited } : proposed;
  let plan = planApply(learnedState(row), rev, settings, registered);
  let next = await withState(svc, row, plan.state, now);
  const recheck = plan.queries_added.length > 0 ? await recheckOf(svc, agent, ctx, row.name) : null;
  const displaced = recheck ? recheck.displacedBy(next, settings.top_k) : [];
  let withdrawn: string[] = [];
  if (recheck && displaced.length > 0) {
    // Only the examples that push a served tool out are withdrawn: each is tried in turn on top of
    // those kept so far, and kept when the re-check finds no displacement.
    const kept = await keptUndisplacing(plan.queries_added, recheck, settings, (texts) =>
      withState(
        svc,
        row,
        planApply(learnedState(row), { ...rev, queries_added: texts }, settings, registered).state,
        now,
      ),
    );
    withdrawn = plan.queries_added.filter((q) => !kept.includes(q));
    plan =
      kept.length > 0
        ? planApply(learnedState(row), { ...rev, queries_added: kept }, settings, registered)
        : withdrawExamples(learnedState(row), plan);
    next = await withState(svc, row, plan.state, now);
  }
  return markApplied(svc, agent, revisionId, row, next, who, now, ctx, {
    queries_added: plan.queries_added,
    queries_withdrawn: withdrawn,
    displaced,
    queries_displaced: plan.queries_displaced,
    refused: [...rev.refused, ...plan.refused],
    ...(edited && edit
      ? { ...edited, proposed: linesOf(proposed), edited_by: edit.edited_by, queries_added: plan.queries_added }
      : {}),
  });
}

/**
 * The texts kept when each is tried in turn on top of those kept so far: a text is kept when the
 * row `trial` builds with them pushes no served tool out of `top_k` (the displacement re-check).
 */
async function keptUndisplacing(
  texts: readonly string[],
  recheck: Recheck,
  settings: Settings,
  trial: (texts: string[]) => Promise<StoredTool>,
): Promise<string[]> {
  const kept: string[] = [];
  for (const text of texts) {
    if (recheck.displacedBy(await trial([...kept, text]), settings.top_k).length === 0) kept.push(text);
  }
  return kept;
}

/**
 * Stores the revision as applied (who, when, the row before, the version and what the apply did)
 * and the new row, in one guarded write that fails when either moved; answers the revision as stored.
 */
async function markApplied(
  svc: Services,
  agent: string,
  revisionId: string,
  row: StoredTool,
  next: StoredTool,
  who: Approval,
  now: string,
  ctx: ApplyContext,
  body: Parameters<Services['revisions']['updateRevisionStatement']>[3]['body'],
): Promise<Revision> {
  const guard = svc.store.revisionStatusGuard(agent, revisionId, 'proposed');
  const update = await svc.revisions.updateRevisionStatement(agent, revisionId, 'proposed', {
    status: 'applied',
    applied_at: now,
    approved_by: who.approved_by,
    approved_key: who.actor,
    before_row: JSON.stringify(snapshot(row)),
    applied_version: next.version,
    body,
  });
  if (!update) throw notFound(`revision ${revisionId}`);
  await writeGuarded(svc, agent, rowWrite(row, next, `revision:${revisionId}`), now, [
    guard.before,
    update,
    guard.after,
  ]);
  written(ctx, next);
  return reread(svc, agent, revisionId);
}

/**
 * Applies a memory revision: its wordings merged into the tool's memory under its budget among
 * `toolCount` tools (`memoryBudget`), then the displacement re-check; when a wording pushes a
 * served tool out of `top_k`, each is tried in turn on top of those kept so far and kept only when
 * the re-check finds nothing (as for examples).
 */
async function applyMemory(
  svc: Services,
  agent: string,
  rev: Revision & { memory: MemoryChange },
  row: StoredTool,
  settings: Settings,
  toolCount: number,
  who: Approval,
  now: string,
  ctx: ApplyContext,
): Promise<Revision> {
  const at = Date.parse(rev.created_at);
  let plan = planMemory(row, rev.memory, rev.memory.added, settings, at, toolCount);
  let next = await withState(svc, row, withMemory(row, plan.memory), now);
  const recheck = plan.change.added.length > 0 ? await recheckOf(svc, agent, ctx, row.name) : null;
  const displaced = recheck ? recheck.displacedBy(next, settings.top_k) : [];
  let withdrawn: string[] = [];
  if (recheck && displaced.length > 0) {
    const kept = await keptUndisplacing(plan.change.added, recheck, settings, (texts) =>
      withState(svc, row, withMemory(row, planMemory(row, rev.memory, texts, settings, at, toolCount).memory), now),
    );
    withdrawn = plan.change.added.filter((t) => !kept.includes(t));
    plan = planMemory(row, rev.memory, kept, settings, at, toolCount);
    next = await withState(svc, row, withMemory(row, plan.memory), now);
  }
  return markApplied(svc, agent, rev.revision_id, row, next, who, now, ctx, {
    memory: { ...plan.change, withdrawn },
    displaced,
  });
}

/** An approver's edit of the lines to apply, and the check it must pass (src/services/edit.ts). */
export interface ApplyEdit {
  lines: LineEdit;
  edited_by: string;
  check(
    rev: Revision,
    lines: LineEdit,
    row: StoredTool,
    tools: ReadonlyMap<string, StoredTool>,
    settings: Settings,
  ): Promise<EditResult>;
}

/**
 * The lines an edit applies, or null when it keeps the proposal word for word. A refused line is a
 * 400 naming the line and the check; an edit keeping no line is a 400 too (dismiss it instead).
 * Both come before any write.
 */
export async function editedLines(
  edit: ApplyEdit,
  rev: Revision,
  row: StoredTool,
  tools: ReadonlyMap<string, StoredTool>,
  settings: Settings,
): Promise<RevisionLines | null> {
  const result = await edit.check(rev, edit.lines, row, tools, settings);
  if (!result.ok) {
    const r = result.refusal;
    throw new ApiError(
      'invalid_request',
      `${r.field}[${r.index}] "${r.text}" fails the ${r.check} check: ${r.detail}; nothing was written`,
      [r],
    );
  }
  if (isEmpty(result.lines))
    throw new ApiError('invalid_request', 'the edit keeps no line; dismiss the revision instead');
  return result.changed ? result.lines : null;
}

/**
 * The agent's rows for an apply: the context's when nothing but its own applies wrote since they
 * were read (tools_gen is `gen`), else read again (tools_gen read first, so the rows are at least
 * that new; a write in between only makes the next apply read them again).
 */
async function toolsOf(svc: Services, agent: string, gen: number, ctx: ApplyContext): Promise<Map<string, StoredTool>> {
  if (ctx.tools && ctx.gen === gen) return ctx.tools;
  const tools = await svc.store.listTools(agent);
  ctx.tools = new Map(tools.map((t) => [t.name, t]));
  ctx.gen = gen;
  ctx.docs = null;
  forgetIndex(ctx);
  return ctx.tools;
}

function forgetIndex(ctx: ApplyContext): void {
  ctx.index = null;
  ctx.companions = null;
  ctx.dense.clear();
}

/** The row this context just wrote (tools_gen + 1): the next apply starts from it. */
function written(ctx: ApplyContext, next: StoredTool): void {
  if (!ctx.tools) return;
  ctx.tools.set(next.name, next);
  ctx.gen += 1;
  if (!ctx.docs || !next.vector) {
    ctx.docs = null;
    forgetIndex(ctx);
    return;
  }
  const doc = routingDoc(next, next.vector);
  ctx.docs.set(next.name, doc);
  const position = ctx.index?.positions.get(next.name);
  if (!ctx.index || !ctx.companions || position === undefined) {
    forgetIndex(ctx);
    return;
  }
  ctx.companions = ctx.companions.with(position, doc.memory ?? []);
  ctx.index = withDoc(ctx.index, doc, ctx.companions.companions);
  for (const [text, dense] of ctx.dense) {
    const vector = ctx.vectors.get(text);
    if (vector) dense[position] = vectorScoreAt(ctx.index, vector, position);
    else ctx.dense.delete(text);
  }
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
  const guard = svc.store.revisionStatusGuard(agent, newest.revision_id, 'applied');
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
 * tools served. The log, the routing documents and the requests' vectors come from the context
 * (read and embedded once per review); `displacedBy` then answers, for a changed row, the requests
 * whose serving tool it pushes out of the offered set.
 */
/** The displacement re-check of one tool's change. */
interface Recheck {
  displacedBy(changed: StoredTool, k: number): Displacement[];
}

async function recheckOf(svc: Services, agent: string, ctx: ApplyContext, name: string): Promise<Recheck> {
  const tools = ctx.tools ?? new Map<string, StoredTool>();
  ctx.log ??= await svc.log.recentLog(agent, RECHECK_ROWS);
  const served = requestsServedByOthers(ctx.log, name, RECHECK_REQUESTS).filter((r) => tools.has(r.served_by));
  if (served.length === 0) return { displacedBy: () => [] };
  if (!ctx.docs) {
    const docs = await routingDocs(svc, [...tools.values()]);
    ctx.docs = new Map(docs.map((d) => [d.name, d]));
  }
  const docs = ctx.docs;
  if (!ctx.index || !ctx.companions) {
    const all = [...docs.values()];
    ctx.companions = companionTable(all.map((d) => d.memory ?? []));
    ctx.index = buildRoutingIndex(all, ctx.companions.companions);
    ctx.dense.clear();
  }
  const before = ctx.index;
  const table = ctx.companions;
  const fresh = [...new Set(served.map((r) => r.text).filter((t) => !ctx.vectors.has(t)))];
  if (fresh.length > 0) {
    const vectors = await svc.embedder.embed(fresh);
    fresh.forEach((t, i) => {
      ctx.vectors.set(t, vectors[i] ?? new Float32Array(svc.embedder.dimensions));
    });
  }
  const requests = served.map((r) => {
    const vector = ctx.vectors.get(r.text) ?? new Float32Array(svc.embedder.dimensions);
    let dense = ctx.dense.get(r.text);
    if (dense === undefined) {
      dense = vectorScores(before, vector);
      ctx.dense.set(r.text, dense);
    }
    return { ...r, vector, dense };
  });
  return {
    displacedBy(changed, k) {
      const position = before.positions.get(changed.name);
      const doc = routingDoc(changed, changed.vector ?? docs.get(changed.name)?.vector ?? new Float32Array(0));
      // A row routing does not hold changes no ranking the re-check reads.
      if (position === undefined) return [];
      const after = withDoc(before, doc, table.with(position, doc.memory ?? []).companions);
      return findDisplaced(before, after, requests, k, changed.name);
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
    if (err instanceof VersionConflict)
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
