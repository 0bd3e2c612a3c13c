/**
 * What one review reads from the log (docs/learning.md): for each tool read, its newest `max_calls_per_tool`
 * calls and the turns where routing ranked it first; the turns of those calls with their previous
 * and next turn in the same conversation (`next_request`, `re_asked`); every call of every turn read
 * (a run's serving tool is its last successful call); the outcomes reported for those turns. All
 * reads are bounded index reads (src/adapters/log-review-reads.ts), five round trips at most.
 */
import type { CallRecord, OutcomeRecord, TurnRecord } from '../core/records.ts';
import { runKeys, sameRequestKey, timeOf } from '../core/serving.ts';
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
  const { near: nearCalls, anchors: looseAnchors } = await looseNeighbours(svc, agent, loose);
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
  const anchors = { turns: new Set(ownTurnIds), calls: looseAnchors };
  const split = splitConversations(allTurns, calls, anchors);
  const byTool = new Map<string, CallRecord[]>(tools.map((t) => [t, []]));
  for (const c of [...own].sort((a, b) => b.seq - a.seq)) byTool.get(c.tool)?.push(c);
  return { turns: split.turns, calls: split.calls, outcomes, own: byTool };
}

/** Rounds of neighbour reads for a run of loose calls (a lookup, another lookup, the change). */
const LOOSE_RUN_ROUNDS = 3;

/**
 * The neighbouring calls of each loose call. A loose run can hold several calls (the same request
 * in one conversation, src/core/serving.ts `runKeys`): a neighbour that belongs to the anchor's own
 * run is read through, so the run's real previous and next runs are read too.
 */
async function looseNeighbours(
  svc: Services,
  agent: string,
  loose: readonly CallRecord[],
): Promise<{ near: CallRecord[]; anchors: Set<number> }> {
  const anchors = new Set(loose.map((c) => c.seq));
  const runs = new Set(
    loose.flatMap((c) => (c.turn_id === null && c.request !== null ? [looseRunKey(c, c.request)] : [])),
  );
  const near: CallRecord[] = [];
  let frontier = loose.map((c) => c.seq);
  for (let round = 0; round < LOOSE_RUN_ROUNDS && frontier.length > 0; round++) {
    const found = await svc.reviewLog.neighbourCalls(agent, frontier);
    near.push(...found);
    frontier = [];
    for (const c of found) {
      if (anchors.has(c.seq) || c.turn_id !== null || c.request === null) continue;
      if (!runs.has(looseRunKey(c, c.request))) continue;
      anchors.add(c.seq);
      frontier.push(c.seq);
    }
  }
  return { near, anchors };
}

const looseRunKey = (c: CallRecord, request: string): string => `${c.conversation_id}\u0000${sameRequestKey(request)}`;

/**
 * Only neighbours that were read are known to be adjacent: two read runs of a conversation with
 * unread runs between them must not count as "the next request". A pair of consecutive read runs
 * is adjacent when one of them is an anchor (a run whose previous and next run were read);
 * elsewhere the conversation is cut, and each piece gets its own conversation id (`<id>#<n>`), so
 * the pure rules (src/core/attribution.ts) pair only runs that really follow each other. Turns and
 * runs logged as calls without a recorded turn share one timeline per conversation, ordered by
 * time (a turn's creation, a loose run's first call), so their pieces never collide.
 */
export function splitConversations(
  turns: readonly TurnRecord[],
  calls: readonly CallRecord[],
  anchors: { turns: ReadonlySet<string>; calls: ReadonlySet<number> },
): { turns: TurnRecord[]; calls: CallRecord[] } {
  const timeline: TimelineRun[] = turns
    .filter((t) => t.conversation_id !== null)
    .map((t) => ({
      key: `turn:${t.turn_id}`,
      conversation: t.conversation_id ?? '',
      at: timeOf(t.created_at),
      seq: t.seq,
      anchor: anchors.turns.has(t.turn_id),
    }));
  const recorded = new Set(turns.map((t) => `turn:${t.turn_id}`));
  const keys = runKeys(calls, turns);
  const loose = new Map<string, TimelineRun>();
  for (const [c, key] of keys) {
    if (c.conversation_id === null || recorded.has(key)) continue;
    const run = loose.get(key) ?? { key, conversation: c.conversation_id, at: timeOf(c.at), seq: c.seq, anchor: false };
    run.anchor ||= anchors.calls.has(c.seq);
    loose.set(key, run);
  }
  const piece = pieces([...timeline, ...loose.values()]);
  return {
    turns: turns.map((t) => {
      const p = piece.get(`turn:${t.turn_id}`);
      return p === undefined ? t : { ...t, conversation_id: p };
    }),
    calls: calls.map((c) => {
      // A call of a recorded turn belongs to the turn's conversation; only loose runs are cut here.
      const key = keys.get(c);
      const p = key === undefined || recorded.has(key) ? undefined : piece.get(key);
      return p === undefined || c.conversation_id === null ? c : { ...c, conversation_id: p };
    }),
  };
}

interface TimelineRun {
  key: string;
  conversation: string;
  at: number;
  seq: number;
  anchor: boolean;
}

/** Run key → `<conversation>#<piece>`, cutting between consecutive runs neither of which is an anchor. */
function pieces(runs: readonly TimelineRun[]): Map<string, string> {
  const byConversation = new Map<string, TimelineRun[]>();
  for (const r of runs) byConversation.set(r.conversation, [...(byConversation.get(r.conversation) ?? []), r]);
  const out = new Map<string, string>();
  for (const [conversation, list] of byConversation) {
    let piece = 0;
    let prev: TimelineRun | undefined;
    for (const r of [...list].sort((a, b) => a.at - b.at || a.seq - b.seq)) {
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
