/**
 * Which tool finally served each run (docs/learning.md "Attribution"): computed once, read by every
 * learning rule (misses, confusions, the displacement re-check) and by the pins and quality views.
 *
 * - `own`: the run's own serving call served it: its last successful call (a lookup on the way to
 *   a change is preparation), with habit follow-ups set aside (tool-roles.ts: a notification the
 *   agent sends after every change is not what the user asked for);
 * - `next_request`: the same conversation's next request was finally served by another tool, and
 *   either nothing served this run (no successful call, or the application said `ok: false`) —
 *   whatever words the two share, since the user still wanted something — or the next request asks
 *   again for the same thing (reask.ts: a paraphrase or a correction, not a follow-up task), or the
 *   run's tool was passed over: routing offered the tool that finally served the next request above
 *   the one the agent called, and the next request does not read as a follow-up (`passedOverThenServed`).
 *   Chains follow through: wrong → re-ask → wrong → re-ask → right credits every earlier run to the last;
 * - `verified`: the application reported through `/outcomes` which tool should have served the
 *   turn, and that names another tool than the rules above; the report stands.
 *
 * Tools that each changed something in one run that asked for several things served it together
 * (`together`): none of them is confused with another, and none learns the wording alone.
 *
 * A **doubtful** run (tool-roles.ts: several tools changed something for a request that asks one
 * thing, or a tool failed and another succeeded after it) has no tool that served it: it teaches no
 * example and no "Not for" line, and is no missed request for the tool of the next request unless
 * that request re-asks it. Reviews count such runs (`doubtful_runs`). An outcome naming the tool
 * resolves the doubt.
 */
import type { CallRecord, OutcomeRecord } from './records.ts';
import { isReAsk, readsAsFollowUp } from './reask.ts';
import { argumentValues } from './scrub.ts';
import { conversations, type Run } from './serving.ts';
import { type Doubt, findToolRoles, runService, type ToolRoles } from './tool-roles.ts';

export interface Attribution {
  run: Run;
  /** The tool that finally served the request, or null when nothing did. */
  served_by: string | null;
  /** How `served_by` was found; null when nothing served the request. */
  via: 'own' | 'next_request' | 'verified' | null;
  /** The call that served the request (in a later run for `next_request`), when one did. */
  call: CallRecord | null;
  /** The tool the run's own calls answered with (its serving call), whatever the attribution says; null when doubtful. */
  own: string | null;
  /** The next run of the conversation, when `via` is `next_request`. */
  next: Run | null;
  /** True when `via` is `next_request` because the next request asked again for the same thing. */
  re_asked: boolean;
  /** Tools that served the run together (each changed something a request joining asks asked for); else empty. */
  together: string[];
  /** The application said nothing served the run (`ok: false` with no `served_by`). */
  failed_verdict: boolean;
  /** Why the log cannot say which tool served the run (then `served_by` is null), or null. */
  doubt: Doubt | null;
  /**
   * The tools that served the conversation's next request: those that finally served it, or, when
   * the log cannot say which (doubtful), every tool that did something in it; empty when there is
   * no next request or nothing served it. Read by the `ranked_low` rule (evidence.ts).
   */
  next_served: string[];
  /**
   * The run's own tool answered it, and the conversation's next request was served by other tools
   * in words that neither ask again nor read as a follow-up (reask.ts). The log cannot tell a new
   * task from a user who gave up on a wrong answer and asked in other words: routing memory does
   * not count such a run as served (docs/learning.md "Routing memory").
   */
  unsettled: boolean;
}

/** The tools that finally served a run: each of the tools that served it together, else its `served_by`, else none. */
export function servingTools(a: Attribution): string[] {
  if (a.together.length > 1) return a.together;
  return a.served_by === null ? [] : [a.served_by];
}

export interface AttributionOptions {
  /** docs/configuration.md `min_conversations`: how many conversations show a habit before it is one. */
  minConversations?: number;
  /** `findToolRoles(runs, minConversations)` when the caller has it already (it reads them too). */
  roles?: ToolRoles;
}

/** One attribution per run, keyed by run key. Outcomes: the last one reported for a turn stands. */
export function attributeRuns(
  runs: readonly Run[],
  outcomes: readonly OutcomeRecord[] = [],
  opts: AttributionOptions = {},
): Map<string, Attribution> {
  const latest = new Map<string, OutcomeRecord>();
  for (const o of outcomes) latest.set(o.turn_id, o);
  const roles: ToolRoles = opts.roles ?? findToolRoles(runs, opts.minConversations ?? 2);
  const out = new Map<string, Attribution>();
  const doers = new Map<string, string[]>();
  for (const run of runs) {
    const service = runService(run, roles);
    doers.set(run.key, service.doers);
    const verdict = run.turn_id === null ? undefined : latest.get(run.turn_id);
    const failed = verdict !== undefined && !verdict.ok && (verdict.served_by ?? null) === null;
    const own = service.call?.tool ?? null;
    const doubt = failed ? null : service.doubt;
    const unserved = failed || doubt !== null;
    out.set(run.key, {
      run,
      served_by: unserved ? null : own,
      via: unserved || own === null ? null : 'own',
      call: unserved ? null : service.call,
      // A doubtful run's own answer is unknown: no "Not for" line rests on it, even once re-asked.
      own: doubt === null ? own : null,
      next: null,
      re_asked: false,
      together: unserved ? [] : service.together,
      failed_verdict: failed,
      doubt,
      next_served: [],
      unsettled: false,
    });
  }
  for (const list of conversations(runs)) linkConversation(list, out);
  for (const entry of out.values()) {
    const named = entry.run.turn_id === null ? null : (latest.get(entry.run.turn_id)?.served_by ?? null);
    if (named === null || named === entry.served_by) continue;
    entry.served_by = named;
    entry.via = 'verified';
    entry.call = [...entry.run.calls].reverse().find((c) => c.tool === named && c.success) ?? null;
    entry.next = null;
    entry.re_asked = false;
    entry.together = [];
    entry.doubt = null;
  }
  for (const list of conversations(runs)) noteNextServed(list, out, doers);
  return out;
}

/** Sets each run's `next_served` from the next run of its conversation, once every attribution is final. */
function noteNextServed(
  list: readonly Run[],
  out: Map<string, Attribution>,
  doers: ReadonlyMap<string, string[]>,
): void {
  for (let i = 0; i + 1 < list.length; i++) {
    const entry = out.get(list[i]?.key ?? '');
    const next = list[i + 1];
    const after = next ? out.get(next.key) : undefined;
    if (!entry || !next || !after) continue;
    const served = servingTools(after);
    entry.next_served = served.length > 0 || after.doubt === null ? served : (doers.get(next.key) ?? []);
    const mine = servingTools(entry);
    entry.unsettled =
      entry.via === 'own' &&
      served.length > 0 &&
      !served.some((t) => mine.includes(t)) &&
      next.request !== null &&
      !readsAsFollowUp(next.request);
  }
}

/**
 * Credits each run of one conversation to the tool that finally served the next one where the
 * rules of the file comment say so, from the last run back, so a chain ends where it was served.
 */
function linkConversation(list: readonly Run[], out: Map<string, Attribution>): void {
  for (let i = list.length - 2; i >= 0; i--) {
    const run = list[i];
    const next = list[i + 1];
    const entry = run ? out.get(run.key) : undefined;
    const after = next ? out.get(next.key) : undefined;
    if (!run || !next || !entry || !after) continue;
    const later = after.served_by;
    if (later === null || later === entry.served_by || entry.together.includes(later)) continue;
    const reAsked = asksAgain(run, next, entry.own, later);
    // Nothing served the run: any served next request is its miss; a served or doubtful run needs a re-ask.
    if ((entry.served_by !== null || entry.doubt !== null) && !reAsked) continue;
    entry.served_by = later;
    entry.via = 'next_request';
    entry.call = after.call;
    entry.next = next;
    entry.re_asked = reAsked;
    entry.together = [];
    entry.doubt = null;
  }
}

/** How many runs were doubtful (no re-ask or outcome resolved them), by why. */
export function countDoubtful(attributions: Iterable<Attribution>): Record<Doubt, number> {
  const out: Record<Doubt, number> = { several_changed: 0, failed_before_other: 0 };
  for (const a of attributions) if (a.doubt !== null) out[a.doubt]++;
  return out;
}

/**
 * The link decision of `linkConversation` for a run its own tool `own` answered and whose next
 * request `later` finally served: the next request asks again for the same thing, in words
 * (`reAsks`) or because the agent passed over the tool that served it (`passedOverThenServed`).
 */
export function asksAgain(run: Run, next: Run, own: string | null, later: string | null): boolean {
  return reAsks(run, next) || passedOverThenServed(run, next, own, later);
}

/**
 * The agent passed over the right tool: routing offered `later` (the tool that finally served the
 * next request) for this run's request ranked above `own` (the tool the agent answered with), and
 * the next request does not read as a follow-up task (reask.ts). The user got an answer from a tool
 * routing itself thought less fitting, asked again, and the better-ranked tool served: the agent's
 * pick was the mistake, whatever words the user chose the second time. A turn that routing did not
 * rank (the stable list) tells nothing, nor does a run whose tool or `later` was not offered.
 */
export function passedOverThenServed(run: Run, next: Run, own: string | null, later: string | null): boolean {
  if (own === null || later === null || own === later) return false;
  if (next.request === null || !run.turn?.routed) return false;
  const rankOf = (name: string) => run.turn?.offered.find((o) => o.name === name)?.rank;
  const ownRank = rankOf(own);
  const laterRank = rankOf(later);
  if (ownRank === undefined || laterRank === undefined || laterRank >= ownRank) return false;
  return !readsAsFollowUp(next.request);
}

/** The next request asks again for what the run asked (reask.ts); values of both runs' calls never count. */
export function reAsks(run: Run, next: Run): boolean {
  if (run.request === null || next.request === null) return false;
  return isReAsk(run.request, next.request, argumentValues([...run.calls, ...next.calls]));
}

/** True when the run called `tool` at all (successfully or not): its wording reached that tool. */
export function calledTool(run: Run, tool: string): boolean {
  return run.calls.some((c) => c.tool === tool);
}
