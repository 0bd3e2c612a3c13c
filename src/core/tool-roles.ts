/**
 * What each successful call of a run was for (docs/learning.md "Attribution"). A run that makes
 * several calls usually does one thing the user asked for; the other calls prepare it (a lookup
 * before a change) or follow it by habit (a confirmation e-mail after every change, whatever was
 * asked). The log shows which is which, across runs:
 *
 * - a **follow-up tool** is one whose successful calls, in most of the runs where it succeeds, come
 *   after the success of a tool that did what was asked, in at least `min_conversations`
 *   conversations: the agent calls it after changes, not because it was asked. A tool did what
 *   was asked, before the later one, when it was itself prepared by an earlier call (lookup,
 *   change, notify), or when the request points at it more: it names the tool and not the later
 *   one, or routing offered it and neither offered nor the request named the later one. A run in
 *   which the tool follows only a success that did not do the ask that way (a lookup) tells
 *   neither way and is not counted: the tool was asked for after a lookup, or sent by habit after
 *   a lookup that answered, so runs of the second kind do not hide the habit;
 * - a **preparation tool** is one whose success, in most of the runs asking for one thing where it
 *   succeeds, is followed by the success of another tool that is no follow-up: it prepares what
 *   others do. (A run whose request joins several asks cannot tell preparing from doing.)
 *
 * In a run, a trailing follow-up call is set aside when an earlier success of a tool that is no
 * follow-up precedes it and the request does not name the follow-up tool more than that earlier
 * one: what remains serves. That holds when the earlier success is only a lookup (a preparation
 * tool): "where is my order" answered by a lookup and then a status e-mail sent by habit was served
 * by the lookup, since the agent sends that e-mail whatever was asked. Tools left that are neither
 * preparation nor set aside served the run together when its request joins several asks
 * ("… and …"): each changed something the user asked for.
 *
 * A run is **doubtful** when the log cannot say which tool served it:
 * - `several_changed`: several tools that are neither preparation nor follow-ups succeeded, and the
 *   request does not join several asks: one of them did what was asked, the others something the
 *   user did not ask for, and nothing says which;
 * - `failed_before_other`: a call of a tool that is no preparation failed, was not retried into a
 *   success, and another tool succeeded after it: the agent may have fallen back to the right tool,
 *   or reported the failure with another (an e-mail saying the cancellation did not go through).
 */
import type { CallRecord } from './records.ts';
import type { Run } from './serving.ts';
import { asksSeveral, contentWords, splitIdentifier } from './text.ts';

/** What the log says of each tool's place in a run. */
export interface ToolRoles {
  followUps: ReadonlySet<string>;
  preparation: ReadonlySet<string>;
}

/** Why a run's attribution is doubtful (file comment). */
export type Doubt = 'several_changed' | 'failed_before_other';

/** A run's service: the call that served it, and the tools that served it together (own included). */
export interface RunService {
  call: CallRecord | null;
  together: string[];
  /** Why the log cannot say which tool served the run, or null when it can. */
  doubt: Doubt | null;
  /** The tools that did something in the run: the serving call's, and every other success that neither prepares nor follows by habit. */
  doers: string[];
}

/** True when the run's request joins several asks ("… and …"). */
function joinsAsks(run: Run): boolean {
  return run.request !== null && asksSeveral(run.request);
}

/** The tools of a run's successful calls, each at its last success, in call order. */
function successOrder(run: Run): CallRecord[] {
  const last = new Map<string, CallRecord>();
  for (const c of [...run.calls].sort((a, b) => a.seq - b.seq)) if (c.success) last.set(c.tool, c);
  return [...last.values()].sort((a, b) => a.seq - b.seq);
}

/** True when routing offered the tool for the run's request. */
function offered(run: Run, tool: string): boolean {
  return run.turn?.routed === true && run.turn.offered.some((o) => o.name === tool);
}

function namesTool(run: Run, tool: string): boolean {
  if (run.request === null) return false;
  const asked = contentWords(run.request);
  for (const w of contentWords(splitIdentifier(tool))) if (asked.has(w)) return true;
  return false;
}

/**
 * True when the run's request points at `a` more than at `b`: it names `a` and not `b`, or routing
 * offered `a` while it neither offered nor named `b`.
 */
export function pointsAtMore(run: Run, a: string, b: string): boolean {
  const na = namesTool(run, a);
  const nb = namesTool(run, b);
  if (na !== nb) return na;
  return !nb && offered(run, a) && !offered(run, b);
}

/** True when the success at `order[i]` did what was asked before `later` (file comment). */
function didTheAsk(run: Run, order: readonly CallRecord[], i: number, later: string): boolean {
  const call = order[i];
  if (!call) return false;
  return i > 0 || pointsAtMore(run, call.tool, later);
}

interface Tally {
  runs: number;
  habit: number;
  habitConversations: Set<string>;
  followed: number;
}

/** Finds the follow-up and preparation tools of a log (file comment). */
export function findToolRoles(runs: readonly Run[], minConversations: number): ToolRoles {
  const tallies = new Map<string, Tally>();
  const tally = (tool: string): Tally => {
    let t = tallies.get(tool);
    if (!t) {
      t = { runs: 0, habit: 0, habitConversations: new Set(), followed: 0 };
      tallies.set(tool, t);
    }
    return t;
  };
  const ordered = runs.map((run) => ({ run, order: successOrder(run) }));
  for (const { run, order } of ordered) {
    order.forEach((call, i) => {
      const t = tally(call.tool);
      if (order.slice(0, i).some((_, j) => didTheAsk(run, order, j, call.tool))) {
        t.runs++;
        t.habit++;
        t.habitConversations.add(run.conversation_id ?? run.key);
      } else if (i === 0) t.runs++;
      // Else it follows only a success that may have prepared it (a lookup): it was either asked for
      // or sent by habit after a lookup that answered, and the run tells neither; it is not counted.
    });
  }
  const followUps = new Set<string>();
  for (const [tool, t] of tallies) {
    if (t.habit * 2 > t.runs && t.habitConversations.size >= minConversations) followUps.add(tool);
  }
  const single = new Map<string, number>();
  for (const { run, order } of ordered) {
    if (joinsAsks(run)) continue;
    order.forEach((call, i) => {
      single.set(call.tool, (single.get(call.tool) ?? 0) + 1);
      if (order.slice(i + 1).some((after) => !followUps.has(after.tool))) tally(call.tool).followed++;
    });
  }
  const preparation = new Set<string>();
  for (const [tool, t] of tallies) {
    if (t.followed * 2 > (single.get(tool) ?? 0) && t.followed > 0 && !followUps.has(tool)) preparation.add(tool);
  }
  return { followUps, preparation };
}

/** The call that served a run, the tools that served it together, and any doubt (file comment). */
export function runService(run: Run, roles: ToolRoles): RunService {
  const order = successOrder(run);
  while (order.length > 1) {
    const last = order[order.length - 1];
    if (!last || !roles.followUps.has(last.tool)) break;
    const earlier = order.slice(0, -1).filter((c) => !roles.followUps.has(c.tool));
    // Only follow-ups succeeded, or the request names the follow-up tool ("email me the status"): it served.
    if (earlier.length === 0 || earlier.some((c) => namesMore(run, last.tool, c.tool))) break;
    order.pop();
  }
  const call = order[order.length - 1] ?? null;
  if (call === null) return { call: null, together: [], doubt: null, doers: [] };
  const doers = order.filter((c) => c === call || (!roles.preparation.has(c.tool) && !roles.followUps.has(c.tool)));
  const joint = doers.length > 1 && joinsAsks(run);
  return {
    call,
    doers: doers.map((c) => c.tool),
    together: joint ? doers.map((c) => c.tool) : [],
    doubt:
      doers.length > 1 && !joint ? 'several_changed' : failedBefore(run, call, roles) ? 'failed_before_other' : null,
  };
}

/** True when the request names `a` and not `b`. */
function namesMore(run: Run, a: string, b: string): boolean {
  return namesTool(run, a) && !namesTool(run, b);
}

/**
 * True when a call of another tool, no preparation tool, failed before the serving call and that
 * tool never succeeded after its failure in the run (a retry that worked is one run that worked).
 */
function failedBefore(run: Run, serving: CallRecord, roles: ToolRoles): boolean {
  return run.calls.some(
    (f) =>
      !f.success &&
      f.tool !== serving.tool &&
      f.seq < serving.seq &&
      !roles.preparation.has(f.tool) &&
      !run.calls.some((c) => c.success && c.tool === f.tool && c.seq > f.seq),
  );
}
