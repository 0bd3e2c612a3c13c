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
 *   one, or routing offered it and neither offered nor the request named the later one;
 * - a **preparation tool** is one whose success, in most of the runs asking for one thing where it
 *   succeeds, is followed by the success of another tool that is no follow-up: it prepares what
 *   others do. (A run whose request joins several asks cannot tell preparing from doing.)
 *
 * In a run, a trailing follow-up call is set aside when an earlier success did what was asked and
 * is of a tool that is neither: what remains serves. Tools left that are neither preparation nor
 * set aside served the run together when its request joins several asks ("… and …"): each changed
 * something the user asked for.
 */
import type { CallRecord } from './records.ts';
import type { Run } from './serving.ts';
import { contentWords, splitIdentifier } from './text.ts';

/** What the log says of each tool's place in a run. */
export interface ToolRoles {
  followUps: ReadonlySet<string>;
  preparation: ReadonlySet<string>;
}

/** A run's service: the call that served it, and the tools that served it together (own included). */
export interface RunService {
  call: CallRecord | null;
  together: string[];
}

/** Words by which one request asks for several things. */
const JOINS = /\b(and|then|also|plus|as well as)\b|[&;]/i;

/** True when the run's request joins several asks ("… and …"). */
function joinsAsks(run: Run): boolean {
  return run.request !== null && JOINS.test(run.request);
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
      t.runs++;
      if (order.slice(0, i).some((_, j) => didTheAsk(run, order, j, call.tool))) {
        t.habit++;
        t.habitConversations.add(run.conversation_id ?? run.key);
      }
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

/** The call that served a run, and the tools that served it together (file comment). */
export function runService(run: Run, roles: ToolRoles): RunService {
  const order = successOrder(run);
  while (order.length > 1) {
    const last = order[order.length - 1];
    if (!last || !roles.followUps.has(last.tool)) break;
    const serves = order
      .slice(0, -1)
      .some(
        (c, j) => !roles.followUps.has(c.tool) && !roles.preparation.has(c.tool) && didTheAsk(run, order, j, last.tool),
      );
    if (!serves) break;
    order.pop();
  }
  const call = order[order.length - 1] ?? null;
  if (call === null) return { call: null, together: [] };
  const doers = order.filter((c) => c === call || (!roles.preparation.has(c.tool) && !roles.followUps.has(c.tool)));
  return { call, together: doers.length > 1 && joinsAsks(run) ? doers.map((c) => c.tool) : [] };
}
