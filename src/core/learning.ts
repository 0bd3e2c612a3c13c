/**
 * Apply and undo, as pure plans (docs/learning.md "Apply", "Undo"; reference "Review, apply, undo").
 * The service reads the row and the log, asks these functions what the row becomes, and writes it
 * in one guarded batch.
 */
import type { Displacement, Example, Refusal, RoutedTool } from '../schemas.ts';
import { mergeExamples } from './displacement.ts';
import { attributeRuns } from './attribution.ts';
import { createLogMasker } from './log-masker.ts';
import { namedTool } from './proposals.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from './records.ts';
import { argumentValues, scrubValues } from './scrub.ts';
import { groupRuns, timeOf } from './serving.ts';
import { rankTools, vectorScoreAt, type RoutingIndex } from './routing.ts';
import { type MemoryWording, withoutSaid } from './routing-memory.ts';

/**
 * What learning writes on a row: the fields an apply changes and an undo restores byte for byte.
 * `memory` is absent from a plan that leaves routing memory as it is (and from undo states stored
 * before routing memory existed: undoing those leaves memory alone).
 */
export interface LearnedState {
  examples: Example[];
  notes: string[];
  avoid: string[];
  call_example: string | null;
  memory?: MemoryWording[];
}

export function learnedState(row: LearnedState): LearnedState {
  return {
    examples: row.examples,
    notes: row.notes,
    avoid: row.avoid,
    call_example: row.call_example,
    ...(row.memory ? { memory: row.memory } : {}),
  };
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
 * (the row may have changed since the review), a "Not for" line refused when the tool it names is
 * no longer registered, the example call set, examples merged with displacement of synthetic ones.
 */
export function planApply(
  row: LearnedState,
  rev: RevisionContent,
  caps: ApplyCaps,
  registered: ReadonlySet<string>,
): ApplyPlan {
  const refused: Refusal[] = [];
  // A "Not for" line naming a tool deleted since the review would send the model nowhere.
  const avoidAdded = rev.avoid_added.filter((text) => {
    const named = namedTool(text, registered);
    if (registered.has(named)) return true;
    refused.push({
      tool: rev.tool,
      kind: 'avoid',
      text,
      reason: 'unknown_tool',
      detail: `"${named}" is no longer registered`,
    });
    return false;
  });
  const notes = appendCapped(row.notes, rev.notes_added, caps.max_notes, (text) =>
    refused.push(capRefusal(rev.tool, 'note', text, caps.max_notes)),
  );
  const avoid = appendCapped(row.avoid, avoidAdded, caps.max_avoid, (text) =>
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
  const added = rev.queries_added.filter((q) => !refusedTexts.has(q));
  // An example now says what a remembered wording says: the memory lets its copy go.
  const memory = row.memory ? withoutSaid(row.memory, added) : undefined;
  return {
    state: {
      examples: merged.examples,
      notes,
      avoid,
      call_example: rev.call_example ?? row.call_example,
      ...(memory && memory !== row.memory ? { memory: [...memory] } : {}),
    },
    queries_added: added,
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
  const { memory: _memory, ...state } = plan.state;
  return {
    ...plan,
    state: { ...state, examples: row.examples, ...(row.memory ? { memory: row.memory } : {}) },
    queries_added: [],
    queries_displaced: [],
  };
}

/** A request another tool served, with its vector, for the displacement re-check. */
export interface ServedRequest {
  text: string;
  /** The text with argument values scrubbed: what a revision may show. */
  shown: string;
  vector: Float32Array;
  served_by: string;
  /** `vectorScores(before, vector)` when the caller keeps them (read, never changed). */
  dense?: Float64Array;
}

/**
 * docs/learning.md: routing is checked again for requests other tools served; a request whose serving tool
 * was offered before the change and is pushed out after it is a displacement. With `changed`, the
 * one tool in which `after` differs from `before`, a request's kept vector scores (`dense`) serve
 * both rankings: only the changed tool's is computed again, instead of a scan of every tool.
 */
export function findDisplaced(
  before: RoutingIndex,
  after: RoutingIndex,
  requests: readonly ServedRequest[],
  k: number,
  changed?: string,
): Displacement[] {
  const position = changed === undefined ? undefined : after.positions.get(changed);
  const out: Displacement[] = [];
  for (const r of requests) {
    if (!offers(rankTools(before, { text: r.text, vector: r.vector, dense: r.dense }, k), r.served_by)) continue;
    let dense: Float64Array | undefined;
    if (r.dense !== undefined && position !== undefined) {
      dense = r.dense.slice();
      dense[position] = vectorScoreAt(after, r.vector, position);
    }
    if (!offers(rankTools(after, { text: r.text, vector: r.vector, dense }, k), r.served_by))
      out.push({ request: r.shown, tool: r.served_by });
  }
  return out;
}

const offers = (tools: RoutedTool[], name: string): boolean => tools.some((t) => t.name === name);

/**
 * The requests tools other than `tool` finally served (src/core/attribution.ts), newest first,
 * distinct texts, at most `limit`. Routing is checked on the text as asked; `shown` has the argument
 * values of the calls read scrubbed out: a displaced request is shown on the revision and must hold no value.
 */
export function requestsServedByOthers(
  log: { turns: readonly TurnRecord[]; calls: readonly CallRecord[]; outcomes: readonly OutcomeRecord[] },
  tool: string,
  limit: number,
  minConversations = 2,
): { text: string; shown: string; served_by: string }[] {
  const attributed = [...attributeRuns(groupRuns(log.turns, log.calls), log.outcomes).values()].sort(
    (a, b) => timeOf(b.run.at) - timeOf(a.run.at),
  );
  const values = argumentValues(log.calls);
  // `displaced` is shown on the revision: it holds no personal value (docs/security.md).
  const masker = createLogMasker(
    log,
    [...new Set(log.calls.map((c) => c.tool))].map((name) => ({ name, description: '', parameters: {} })),
    minConversations,
  );
  const seen = new Set<string>();
  const out: { text: string; shown: string; served_by: string }[] = [];
  for (const { run, served_by } of attributed) {
    if (served_by === null || served_by === tool || run.request === null) continue;
    const text = run.request;
    if (seen.has(text)) continue;
    seen.add(text);
    out.push({ text, shown: masker.mask(scrubValues(text, values), served_by, values), served_by });
    if (out.length >= limit) break;
  }
  return out;
}
