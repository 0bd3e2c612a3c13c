/**
 * What one review reads from the log (docs/learning.md): for each tool read, its newest `max_calls_per_tool`
 * calls and the turns where routing ranked it first; the turns of those calls with their previous
 * and next turn in the same conversation (`next_request`, `re_asked`); every call of every turn read
 * (a run's serving tool is its last successful call); the outcomes reported for those turns. All
 * reads are bounded index reads (src/adapters/d1-review-log.ts), five round trips at most.
 */
import type { CallRecord, OutcomeRecord, TurnRecord } from '../core/records.ts';
import type { Services } from '../env.ts';

export interface ReviewLog {
  turns: TurnRecord[];
  calls: CallRecord[];
  outcomes: OutcomeRecord[];
  /** Each read tool's own newest calls, newest first. */
  own: Map<string, CallRecord[]>;
}

/** Reads the log a review of `tools` needs; conversations are split where a neighbour was not read. */
export async function readReviewLog(
  svc: Services,
  agent: string,
  tools: readonly string[],
  perTool: number,
): Promise<ReviewLog> {
  const log = svc.reviewLog;
  const [own, ranked] = await Promise.all([
    log.recentCalls(agent, tools, perTool),
    log.rankedFirstTurns(agent, tools, perTool),
  ]);
  const ownTurnIds = unique(own.flatMap((c) => c.turn_id ?? []));
  const [ownTurns, neighbours] = await Promise.all([
    log.turnsById(agent, ownTurnIds),
    log.neighbourTurns(agent, ownTurnIds),
  ]);
  const recorded = new Set(ownTurns.map((t) => t.turn_id));
  // A call whose run has no recorded turn finds its neighbouring runs among the conversation's calls.
  const loose = own.filter((c) => c.conversation_id !== null && (c.turn_id === null || !recorded.has(c.turn_id)));
  const nearCalls = await log.neighbourCalls(
    agent,
    loose.map((c) => c.seq),
  );
  const turns = uniqueBy([...ownTurns, ...neighbours, ...ranked], (t) => t.turn_id);
  const known = new Set(turns.map((t) => t.turn_id));
  const extraIds = unique(nearCalls.flatMap((c) => (c.turn_id !== null && !known.has(c.turn_id) ? [c.turn_id] : [])));
  const turnIds = unique([...turns.map((t) => t.turn_id), ...ownTurnIds, ...extraIds]);
  const [extraTurns, turnCalls, outcomes] = await Promise.all([
    log.turnsById(agent, extraIds),
    log.callsOfTurns(agent, turnIds),
    log.outcomesOf(agent, turnIds),
  ]);
  const allTurns = uniqueBy([...turns, ...extraTurns], (t) => t.turn_id);
  const calls = uniqueBy([...own, ...nearCalls, ...turnCalls], (c) => String(c.seq)).sort((a, b) => a.seq - b.seq);
  const anchors = { turns: new Set(ownTurnIds), calls: new Set(loose.map((c) => c.seq)) };
  const split = splitConversations(allTurns, calls, anchors);
  const byTool = new Map<string, CallRecord[]>(tools.map((t) => [t, []]));
  for (const c of [...own].sort((a, b) => b.seq - a.seq)) byTool.get(c.tool)?.push(c);
  return { turns: split.turns, calls: split.calls, outcomes, own: byTool };
}

/**
 * Only neighbours that were read are known to be adjacent: two read turns of a conversation with
 * unread turns between them must not count as "the next turn". A pair of consecutive read runs is
 * adjacent when one of them is an anchor (a run whose previous and next run were read); elsewhere
 * the conversation is cut, and each piece gets its own conversation id (`<id>#<n>`), so the pure
 * evidence rules (src/core/evidence.ts) pair only runs that really follow each other. Runs logged
 * as calls without a recorded turn are ordered by call seq and cut the same way; a conversation
 * that mixes both kinds is paired within each kind (README "Tool learning").
 */
export function splitConversations(
  turns: readonly TurnRecord[],
  calls: readonly CallRecord[],
  anchors: { turns: ReadonlySet<string>; calls: ReadonlySet<number> },
): { turns: TurnRecord[]; calls: CallRecord[] } {
  const turnPiece = pieces(
    turns
      .filter((t) => t.conversation_id !== null)
      .map((t) => ({
        key: t.turn_id,
        conversation: t.conversation_id ?? '',
        seq: t.seq,
        anchor: anchors.turns.has(t.turn_id),
      })),
  );
  const recorded = new Set(turns.map((t) => t.turn_id));
  const looseRuns = new Map<string, { key: string; conversation: string; seq: number; anchor: boolean }>();
  for (const c of calls) {
    if (c.conversation_id === null || (c.turn_id !== null && recorded.has(c.turn_id))) continue;
    const key = c.turn_id === null ? `call:${c.call_id}` : `turn:${c.turn_id}`;
    const run = looseRuns.get(key) ?? { key, conversation: c.conversation_id, seq: c.seq, anchor: false };
    run.seq = Math.min(run.seq, c.seq);
    run.anchor ||= anchors.calls.has(c.seq);
    looseRuns.set(key, run);
  }
  const callPiece = pieces([...looseRuns.values()]);
  return {
    turns: turns.map((t) =>
      turnPiece.has(t.turn_id) ? { ...t, conversation_id: turnPiece.get(t.turn_id) ?? null } : t,
    ),
    calls: calls.map((c) => {
      const key = c.turn_id === null ? `call:${c.call_id}` : `turn:${c.turn_id}`;
      const piece = callPiece.get(key);
      return piece === undefined ? c : { ...c, conversation_id: piece };
    }),
  };
}

/** Run key → `<conversation>#<piece>`, cutting between consecutive runs neither of which is an anchor. */
function pieces(
  runs: readonly { key: string; conversation: string; seq: number; anchor: boolean }[],
): Map<string, string> {
  const byConversation = new Map<string, (typeof runs)[number][]>();
  for (const r of runs) byConversation.set(r.conversation, [...(byConversation.get(r.conversation) ?? []), r]);
  const out = new Map<string, string>();
  for (const [conversation, list] of byConversation) {
    let piece = 0;
    let prev: (typeof runs)[number] | undefined;
    for (const r of [...list].sort((a, b) => a.seq - b.seq)) {
      if (prev && !prev.anchor && !r.anchor) piece++;
      out.set(r.key, `${conversation}#${piece}`);
      prev = r;
    }
  }
  return out;
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}
