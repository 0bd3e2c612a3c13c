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
 * Groups the log into runs: every turn (with its calls, possibly none), calls naming a turn that
 * has no record (grouped by that turn_id), and each call without a turn_id that carries a request,
 * which forms its own single-call run. A call with neither turn nor request belongs to no run: it
 * can teach usage notes and example calls, never requests (docs/api.md Call).
 */
export function groupRuns(turns: readonly TurnRecord[], calls: readonly CallRecord[]): Run[] {
  const byTurn = new Map<string, CallRecord[]>();
  const runs: Run[] = [];
  for (const call of [...calls].sort((a, b) => a.seq - b.seq)) {
    if (call.turn_id !== null) {
      const list = byTurn.get(call.turn_id) ?? [];
      list.push(call);
      byTurn.set(call.turn_id, list);
    } else if (call.request !== null) {
      runs.push(makeRun(`call:${call.call_id}`, null, null, [call]));
    }
  }
  const known = new Set<string>();
  for (const turn of turns) {
    known.add(turn.turn_id);
    runs.push(makeRun(`turn:${turn.turn_id}`, turn.turn_id, turn, byTurn.get(turn.turn_id) ?? []));
  }
  for (const [turnId, list] of byTurn) {
    if (!known.has(turnId)) runs.push(makeRun(`turn:${turnId}`, turnId, null, list));
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
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb) return ta - tb;
  return (a.turn?.seq ?? a.calls[0]?.seq ?? 0) - (b.turn?.seq ?? b.calls[0]?.seq ?? 0);
}

/** Milliseconds of a run's start; an unparsable time sorts first rather than breaking the order. */
function timeOf(run: Run): number {
  const t = Date.parse(run.at);
  return Number.isNaN(t) ? 0 : t;
}
