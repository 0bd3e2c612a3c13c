/**
 * A tool-learning review (docs/learning.md;): choose the tools, read their bounded log, make ONE
 * background-model call per reviewed tool with its evidence, run every proposal through the checks
 * (src/core/proposals.ts), add the example call by code, and store what passed as `proposed`
 * revisions. A model failure for one tool is a skip; the others go on. A non-dry review holds the
 * agent's Durable Object lease (docs/learning.md): a second one for the same agent answers 409 `conflict`.
 * A dry run takes one of the agent's DRY_RUN_SLOTS instead (409 past them), and every review's
 * model calls come out of the agent's `model_calls_per_hour` (the tools past it are skipped).
 */
import { loopTurn } from '../keep-alive.ts';
import { logInfo } from '../logger.ts';
import type { NewRevision } from '../core/ports.ts';
import {
  evidenceByTool,
  findEvidenceWithOrigins,
  teachesNote,
  successfulCallEvidence,
  type ToolEvidence,
} from '../core/evidence.ts';
import { attributeRuns, countDoubtful } from '../core/attribution.ts';
import { buildExampleCall } from '../core/example-call.ts';
import { createLogMasker, definedTool, type LogMasker } from '../core/log-masker.ts';
import { buildReviewInput, buildReviewTask } from '../core/prompts.ts';
import {
  checkExampleCall,
  checkReply,
  type EvidenceOrigins,
  type KeptLines,
  type ProposalCheck,
  type ProposalContext,
} from '../core/proposals.ts';
import { type CallRecord, noChanges, type StoredTool } from '../core/records.ts';
import {
  type Chosen,
  chooseReads,
  chooseTools,
  keptLines,
  newestSeq,
  type Selection,
  type ToolActivity,
  withoutMirrors,
} from '../core/review-selection.ts';
import { checkLineText } from '../core/safety.ts';
import { argumentValues, scrubValues } from '../core/scrub.ts';
import { mapPool } from '../core/pool.ts';
import { groupRuns } from '../core/serving.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import type { Evidence, HeldLine, Refusal, Review, Revision, Settings, SettingsPatch } from '../schemas.ts';
import { type Approval, applyContext, applyRevision } from './apply.ts';
import { MEMORY_APPLY_BY, proposeMemory } from './memory.ts';
import { modelBudgetReason } from './model-budget.ts';
import { agentTurnsWritten } from './turn-writer.ts';
import { usageFlags } from './flags-report.ts';
import { readReviewLog, type ReviewLog } from './review-reads.ts';
import { rankChanges, toolboxOf, type Toolbox } from './review-ranks.ts';
import { routingDocs, settingsOf } from './route-serving.ts';
import { notifyReview } from './webhook-delivery.ts';

export interface ReviewOptions {
  /** Propose and answer, store nothing (docs/learning.md). */
  dry_run: boolean;
  /** Apply each stored revision at once; absent = the agent's `auto_apply` setting. */
  auto_apply?: boolean | undefined;
  /** Settings for this review only (docs/configuration.md: `config` on a review overrides them once). */
  config?: SettingsPatch | undefined;
  /** Who asked (key id, 'admin' or 'cron'): the audit column of an auto-applied revision. */
  actor?: string | undefined;
}

/** What started a review: `POST …/reviews` or the Cron Trigger (stored on the review row). */
export type ReviewTrigger = 'api' | 'cron';

/** `approved_by` of a revision applied by `auto_apply` (docs/learning.md). */
export const AUTO_APPLY_BY = 'whetstone:tool_learning';
/** The shortest review lease: a review at the default `max_tools` (8) is well inside it. */
export const REVIEW_LEASE_MS = 15 * 60_000;
/** Beyond the model calls, what a review's reads, store and auto-apply may take. */
const LEASE_MARGIN_MS = 5 * 60_000;
/** Model calls in flight at once: under the six connections a Worker invocation may hold. */
const MODEL_CONCURRENCY = 4;
/** Dry runs of one agent at once: they store nothing, so take no lease, but each makes model calls. */
export const DRY_RUN_SLOTS = 2;

/**
 * The lease a review of up to `maxTools` model calls needs: the calls run MODEL_CONCURRENCY at a
 * time, each as long as the model's slowest (every attempt timing out), plus a margin; never less
 * than REVIEW_LEASE_MS. A lease that ran out mid-review would let a second review in.
 */
export function reviewLeaseMs(maxTools: number, longestCallMs: number): number {
  return Math.max(REVIEW_LEASE_MS, Math.ceil(maxTools / MODEL_CONCURRENCY) * longestCallMs + LEASE_MARGIN_MS);
}

/** Reviews an agent's tools; stores nothing when `dry_run`. Throws 404 (agent), 409 (lease). */
export async function runReview(
  svc: Services,
  agent: string,
  opts: ReviewOptions,
  now: string,
  trigger: ReviewTrigger,
): Promise<Review> {
  const row = await svc.store.getAgent(agent);
  if (!row) throw notFound(`agent ${agent}`);
  const settings: Settings = { ...settingsOf(row.settings), ...opts.config };
  const reviewId = `rvw_${crypto.randomUUID()}`;
  const leaseMs = reviewLeaseMs(settings.max_tools, svc.model.longestCallMs);
  const stub = svc.agents.get(svc.agents.idFromName(agent));
  if (opts.dry_run) {
    return holding(dryRunSlot(stub, agent, reviewId, now, leaseMs), async () => ({
      ...(await reviewTools(svc, agent, settings, reviewId, now)).review,
      dry_run: true,
    }));
  }
  return holding(reviewLease(stub, agent, reviewId, now, leaseMs), async () => {
    const started = Date.now();
    const done = await reviewTools(svc, agent, settings, reviewId, now);
    const memory = await proposeMemory(
      svc,
      agent,
      settings,
      { at: row.last_review_at, seq: row.last_review_seq },
      now,
      done.review.revisions,
    );
    if (memory.length > 0) done.review.memory = memory.map(asProposed);
    await storeReview(svc, agent, done, row.last_review_seq, now, trigger);
    logInfo('review', {
      agent,
      review_id: reviewId,
      trigger,
      duration_ms: Date.now() - started,
      model_calls: done.review.model_calls,
      revisions: done.review.revisions.length,
      refused: done.review.refused.length,
      memory: memory.length,
    });
    const remembered = settings.memory_auto_apply
      ? await applyMemory(svc, agent, done.review, opts.actor ?? trigger, now)
      : done.review;
    const review =
      (opts.auto_apply ?? settings.auto_apply)
        ? await autoApply(svc, agent, remembered, opts.actor ?? trigger, now)
        : remembered;
    // Only enqueued (src/services/webhook-delivery.ts): no receiver is waited for.
    await notifyReview(svc, agent, review.review_id, review.revisions, now);
    return review;
  });
}

type AgentStub = ReturnType<Services['agents']['get']>;

/** Something a review holds on the agent's object while it runs; 409 `conflict` (`busy`) when it is taken. */
interface Hold {
  acquire(): Promise<boolean>;
  release(): Promise<unknown>;
  busy: string;
}

/** One of the agent's DRY_RUN_SLOTS for up to `ttlMs`: without it, parallel dry runs each made all their model calls. */
function dryRunSlot(stub: AgentStub, agent: string, holder: string, now: string, ttlMs: number): Hold {
  return {
    acquire: () => stub.acquireDryRun(holder, Date.parse(now), ttlMs, DRY_RUN_SLOTS),
    release: () => stub.releaseDryRun(holder),
    busy: `agent ${agent} already has ${DRY_RUN_SLOTS} dry-run reviews running, the most at once; try again when one has finished`,
  };
}

/** The agent's review lease (docs/learning.md) for up to `ttlMs`: one review of an agent at a time. */
function reviewLease(stub: AgentStub, agent: string, holder: string, now: string, ttlMs: number): Hold {
  return {
    acquire: () => stub.acquireReviewLease(holder, Date.parse(now), ttlMs),
    release: () => stub.releaseReviewLease(holder),
    busy: `a review of agent ${agent} is already running; try again when it has finished`,
  };
}

/** Runs `fn` holding `hold`, released however `fn` ends. */
async function holding<T>(hold: Hold, fn: () => Promise<T>): Promise<T> {
  if (!(await hold.acquire())) throw new ApiError('conflict', hold.busy);
  try {
    return await fn();
  } finally {
    await hold.release();
  }
}

/** A finished review before it is stored: the answer plus the marks the store moves forward. */
interface ReviewDone {
  review: Review;
  /** tool → highest call seq its review read (tools.reviewed_seq). */
  marks: Map<string, number>;
  /** Newest call of the agent when the review began (agents.last_review_seq). */
  lastSeq: number;
  /** Tools whose model call failed: the agent mark stays so the next pass tries them again. */
  failures: number;
}

async function reviewTools(
  svc: Services,
  agent: string,
  settings: Settings,
  reviewId: string,
  now: string,
): Promise<ReviewDone> {
  await agentTurnsWritten(agent);
  const [lastSeq, [tools, activity], waiting, flags] = await Promise.all([
    svc.log.lastCallSeq(agent),
    svc.store.listTools(agent).then(async (tools) => {
      const activity = await svc.reviewLog.toolActivity(agent, tools, settings.max_calls_per_tool);
      return [tools, activity] as const;
    }),
    svc.revisions.waitingRevisions(agent),
    usageFlags(svc, agent, settings),
  ]);
  const review: Review = {
    review_id: reviewId,
    dry_run: false,
    revisions: [],
    refused: [],
    skipped: [],
    flags,
    model_calls: 0,
    doubtful_runs: 0,
  };
  const done: ReviewDone = { review, marks: new Map(), lastSeq, failures: 0 };
  const toRead = select(done, chooseReads(activity, waiting, settings));
  const log = await readReviewLog(
    svc,
    agent,
    toRead.map((a) => a.name),
    settings.max_calls_per_tool,
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  const registered = new Set(byName.keys());
  const masker = createLogMasker(log, tools.map(definedTool), settings.min_conversations);
  const found = findEvidenceWithOrigins({
    turns: log.turns,
    calls: log.calls,
    outcomes: log.outcomes,
    registered,
    minConversations: settings.min_conversations,
    mask: svc.privacyRule ? (text, tool, values) => masker.mask(text, tool, values) : undefined,
  });
  review.doubtful_runs = doubtfulRuns(log, settings.min_conversations);
  const evidence = evidenceByTool(found.evidence);
  const chosen = await withinModelBudget(
    svc,
    agent,
    select(done, chooseTools(toRead, log.own, evidence, settings)),
    settings,
    now,
    done,
  );
  const [docs, kept] =
    chosen.length > 0
      ? await Promise.all([routingDocs(svc, tools), keptLinesOf(svc, agent, tools)])
      : [null, new Map<string, KeptLines>()];
  const box = docs ? toolboxOf(docs) : null;
  const values = argumentValues(log.calls);
  const results = await mapPool(chosen, MODEL_CONCURRENCY, async (c) => {
    const tool = byName.get(c.activity.name);
    if (!tool || !box) return null;
    return reviewTool(svc, {
      tool,
      box,
      registered,
      values,
      origins: found,
      masker: svc.privacyRule ? masker : null,
      evidence: c.evidence,
      kept,
      own: log.own.get(tool.name) ?? [],
      settings,
      now,
    });
  });
  // Recorded in the order chosen (most failed calls first), whatever order the model calls finished in.
  results.forEach((r, i) => {
    const c = chosen[i];
    if (r && c) record(done, c.activity, r);
  });
  review.skipped.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  const mirrors = withoutMirrors(review.revisions, registered);
  review.revisions = mirrors.revisions;
  review.refused.push(...mirrors.refused);
  return done;
}

/** Records what a selection skipped and marked in the review, and answers what it kept. */
function select<T>(done: ReviewDone, selection: Selection<T>): T[] {
  done.review.skipped.push(...selection.skipped);
  for (const [tool, seq] of selection.marks) done.marks.set(tool, seq);
  return selection.kept;
}

/** What each tool's kept "Not for" lines rest on (src/core/review-selection.ts `keptLines`), from the agent's applied revisions. */
export async function keptLinesOf(
  svc: Services,
  agent: string,
  tools: Iterable<StoredTool>,
): Promise<Map<string, KeptLines>> {
  const applied = await svc.revisions.listRevisions(agent, { status: 'applied' });
  return keptLines(applied, new Map(Array.from(tools, (t) => [t.name, t.avoid])));
}

/**
 * How many runs of the log read the attribution found doubtful (docs/learning.md "Doubtful runs"):
 * the evidence leaves them out, and the review says how many, so an operator sees what was set aside.
 */
function doubtfulRuns(log: ReviewLog, minConversations: number): number {
  const doubts = countDoubtful(
    attributeRuns(groupRuns(log.turns, log.calls), log.outcomes, { minConversations }).values(),
  );
  return doubts.several_changed + doubts.failed_before_other;
}

/**
 * The chosen tools the agent's `model_calls_per_hour` has room for, in order; the others are
 * skipped `model_budget: …` and keep their marks (and the agent its mark), so a later pass
 * reviews them.
 */
async function withinModelBudget(
  svc: Services,
  agent: string,
  chosen: Chosen[],
  settings: Settings,
  now: string,
  done: ReviewDone,
): Promise<Chosen[]> {
  if (chosen.length === 0) return chosen;
  const perHour = settings.model_calls_per_hour;
  const budget = await svc.modelBudget.take(agent, chosen.length, perHour, Date.parse(now));
  const over = chosen.slice(budget.granted);
  for (const c of over)
    done.review.skipped.push({ tool: c.activity.name, reason: modelBudgetReason(perHour, budget.nextInMs) });
  done.failures += over.length;
  return chosen.slice(0, budget.granted);
}

/** Adds one tool's result to the review: a model failure is a skip and leaves the tool's mark. */
function record(done: ReviewDone, activity: ToolActivity, r: ToolResult): void {
  const review = done.review;
  review.model_calls += 1;
  review.refused.push(...r.refused);
  if (r.revision) review.revisions.push(asProposed(r.revision));
  if (r.error !== null) {
    done.failures += 1;
    review.skipped.push({ tool: activity.name, reason: `model_error: ${r.error}` });
    return;
  }
  done.marks.set(activity.name, newestSeq(activity));
}

interface ToolReview {
  tool: StoredTool;
  box: Toolbox;
  registered: ReadonlySet<string>;
  values: readonly unknown[];
  origins: EvidenceOrigins;
  /** The privacy rule for this review's log; null when PRIVACY_RULE narrows it to argument values. */
  masker: LogMasker | null;
  evidence: ToolEvidence;
  kept: ReadonlyMap<string, KeptLines>;
  own: readonly CallRecord[];
  settings: Settings;
  now: string;
}

interface ToolResult {
  revision: NewRevision | null;
  refused: Refusal[];
  /** The model or provider failure, or null. */
  error: string | null;
}

/**
 * One model call for one tool, its reply checked; the revision is null when nothing passed. The
 * example call is built by code from the tool's successful calls whatever the model does, so a
 * model failure still proposes it (and is reported as a skip).
 */
async function reviewTool(svc: Services, t: ToolReview): Promise<ToolResult> {
  const all: Evidence[] = [...t.evidence.failed, ...t.evidence.missed, ...t.evidence.confused];
  const successes = t.own.filter((c) => c.success).sort((a, b) => a.seq - b.seq);
  const example = exampleCall(t, successes);
  const input = buildReviewInput(t.tool, t.registered, all);
  let check: ProposalCheck = { notes_added: [], queries_added: [], avoid_added: [], refused: [], cited: [] };
  let error: string | null = null;
  try {
    check = checkReply(await svc.model.complete(buildReviewTask(input, t.settings)), proposalContext(t, all));
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  const refused = [...check.refused, ...example.refused];
  const callExample = example.line;
  const empty =
    check.notes_added.length + check.queries_added.length + check.avoid_added.length === 0 && callExample === null;
  if (empty) return { revision: null, refused, error };
  const cited = new Set(check.cited);
  // The failures that teach no note are shown with why (`why_no_note`), so an approver sees what was not learned from.
  const evidence = [
    ...all.filter((e) => cited.has(e.evidence_id) || (e.kind === 'failed_call' && !teachesNote(e))),
    ...(callExample
      ? successfulCallEvidence(successes, (text, tool) =>
          t.masker ? t.masker.mask(scrubValues(text, t.values), tool, t.values) : scrubValues(text, t.values),
        )
      : []),
  ];
  const missed = evidence.filter((e) => e.kind === 'missed_request');
  const held = [...(check.held ?? []), ...example.held];
  const revision: NewRevision = {
    revision_id: `rev_${crypto.randomUUID()}`,
    tool: t.tool.name,
    created_at: t.now,
    ...noChanges(),
    notes_added: check.notes_added,
    queries_added: check.queries_added,
    avoid_added: check.avoid_added,
    call_example: callExample,
    refused,
    evidence,
    ranks: await rankChanges(svc, t.box, t.tool, check.queries_added, missed, t.settings),
    base_version: t.tool.version,
    ...(held.length > 0 ? { held } : {}),
  };
  return { revision, refused, error };
}

/**
 * The example call for a tool with at least `min_failures` failed calls, checked like a note
 * (docs/learning.md "Example call"): null when nothing new was built or the line was refused.
 */
function exampleCall(
  t: ToolReview,
  successes: readonly CallRecord[],
): { line: string | null; refused: Refusal[]; held: HeldLine[] } {
  const none = { line: null, refused: [], held: [] };
  // An example call shows how to call the tool: it answers failures that were the caller's fault.
  if (t.evidence.failed.filter(teachesNote).length < t.settings.min_failures) return none;
  // A shape that one conversation's calls alone show could hold what only that caller used.
  const conversations = new Set(successes.map((c) => c.conversation_id ?? c.turn_id ?? c.call_id));
  if (conversations.size < t.settings.min_conversations) return none;
  const built = buildExampleCall(successes, t.tool.parameters);
  if (built === null || built === t.tool.call_example) return none;
  const refusal = checkExampleCall(t.tool.name, built, t.values);
  if (refusal) return { ...none, refused: [refusal] };
  const checked = checkLineText(built, { definition: definitionOf(t.tool) });
  const held =
    checked.suspicious.length > 0
      ? [{ kind: 'call_example' as const, text: checked.text, reasons: checked.suspicious }]
      : [];
  return { line: checked.text, refused: [], held };
}

/** The tool's own words, which a learned line's language and scripts are compared with. */
export function definitionOf(tool: StoredTool): string {
  return `${tool.name} ${tool.description ?? tool.docstring}`;
}

/** What the checks of docs/learning.md need about the tool under review. */
function proposalContext(t: ToolReview, evidence: readonly Evidence[]): ProposalContext {
  const existing = { notes: t.tool.notes, avoid: t.tool.avoid, examples: t.tool.examples };
  return {
    tool: t.tool.name,
    evidence,
    registered: t.registered,
    values: t.values,
    existing,
    settings: t.settings,
    kept: t.kept.get(t.tool.name),
    origins: t.origins,
    mask: t.masker ? (text) => t.masker?.mask(text, t.tool.name, t.values) ?? text : undefined,
    definition: definitionOf(t.tool),
  };
}

/** A stored tool as the privacy rule reads its definition: its own words are never values. */
function asProposed(r: NewRevision): Revision {
  return {
    ...r,
    status: 'proposed',
    applied_at: null,
    approved_by: null,
    applied_version: null,
    dismiss_reason: null,
    undone_at: null,
    undone_by: null,
  };
}

/**
 * One atomic batch: the revisions, each reviewed tool's mark, the agent's mark and the review's
 * record. After a model failure the agent keeps its old call mark (only `last_review_at` moves), so
 * the cron tries again at the next due time.
 */
async function storeReview(
  svc: Services,
  agent: string,
  done: ReviewDone,
  previousSeq: number,
  now: string,
  trigger: ReviewTrigger,
): Promise<void> {
  const r = done.review;
  const statements: D1PreparedStatement[] = [
    // Memory first: with one created_at, the review's line revisions are then the newer ones (rowid),
    // the ones an undo of the tool takes back first.
    ...(r.memory ?? []).map((rev) => svc.revisions.insertRevisionStatement(agent, rev, r.review_id)),
    ...r.revisions.map((rev) => svc.revisions.insertRevisionStatement(agent, rev, r.review_id)),
    ...[...done.marks].map(([tool, seq]) => svc.revisions.markToolReviewed(agent, tool, seq)),
    svc.revisions.markAgentReviewed(agent, now, done.failures > 0 ? previousSeq : done.lastSeq),
    svc.revisions.insertReviewStatement(agent, {
      review_id: r.review_id,
      created_at: now,
      trigger,
      summary: {
        revisions: r.revisions.map((x) => x.revision_id),
        ...(r.memory ? { memory: r.memory.map((x) => x.revision_id) } : {}),
        refused: r.refused.length,
        skipped: r.skipped,
        model_calls: r.model_calls,
      },
    }),
  ];
  await svc.revisions.commit(statements);
}

/**
 * `auto_apply`: applies each stored revision as "whetstone:tool_learning"; a failed apply is a skip.
 * The applies share one context (src/services/apply.ts): the toolbox, the re-check's log and its
 * vectors are read once for the review, not once per revision.
 */
async function autoApply(svc: Services, agent: string, review: Review, actor: string, now: string): Promise<Review> {
  const who = { approved_by: AUTO_APPLY_BY, actor };
  return { ...review, revisions: await applyEach(svc, agent, review, review.revisions, who, now, 'auto_apply_failed') };
}

/**
 * `memory_auto_apply`: applies each memory revision as "whetstone:routing_memory", sharing one
 * context with the line revisions' applies; a failed apply is a skip (`memory_apply_failed`).
 */
async function applyMemory(svc: Services, agent: string, review: Review, actor: string, now: string): Promise<Review> {
  if (!review.memory) return review;
  const who = { approved_by: MEMORY_APPLY_BY, actor };
  return { ...review, memory: await applyEach(svc, agent, review, review.memory, who, now, 'memory_apply_failed') };
}

/**
 * Applies `revs` in turn with one context and answers each as it now stands: a revision with held
 * lines is left proposed (never applied without a person, docs/security.md "auto_apply") and a failed
 * apply is left as it was, each a skip of the review (`held_for_a_person`, or `failed` and why).
 */
async function applyEach(
  svc: Services,
  agent: string,
  review: Review,
  revs: readonly Revision[],
  who: Approval,
  now: string,
  failed: string,
): Promise<Revision[]> {
  const out: Revision[] = [];
  const ctx = applyContext();
  for (const rev of revs) {
    const held = heldLines(rev);
    if (held.length > 0) {
      out.push(rev);
      review.skipped.push({ tool: rev.tool, reason: `held_for_a_person: ${held.join('; ')}` });
      continue;
    }
    try {
      out.push(await applyRevision(svc, agent, rev.revision_id, who, now, ctx));
    } catch (err) {
      out.push(rev);
      review.skipped.push({ tool: rev.tool, reason: `${failed}: ${err instanceof Error ? err.message : String(err)}` });
    }
    // Let the event loop turn between applies, so its clock keeps up (src/keep-alive.ts).
    await loopTurn();
  }
  return out;
}

/** The held lines the revision still adds (a line refused after the check no longer holds it), described. */
function heldLines(rev: Revision): string[] {
  const added = new Set([...rev.notes_added, ...rev.queries_added, ...rev.avoid_added, rev.call_example ?? '']);
  return (rev.held ?? []).filter((h) => added.has(h.text)).map((h) => `${h.kind} "${h.text}": ${h.reasons.join(', ')}`);
}
