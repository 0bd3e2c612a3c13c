/**
 * Runs and their serving tool (docs/learning.md): a run is the calls an agent made for one turn; the serving
 * tool is the tool of the run's last successful call. Earlier calls are "on the way" (a lookup
 * before a change) and count for nothing but the call log.
 */
import type { CallRecord, TurnRecord } from './records.ts';

/** One turn's calls, with what the evidence rules need to know about it. */
export interface Run {
  /** Stable key: `turn:<turn_id>`, or `call:<call_id>` for a call logged without a turn. */
  key: string;
  turn_id: string | null;
  /** The turn record, when `/route` or a trace recorded one. */
  turn: TurnRecord | null;
  /** The run's calls, ordered by seq. */
  calls: CallRecord[];
  /** The request: the turn's, else the first one a call carried. Requests count only when present. */
  request: string | null;
  conversation_id: string | null;
  /** The last successful call, or null when nothing in the run succeeded. */
  serving: CallRecord | null;
  /** When the run began (the turn's creation, else its first call), for ordering a conversation. */
  at: string;
}

/** The last successful call of a run, or null (docs/learning.md "serving tool"). */
export function servingCall(calls: readonly CallRecord[]): CallRecord | null {
  let last: CallRecord | null = null;
  for (const call of calls) {
    if (call.success && (last === null || call.seq >= last.seq)) last = call;
  }
  return last;
}

/** The serving tool of a run: the tool of its last successful call, or null. */
export function servingTool(calls: readonly CallRecord[]): string | null {
  return servingCall(calls)?.tool ?? null;
}

/** The calls made before the serving call: preparation, not what the request was for. */
export function onTheWay(calls: readonly CallRecord[]): CallRecord[] {
  const serving = servingCall(calls);
  if (!serving) return [];
  return calls.filter((c) => c !== serving && c.seq < serving.seq);
}

/**
 * The run each call belongs to, by key: `turn:<turn_id>` for a call naming a turn; for a call
 * without a turn but with a conversation and a request, `call:<call_id of the first call>` of the
 * consecutive calls of that conversation asking the same request (a lookup then a change made for
 * one request are one run); `call:<call_id>` for a call with a request but no conversation. A call
 * with neither turn nor request belongs to no run: it can teach usage notes and example calls,
 * never requests (docs/api.md Call). A call without a turn that asks what the newest turn of its
 * conversation asked (the same request, routed before it) belongs to that turn: the agent routed
 * the request and reported its calls without the turn id.
 */
export function runKeys(calls: readonly CallRecord[], turns: readonly TurnRecord[] = []): Map<CallRecord, string> {
  const out = new Map<CallRecord, string>();
  const open = new Map<string, { key: string; request: string }>();
  const routed = routedRequests(turns);
  for (const call of [...calls].sort((a, b) => a.seq - b.seq)) {
    if (call.turn_id !== null) {
      out.set(call, `turn:${call.turn_id}`);
    } else if (call.request !== null && call.conversation_id !== null) {
      const current = open.get(call.conversation_id);
      const request = sameRequestKey(call.request);
      const turn = routed.get(`${call.conversation_id}\u0000${request}`);
      if (turn !== undefined && timeOf(turn.created_at) <= timeOf(call.at)) out.set(call, `turn:${turn.turn_id}`);
      else if (current && current.request === request) out.set(call, current.key);
      else {
        const key = `call:${call.call_id}`;
        open.set(call.conversation_id, { key, request });
        out.set(call, key);
      }
    } else if (call.request !== null) {
      out.set(call, `call:${call.call_id}`);
    }
  }
  return out;
}

/** Per conversation and request, the newest turn that routed it. */
function routedRequests(turns: readonly TurnRecord[]): Map<string, TurnRecord> {
  const out = new Map<string, TurnRecord>();
  for (const t of [...turns].sort((a, b) => a.seq - b.seq)) {
    if (t.conversation_id !== null && t.request !== null)
      out.set(`${t.conversation_id}\u0000${sameRequestKey(t.request)}`, t);
  }
  return out;
}

/** Two requests are the same request when they match up to case and spacing. */
export function sameRequestKey(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, ' ');
}

/**
 * Groups the log into runs (see `runKeys`): every turn (with its calls, possibly none), calls
 * naming a turn that has no record (grouped by that turn_id), and the calls without a turn.
 */
export function groupRuns(turns: readonly TurnRecord[], calls: readonly CallRecord[]): Run[] {
  const byKey = new Map<string, CallRecord[]>();
  for (const [call, key] of runKeys(calls, turns)) {
    const list = byKey.get(key) ?? [];
    list.push(call);
    byKey.set(key, list);
  }
  const runs: Run[] = [];
  for (const turn of turns) {
    const key = `turn:${turn.turn_id}`;
    runs.push(makeRun(key, turn.turn_id, turn, byKey.get(key) ?? []));
    byKey.delete(key);
  }
  for (const [key, list] of byKey) {
    runs.push(makeRun(key, key.startsWith('turn:') ? key.slice('turn:'.length) : null, null, list));
  }
  return runs;
}

function makeRun(key: string, turnId: string | null, turn: TurnRecord | null, calls: CallRecord[]): Run {
  const first = calls[0];
  return {
    key,
    turn_id: turnId,
    turn,
    calls,
    request: turn?.request ?? calls.find((c) => c.request !== null)?.request ?? null,
    conversation_id: turn?.conversation_id ?? calls.find((c) => c.conversation_id !== null)?.conversation_id ?? null,
    serving: servingCall(calls),
    at: turn?.created_at ?? first?.at ?? '',
  };
}

/**
 * The runs of each conversation in order (docs/learning.md: turns of one conversation are ordered by
 * creation). When every run has a turn record they come in turn seq order; when some were logged
 * as calls with no turn, turn and call seqs are different sequences, so the conversation is
 * ordered by time (the turn's creation, else the first call's `at`), seq breaking ties.
 */
export function conversations(runs: readonly Run[]): Run[][] {
  const byConversation = new Map<string, Run[]>();
  for (const run of runs) {
    if (run.conversation_id === null) continue;
    const list = byConversation.get(run.conversation_id) ?? [];
    list.push(run);
    byConversation.set(run.conversation_id, list);
  }
  return [...byConversation.values()].map((list) =>
    list.every((r) => r.turn !== null) ? list.sort(byTurnSeq) : list.sort(byTime),
  );
}

function byTurnSeq(a: Run, b: Run): number {
  return (a.turn?.seq ?? 0) - (b.turn?.seq ?? 0);
}

function byTime(a: Run, b: Run): number {
  const ta = runTime(a);
  const tb = runTime(b);
  if (ta !== tb) return ta - tb;
  return (a.turn?.seq ?? a.calls[0]?.seq ?? 0) - (b.turn?.seq ?? b.calls[0]?.seq ?? 0);
}

/** Milliseconds of a run's start; an unparsable time sorts first rather than breaking the order. */
function runTime(run: Run): number {
  return timeOf(run.at);
}

/** Milliseconds of an ISO time; an unparsable time sorts first rather than breaking the order. */
export function timeOf(at: string): number {
  const t = Date.parse(at);
  return Number.isNaN(t) ? 0 : t;
}
