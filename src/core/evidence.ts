/**
 * The evidence of docs/learning.md, all found by code from the call log, the turns and the reported
 * outcomes: failed calls, missed requests and confused requests.
 *
 * Evidence ids are stable, derived from the log, so a proposal can cite them and a later review
 * finds the same id for the same fact:
 * - `failed:<call_id>`                     a failed call
 * - `missed:<how>:<run key>`               a missed request (`not_offered`, `next_request`)
 * - `confused:<how>:<run key>`             a confused request (`re_asked`, `ranked_first`, `verified`)
 * - `succeeded:<call_id>`                  a successful call an example call rests on
 * where the run key is `turn:<turn_id>`, or `call:<call_id>` for a call logged without a turn.
 * One run yields at most one fact per rule, so `<how>` and the run key make the id unique.
 *
 * Text is the request or error with every personal value masked: the argument values of every
 * call of the conversation (scrub.ts), and, when the review passes one, the privacy rule's mask
 * (privacy.ts); `arguments` lists argument names only. `call_id`/`arguments` describe the call that served the request: the
 * credited tool's call (for `next_request` and `re_asked`, the call in the following turn).
 */
import type { Evidence } from '../schemas.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from './records.ts';
import { argumentValues, scrubValues } from './scrub.ts';
import { type Attribution, attributeRuns, calledTool, servingTools } from './attribution.ts';
import { aimedAtModel } from './safety.ts';
import { groupRuns, runKeys, type Run, timeOf } from './serving.ts';
import { readFailures } from './failures.ts';
import { contentWords } from './text.ts';
import { indexServedRequests, type ServedRequest, type ServedRequests } from './served-requests.ts';
import { findToolRoles } from './tool-roles.ts';

export { transientFailures } from './failures.ts';

export interface EvidenceInput {
  turns: readonly TurnRecord[];
  calls: readonly CallRecord[];
  outcomes: readonly OutcomeRecord[];
  /** Registered tool names: only a registered tool has evidence (docs/learning.md: registering one makes its past failures evidence). */
  registered: ReadonlySet<string>;
  /** docs/configuration.md `min_conversations` (default 2): how many conversations make a habit. */
  minConversations?: number;
  /** Masks personal values in a text about `tool` (privacy.ts); argument values are masked in any case. */
  mask?: ((text: string, tool: string, values: readonly unknown[]) => string) | undefined;
}

/** The evidence, and the conversation each piece comes from (a run without one is its own). */
export interface FoundEvidence {
  evidence: Evidence[];
  /** evidence id → conversation key: thresholds count distinct conversations (docs/learning.md). */
  conversations: Map<string, string>;
  /** evidence id → run key: thresholds count runs, so a retried failure counts once. */
  runs: Map<string, string>;
  /** evidence id → why its request or error, as sent, is aimed at the model: nothing may rest on it. */
  hostile: Map<string, string>;
  /**
   * tool → each content word of the requests the tool finally served (hits and misses) → the
   * conversations they came from: an example's words must have been seen with its tool in enough
   * conversations (proposals.ts `unseenWords`).
   */
  served: Map<string, Map<string, Set<string>>>;
  /** Every request a tool finally served, by word: who the log says serves a wording (proposals.ts `majorityFailure`). */
  servedRequests: ServedRequests;
}

/** One tool's evidence, split by kind. */
export interface ToolEvidence {
  failed: Evidence[];
  missed: Evidence[];
  confused: Evidence[];
}

/** Every failed call, missed request and confused request in the log (docs/learning.md "Evidence"). */
export function findEvidence(input: EvidenceInput): Evidence[] {
  return findEvidenceWithOrigins(input).evidence;
}

/** `findEvidence`, with the run and conversation of each piece of evidence. */
export function findEvidenceWithOrigins(input: EvidenceInput): FoundEvidence {
  const runs = groupRuns(input.turns, input.calls);
  const minConversations = input.minConversations ?? 2;
  const roles = findToolRoles(runs, minConversations);
  const attributions = [...attributeRuns(runs, input.outcomes, { minConversations, roles }).values()];
  const masking = maskingOf(input, runs);
  const served = servedRequestsOf(attributions);
  const found = [
    ...findFailedCalls(input.calls, input.registered, masking, requestOfRun(runs)),
    ...findMissedRequests(attributions, input.registered, masking),
    ...findConfusedRequests(
      attributions,
      input.registered,
      masking,
      new Set([...roles.followUps, ...roles.preparation]),
    ),
  ];
  const keyOfCall = runKeys(input.calls, input.turns);
  const callById = new Map(input.calls.map((c) => [c.call_id, c]));
  const runByKey = new Map(runs.map((r) => [r.key, r]));
  const runKeyOf = (e: Evidence): string => {
    const call = e.kind === 'failed_call' && e.call_id !== null ? callById.get(e.call_id) : undefined;
    return call ? (keyOfCall.get(call) ?? `call:${call.call_id}`) : e.evidence_id.split(':').slice(2).join(':');
  };
  // A request or error aimed at the model is marked (docs/security.md "Learned lines"): masking its
  // values could leave a fragment that no longer reads as hostile, so what rests on it is refused.
  const rawOf = (e: Evidence): string =>
    (e.kind === 'failed_call' && e.call_id !== null
      ? callById.get(e.call_id)?.error
      : runByKey.get(runKeyOf(e))?.request) ?? '';
  const byId = new Map<string, Evidence>();
  for (const e of found) byId.set(e.evidence_id, e);
  const evidence = [...byId.values()].sort(
    (a, b) => timeOf(a.at) - timeOf(b.at) || a.evidence_id.localeCompare(b.evidence_id),
  );
  const origins: FoundEvidence = {
    evidence,
    conversations: new Map(),
    runs: new Map(),
    hostile: new Map(),
    served: servedWords(served),
    servedRequests: indexServedRequests(served),
  };
  for (const e of evidence) {
    const hostile = aimedAtModel(rawOf(e));
    if (hostile !== null) origins.hostile.set(e.evidence_id, hostile);
    const call = e.kind === 'failed_call' && e.call_id !== null ? callById.get(e.call_id) : undefined;
    const runKey = runKeyOf(e);
    const run = runByKey.get(runKey);
    origins.runs.set(e.evidence_id, runKey);
    origins.conversations.set(e.evidence_id, run?.conversation_id ?? call?.conversation_id ?? runKey);
  }
  return origins;
}

/**
 * The words each tool was asked in, by conversation: the content words of every request a tool
 * finally served (alone or together with others). Counted only, never shown, so unmasked.
 */
function servedWords(requests: readonly ServedRequest[]): Map<string, Map<string, Set<string>>> {
  const out = new Map<string, Map<string, Set<string>>>();
  for (const r of requests) {
    for (const tool of r.tools) {
      const byWord = out.get(tool) ?? new Map<string, Set<string>>();
      out.set(tool, byWord);
      for (const w of r.words) byWord.set(w, (byWord.get(w) ?? new Set()).add(r.conversation));
    }
  }
  return out;
}

/** The request of every run some tool finally served, with the tools that served it. */
function servedRequestsOf(attributions: readonly Attribution[]): ServedRequest[] {
  const out: ServedRequest[] = [];
  for (const a of attributions) {
    const tools = servingTools(a);
    if (tools.length === 0 || a.run.request === null) continue;
    out.push({ tools, conversation: a.run.conversation_id ?? a.run.key, words: contentWords(a.run.request) });
  }
  return out;
}

/** The request of each call's run (what the user typed), else the call's own. */
function requestOfRun(runs: readonly Run[]): (call: CallRecord) => string | null {
  const byCall = new Map<string, string | null>();
  for (const run of runs) for (const c of run.calls) byCall.set(c.call_id, run.request);
  return (call) => byCall.get(call.call_id) ?? call.request;
}

/** How evidence text is masked: argument values of the text's conversation, then the privacy rule. */
export interface Masking {
  /** Masks a text about `tool` from the run (or lone call) whose calls are `calls`. */
  text(text: string, tool: string, calls: readonly CallRecord[], conversation: string | null): string;
}

/** Argument values are those of every call of the conversation (a name given two turns ago is still one). */
function maskingOf(input: EvidenceInput, runs: readonly Run[]): Masking {
  const byConversation = new Map<string, CallRecord[]>();
  for (const run of runs) {
    if (run.conversation_id === null) continue;
    const list = byConversation.get(run.conversation_id) ?? [];
    list.push(...run.calls);
    byConversation.set(run.conversation_id, list);
  }
  // One values array per conversation, so the matcher built from it is built once (privacy.ts).
  const valuesOf = new Map<string, unknown[]>();
  for (const [conversation, calls] of byConversation) valuesOf.set(conversation, argumentValues(calls));
  return {
    text(text, tool, calls, conversation) {
      const known = conversation === null ? undefined : valuesOf.get(conversation);
      const values = known ?? argumentValues(calls);
      const scrubbed = scrubValues(text, values);
      return input.mask ? input.mask(scrubbed, tool, values) : scrubbed;
    },
  };
}

/** Evidence grouped by the tool it is about. */
export function evidenceByTool(evidence: readonly Evidence[]): Map<string, ToolEvidence> {
  const out = new Map<string, ToolEvidence>();
  for (const e of evidence) {
    const entry = out.get(e.tool) ?? { failed: [], missed: [], confused: [] };
    if (e.kind === 'failed_call') entry.failed.push(e);
    else if (e.kind === 'missed_request') entry.missed.push(e);
    else if (e.kind === 'confused_request') entry.confused.push(e);
    out.set(e.tool, entry);
  }
  return out;
}

/**
 * Failed calls (`success: false`) of registered tools; the text is the scrubbed error. A failure
 * the same call got past when retried is no evidence at all; one that was not the caller's fault
 * (failures.ts: an outage, a business outcome) is evidence that says why it teaches no note.
 */
export function findFailedCalls(
  calls: readonly CallRecord[],
  registered: ReadonlySet<string>,
  masking: Masking = plainMasking,
  requestOf: (call: CallRecord) => string | null = (c) => c.request,
): Evidence[] {
  const readings = readFailures(calls, requestOf);
  return calls.flatMap((c) => {
    const reading = readings.get(c.call_id);
    if (c.success || !registered.has(c.tool) || reading?.kind === 'no_fault') return [];
    const e = callEvidence(
      c,
      'failed_call',
      `failed:${c.call_id}`,
      c.error ?? 'failed without an error message',
      masking,
    );
    return [reading?.whyNoNote ? { ...e, why_no_note: reading.whyNoNote } : e];
  });
}

/** Whether a failed call can teach a usage note: it was the caller's fault (failures.ts). */
export function teachesNote(e: Evidence): boolean {
  return e.kind === 'failed_call' && e.why_no_note === undefined;
}

/** Masking with the argument values of the text's own calls only. */
const plainMasking: Masking = { text: (text, _tool, calls) => scrubValues(text, argumentValues(calls)) };

/**
 * The successful calls an example call was built from, as evidence a revision can list. Their
 * requests are shown to the approver, so they are masked like any evidence (`mask`: the privacy
 * rule for the review's log; argument values of the call are masked in any case).
 */
export function successfulCallEvidence(
  calls: readonly CallRecord[],
  mask?: (text: string, tool: string) => string,
): Evidence[] {
  const masking: Masking = mask
    ? { text: (text, tool, own) => mask(scrubValues(text, argumentValues(own)), tool) }
    : plainMasking;
  return calls
    .filter((c) => c.success)
    .map((c) => callEvidence(c, 'successful_call', `succeeded:${c.call_id}`, c.request ?? '', masking));
}

function callEvidence(call: CallRecord, kind: Evidence['kind'], id: string, text: string, masking: Masking): Evidence {
  return {
    evidence_id: id,
    kind,
    tool: call.tool,
    text: masking.text(text, call.tool, [call], call.conversation_id),
    arguments: Object.keys(call.arguments),
    how: null,
    served_by: null,
    turn_id: call.turn_id,
    call_id: call.call_id,
    at: call.at,
  };
}

/** A request X served that routing offered X for at a rank above this one only just reached X. */
export const REACHED_RANK = 1;

/**
 * Missed requests (docs/learning.md): a run finally served by X that did not reach X.
 * - `not_offered`: X served the run itself although routing did not offer it (the agent went looking);
 * - `next_request`: the run did not call X, and the conversation's next request was served by X
 *   (the first wording is the one that was missed);
 * - `verified`: an outcome names X and the run did not call X;
 * - `ranked_low`: X served the run and routing offered it, but below rank `REACHED_RANK`: the
 *   wording only just reached X; unless the conversation's next request went to a tool routing
 *   ranked above X for this one (`nextWentAbove`).
 * A run that called X and failed reached X: it is no miss for X, whatever served it later. A run
 * several tools served together (attribution.ts) is no miss for any of them.
 */
export function findMissedRequests(
  attributions: Iterable<Attribution>,
  registered: ReadonlySet<string>,
  masking: Masking = plainMasking,
): Evidence[] {
  return fromServedRuns(attributions, registered, (a, x) => {
    // Served together: the wording asked for several tools, so it is no one tool's example.
    if (a.together.length > 1) return [];
    const run = a.run;
    const rank = run.turn?.routed ? (run.turn.offered.find((o) => o.name === x)?.rank ?? null) : undefined;
    if (a.via === 'own' && rank === null) {
      return [requestEvidence(run, 'missed_request', 'not_offered', x, null, a.call, [run], masking)];
    } else if (a.via === 'own' && typeof rank === 'number' && rank > REACHED_RANK && !nextWentAbove(a, rank)) {
      return [requestEvidence(run, 'missed_request', 'ranked_low', x, null, a.call, [run], masking)];
    } else if (a.via === 'next_request' && a.next && !calledTool(run, x)) {
      return [requestEvidence(run, 'missed_request', 'next_request', x, null, a.call, [run, a.next], masking)];
    } else if (a.via === 'verified' && !calledTool(run, x)) {
      return [requestEvidence(run, 'missed_request', 'verified', x, null, a.call, [run], masking)];
    }
    return [];
  });
}

/**
 * The conversation's next request went to a tool routing ranked above `rank` for this run's
 * request: the agent passed that tool over here, and the user's next request was served by it.
 * Whether the next request re-asks or starts another task, the pick that put the wording on the
 * lower-ranked tool is in doubt, so it is no `ranked_low` miss (docs/learning.md "Evidence").
 */
function nextWentAbove(a: Attribution, rank: number): boolean {
  const offered = a.run.turn?.offered ?? [];
  return a.next_served.some((t) => offered.some((o) => o.name === t && o.rank < rank));
}

/** The evidence `find` reads from each run a registered tool (`x`) finally served, in order; nulls dropped. */
function fromServedRuns(
  attributions: Iterable<Attribution>,
  registered: ReadonlySet<string>,
  find: (a: Attribution, x: string) => Iterable<Evidence | null>,
): Evidence[] {
  const out: Evidence[] = [];
  for (const a of attributions) {
    const x = a.served_by;
    if (x === null || !registered.has(x)) continue;
    for (const e of find(a, x)) if (e) out.push(e);
  }
  return out;
}

/**
 * Confused requests for Y, finally served by X (docs/learning.md). At most one per run and tool:
 * - `re_asked`: Y answered the run, and the conversation's next request asked again for the same
 *   thing (reask.ts: not a follow-up task) and was finally served by X;
 * - `ranked_first`: routing ranked Y first and left X out, and the run did not call Y;
 * - `verified`: an outcome names X; Y is the tool that served the run, else the one routing
 *   ranked first while leaving X out.
 * Both tools must be registered: a "Not for" line can only name a registered tool. None for an X
 * the log shows around whatever was asked (`aroundAnything`: tool-roles.ts's habit follow-ups and
 * preparation steps) unless an outcome names it.
 */
export function findConfusedRequests(
  attributions: Iterable<Attribution>,
  registered: ReadonlySet<string>,
  masking: Masking = plainMasking,
  aroundAnything: ReadonlySet<string> = new Set(),
): Evidence[] {
  return fromServedRuns(attributions, registered, (a, x) => {
    // A tool the log shows around whatever was asked (a notification sent by habit after changes,
    // a lookup before them) serves a request only by the log's reading of it; only the
    // application's own verdict says a request was for it.
    if (aroundAnything.has(x) && a.via !== 'verified') return [];
    const run = a.run;
    const found = new Map<string, Evidence | null>();
    const add = (y: string | null, how: 're_asked' | 'ranked_first' | 'verified', valueRuns: Run[]) => {
      if (y === null || y === x || !registered.has(y) || found.has(y) || a.together.includes(y)) return;
      found.set(y, requestEvidence(run, 'confused_request', how, y, x, a.call, valueRuns, masking));
    };
    const first = rankedFirst(run);
    const leftOut = run.turn?.routed === true && !run.turn.offered.some((o) => o.name === x);
    if (a.via === 'verified') {
      add(a.own ?? (leftOut ? first : null), 'verified', [run]);
    } else {
      if (a.via === 'next_request' && a.next && a.re_asked) add(a.own, 're_asked', [run, a.next]);
      // A Y the run called on the way (a lookup before a change) does not count.
      if (leftOut && first !== null && !calledTool(run, first)) add(first, 'ranked_first', [run]);
    }
    return found.values();
  });
}

/**
 * Evidence about a run's request, or null when the run carried none (requests count only when the
 * call or its turn carried one). Values of every call in `valueRuns` are scrubbed from the text.
 */
function requestEvidence(
  run: Run,
  kind: 'missed_request' | 'confused_request',
  how: NonNullable<Evidence['how']>,
  tool: string,
  servedBy: string | null,
  call: CallRecord | null,
  valueRuns: readonly Run[],
  masking: Masking,
): Evidence | null {
  if (run.request === null || run.request.trim() === '') return null;
  const prefix = kind === 'missed_request' ? 'missed' : 'confused';
  return {
    evidence_id: `${prefix}:${how}:${run.key}`,
    kind,
    tool,
    text: masking.text(
      run.request,
      tool,
      valueRuns.flatMap((r) => r.calls),
      run.conversation_id,
    ),
    arguments: call ? Object.keys(call.arguments) : [],
    how,
    served_by: servedBy,
    turn_id: run.turn_id,
    call_id: call?.call_id ?? null,
    at: run.at,
  };
}

/** The tool routing ranked first for a routed turn, or null. */
function rankedFirst(run: Run): string | null {
  if (!run.turn?.routed) return null;
  let best: { name: string; rank: number } | null = null;
  for (const o of run.turn.offered) if (best === null || o.rank < best.rank) best = o;
  return best?.name ?? null;
}
