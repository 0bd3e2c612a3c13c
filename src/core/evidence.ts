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
 * Text is the request or error with argument values scrubbed (scrub.ts); `arguments` lists
 * argument names only. `call_id`/`arguments` describe the call that served the request: the
 * credited tool's call (for `next_request` and `re_asked`, the call in the following turn).
 */
import type { Evidence } from '../schemas.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from './records.ts';
import { argumentValues, scrubValues } from './scrub.ts';
import { conversations, groupRuns, type Run } from './serving.ts';

export interface EvidenceInput {
  turns: readonly TurnRecord[];
  calls: readonly CallRecord[];
  outcomes: readonly OutcomeRecord[];
  /** Registered tool names: only a registered tool has evidence (docs/learning.md: registering one makes its past failures evidence). */
  registered: ReadonlySet<string>;
}

/** One tool's evidence, split by kind. */
export interface ToolEvidence {
  failed: Evidence[];
  missed: Evidence[];
  confused: Evidence[];
}

/** Every failed call, missed request and confused request in the log (docs/learning.md "Evidence"). */
export function findEvidence(input: EvidenceInput): Evidence[] {
  const runs = groupRuns(input.turns, input.calls);
  const found = [
    ...findFailedCalls(input.calls, input.registered),
    ...findMissedRequests(runs, input.registered),
    ...findConfusedRequests(runs, input.outcomes, input.registered),
  ];
  const byId = new Map<string, Evidence>();
  for (const e of found) byId.set(e.evidence_id, e);
  return [...byId.values()].sort((a, b) => timeOf(a.at) - timeOf(b.at) || a.evidence_id.localeCompare(b.evidence_id));
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

/** Failed calls (`success: false`) of registered tools; the text is the scrubbed error. */
export function findFailedCalls(calls: readonly CallRecord[], registered: ReadonlySet<string>): Evidence[] {
  return calls
    .filter((c) => !c.success && registered.has(c.tool))
    .map((c) => callEvidence(c, 'failed_call', `failed:${c.call_id}`, c.error ?? 'failed without an error message'));
}

/** The successful calls an example call was built from, as evidence a revision can list. */
export function successfulCallEvidence(calls: readonly CallRecord[]): Evidence[] {
  return calls
    .filter((c) => c.success)
    .map((c) => callEvidence(c, 'successful_call', `succeeded:${c.call_id}`, c.request ?? ''));
}

function callEvidence(call: CallRecord, kind: Evidence['kind'], id: string, text: string): Evidence {
  return {
    evidence_id: id,
    kind,
    tool: call.tool,
    text: scrubValues(text, argumentValues([call])),
    arguments: Object.keys(call.arguments),
    how: null,
    served_by: null,
    turn_id: call.turn_id,
    call_id: call.call_id,
    at: call.at,
  };
}

/**
 * Missed requests for X (docs/learning.md): (a) `not_offered` — X served a routed turn it was not offered
 * for; (b) `next_request` — the turn was not served by X and the next turn of the same conversation
 * was: the first wording is the missed one.
 */
export function findMissedRequests(runs: readonly Run[], registered: ReadonlySet<string>): Evidence[] {
  const out: Evidence[] = [];
  for (const run of runs) {
    const x = run.serving?.tool;
    if (x === undefined || !registered.has(x) || !run.turn?.routed) continue;
    if (!run.turn.offered.some((o) => o.name === x)) {
      const e = requestEvidence(run, 'missed_request', 'not_offered', x, null, run.serving, [run]);
      if (e) out.push(e);
    }
  }
  for (const [first, next] of consecutive(runs)) {
    const x = next.serving?.tool;
    if (x === undefined || !registered.has(x) || first.serving?.tool === x) continue;
    const e = requestEvidence(first, 'missed_request', 'next_request', x, null, next.serving, [first, next]);
    if (e) out.push(e);
  }
  return out;
}

/**
 * Confused requests for Y, served by X (docs/learning.md): `re_asked`, `ranked_first` and `verified`.
 * Both tools must be registered: a "Not for" line can only name a registered tool.
 */
export function findConfusedRequests(
  runs: readonly Run[],
  outcomes: readonly OutcomeRecord[],
  registered: ReadonlySet<string>,
): Evidence[] {
  const both = (y: string, x: string) => y !== x && registered.has(y) && registered.has(x);
  const out: (Evidence | null)[] = [];
  for (const [first, next] of consecutive(runs)) {
    const y = first.serving?.tool;
    const x = next.serving?.tool;
    if (y !== undefined && x !== undefined && both(y, x)) {
      out.push(requestEvidence(first, 'confused_request', 're_asked', y, x, next.serving, [first, next]));
    }
  }
  for (const run of runs) {
    const y = rankedFirst(run);
    const x = run.serving?.tool;
    if (y === null || x === undefined || !both(y, x) || !run.turn) continue;
    // A Y the run called on the way (a lookup before a change) does not count (docs/learning.md (b)).
    const offeredX = run.turn.offered.some((o) => o.name === x);
    if (!offeredX && !run.calls.some((c) => c.tool === y)) {
      out.push(requestEvidence(run, 'confused_request', 'ranked_first', y, x, run.serving, [run]));
    }
  }
  out.push(...findVerified(runs, outcomes, both));
  return out.filter((e): e is Evidence => e !== null);
}

/**
 * `verified`: an outcome names X as the tool that should have served a turn whose serving tool
 * (or, when nothing served, the rank-1 tool) was Y≠X. The last outcome reported for a turn stands;
 * `ok` is not read, the named tool is the fact.
 */
function findVerified(
  runs: readonly Run[],
  outcomes: readonly OutcomeRecord[],
  both: (y: string, x: string) => boolean,
): (Evidence | null)[] {
  const latest = new Map<string, OutcomeRecord>();
  for (const o of outcomes) latest.set(o.turn_id, o);
  const byTurn = new Map<string, Run>();
  for (const run of runs) if (run.turn_id !== null) byTurn.set(run.turn_id, run);
  const out: (Evidence | null)[] = [];
  for (const outcome of latest.values()) {
    const run = byTurn.get(outcome.turn_id);
    const x = outcome.served_by;
    if (!run || x === null) continue;
    const y = run.serving?.tool ?? rankedFirst(run);
    if (y === null || !both(y, x)) continue;
    const xCall = [...run.calls].reverse().find((c) => c.tool === x && c.success) ?? null;
    out.push(requestEvidence(run, 'confused_request', 'verified', y, x, xCall, [run]));
  }
  return out;
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
): Evidence | null {
  if (run.request === null || run.request.trim() === '') return null;
  const prefix = kind === 'missed_request' ? 'missed' : 'confused';
  return {
    evidence_id: `${prefix}:${how}:${run.key}`,
    kind,
    tool,
    text: scrubValues(run.request, argumentValues(valueRuns.flatMap((r) => r.calls))),
    arguments: call ? Object.keys(call.arguments) : [],
    how,
    served_by: servedBy,
    turn_id: run.turn_id,
    call_id: call?.call_id ?? null,
    at: run.at,
  };
}

/** Each pair of consecutive runs of one conversation. */
function consecutive(runs: readonly Run[]): [Run, Run][] {
  const pairs: [Run, Run][] = [];
  for (const conversation of conversations(runs)) {
    for (let i = 0; i + 1 < conversation.length; i++) {
      const first = conversation[i];
      const next = conversation[i + 1];
      if (first && next) pairs.push([first, next]);
    }
  }
  return pairs;
}

/** The tool routing ranked first for a routed turn, or null. */
function rankedFirst(run: Run): string | null {
  if (!run.turn?.routed) return null;
  let best: { name: string; rank: number } | null = null;
  for (const o of run.turn.offered) if (best === null || o.rank < best.rank) best = o;
  return best?.name ?? null;
}

function timeOf(at: string): number {
  const t = Date.parse(at);
  return Number.isNaN(t) ? 0 : t;
}
