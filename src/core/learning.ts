/**
 * Apply and undo, as pure plans (docs/learning.md "Apply", "Undo"; reference "Review, apply, undo").
 * The service reads the row and the log, asks these functions what the row becomes, and writes it
 * in one guarded batch.
 */
import type { Displacement, Example, Refusal, RoutedTool } from '../schemas.ts';
import { mergeExamples } from './displacement.ts';
import type { CallRecord } from './records.ts';
import { rankTools, type RoutingIndex } from './routing.ts';

/** What learning writes on a row: the fields an apply changes and an undo restores byte for byte. */
export interface LearnedState {
  examples: Example[];
  notes: string[];
  avoid: string[];
  call_example: string | null;
}

export function learnedState(row: LearnedState): LearnedState {
  return { examples: row.examples, notes: row.notes, avoid: row.avoid, call_example: row.call_example };
}

export interface RevisionContent {
  revision_id: string;
  tool: string;
  notes_added: string[];
  avoid_added: string[];
  queries_added: string[];
  call_example: string | null;
}

export interface ApplyPlan {
  state: LearnedState;
  /** The examples that made it onto the row (refused ones are not in it). */
  queries_added: string[];
  queries_displaced: Example[];
  refused: Refusal[];
}

export interface ApplyCaps {
  max_notes: number;
  max_avoid: number;
  max_queries: number;
}

/**
 * The row's learned state after a revision: notes and "Not for" lines appended under their caps
 * (the row may have changed since the review), the example call set, examples merged with
 * displacement of synthetic ones.
 */
export function planApply(row: LearnedState, rev: RevisionContent, caps: ApplyCaps): ApplyPlan {
  const refused: Refusal[] = [];
  const notes = appendCapped(row.notes, rev.notes_added, caps.max_notes, (text) =>
    refused.push(capRefusal(rev.tool, 'note', text, caps.max_notes)),
  );
  const avoid = appendCapped(row.avoid, rev.avoid_added, caps.max_avoid, (text) =>
    refused.push(capRefusal(rev.tool, 'avoid', text, caps.max_avoid)),
  );
  const merged = mergeExamples(
    row.examples,
    rev.queries_added.map((text) => ({ text, revision_id: rev.revision_id })),
    caps.max_queries,
  );
  for (const r of merged.refused) {
    refused.push({
      tool: rev.tool,
      kind: 'request',
      text: r.text,
      reason: r.reason,
      detail:
        r.reason === 'no_room'
          ? `the tool keeps ${caps.max_queries} examples and none is synthetic`
          : 'a kept example says the same',
    });
  }
  const refusedTexts = new Set(merged.refused.map((r) => r.text));
  return {
    state: { examples: merged.examples, notes, avoid, call_example: rev.call_example ?? row.call_example },
    queries_added: rev.queries_added.filter((q) => !refusedTexts.has(q)),
    queries_displaced: merged.displaced,
    refused,
  };
}

function appendCapped(current: string[], added: string[], cap: number, onRefused: (text: string) => void): string[] {
  const out = [...current];
  for (const text of added) {
    if (out.includes(text)) continue;
    if (out.length >= cap) onRefused(text);
    else out.push(text);
  }
  return out;
}

function capRefusal(tool: string, kind: 'note' | 'avoid', text: string, cap: number): Refusal {
  return {
    tool,
    kind,
    text,
    reason: 'cap_reached',
    detail: `the tool already keeps ${cap} ${kind === 'note' ? 'notes' : '"Not for" lines'}`,
  };
}

/** The plan with its new examples withdrawn: notes, "Not for" lines and the example call stay. */
export function withdrawExamples(row: LearnedState, plan: ApplyPlan): ApplyPlan {
  return { ...plan, state: { ...plan.state, examples: row.examples }, queries_added: [], queries_displaced: [] };
}

/** A request another tool served, with its vector, for the displacement re-check. */
export interface ServedRequest {
  text: string;
  vector: Float32Array;
  served_by: string;
}

/**
 * docs/learning.md: routing is checked again for requests other tools served; a request whose serving tool
 * was offered before the change and is pushed out after it is a displacement.
 */
export function findDisplaced(
  before: RoutingIndex,
  after: RoutingIndex,
  requests: readonly ServedRequest[],
  k: number,
): Displacement[] {
  const out: Displacement[] = [];
  for (const r of requests) {
    const query = { text: r.text, vector: r.vector };
    if (!offers(rankTools(before, query, k), r.served_by)) continue;
    if (!offers(rankTools(after, query, k), r.served_by)) out.push({ request: r.text, tool: r.served_by });
  }
  return out;
}

const offers = (tools: RoutedTool[], name: string): boolean => tools.some((t) => t.name === name);

/** A successful call with the request it served (its own, else its turn's). */
export interface ServingCandidate {
  call: Pick<CallRecord, 'seq' | 'call_id' | 'tool' | 'turn_id'>;
  request: string | null;
}

/**
 * From recent successful calls (newest first), the requests served by tools other than `tool`:
 * the serving tool of a run is its last successful call (docs/learning.md), so only the newest successful
 * call of each turn counts. Distinct request texts, at most `limit`.
 */
export function requestsServedByOthers(
  candidates: readonly ServingCandidate[],
  tool: string,
  limit: number,
): { text: string; served_by: string }[] {
  const seenRuns = new Set<string>();
  const seenTexts = new Set<string>();
  const out: { text: string; served_by: string }[] = [];
  for (const { call, request } of candidates) {
    const run = call.turn_id !== null ? `turn:${call.turn_id}` : `call:${call.call_id}`;
    if (seenRuns.has(run)) continue;
    seenRuns.add(run);
    if (call.tool === tool || request === null || seenTexts.has(request)) continue;
    seenTexts.add(request);
    out.push({ text: request, served_by: call.tool });
    if (out.length >= limit) break;
  }
  return out;
}
