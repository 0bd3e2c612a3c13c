import { describe, expect, it } from 'vitest';
import { callRecord } from '../helpers/calls.ts';
import {
  findDisplaced,
  planApply,
  requestsServedByOthers,
  withdrawExamples,
  type LearnedState,
} from '../../src/core/learning.ts';
import { buildRoutingIndex } from '../../src/core/routing.ts';

const row: LearnedState = {
  examples: [
    { text: 'check my claim', source: 'synthetic', revision_id: null },
    { text: 'claim status', source: 'synthetic', revision_id: null },
  ],
  notes: ['existing note'],
  avoid: [],
  call_example: null,
};
const rev = {
  revision_id: 'r1',
  tool: 'lookup_claim',
  notes_added: ['new note'],
  avoid_added: ['Not for refunds; use refund.'],
  queries_added: ['where is my FNOL'],
  call_example: 'Example call: {"id": "<text>"}',
};

const TOOLS = new Set(['lookup_claim', 'refund']);

describe('planApply', () => {
  it('appends notes and "Not for" lines, sets the example call, adds the example as learned', () => {
    const plan = planApply(row, rev, { max_notes: 4, max_avoid: 2, max_queries: 12 }, TOOLS);
    expect(plan.state).toEqual({
      examples: [...row.examples, { text: 'where is my FNOL', source: 'learned', revision_id: 'r1' }],
      notes: ['existing note', 'new note'],
      avoid: ['Not for refunds; use refund.'],
      call_example: 'Example call: {"id": "<text>"}',
    });
    expect(plan.queries_added).toEqual(['where is my FNOL']);
    expect(plan.refused).toEqual([]);
  });

  it('refuses notes past the cap and examples with no room, and says why', () => {
    const full: LearnedState = { ...row, examples: [{ text: 'by hand', source: 'unknown', revision_id: null }] };
    const plan = planApply(full, rev, { max_notes: 1, max_avoid: 2, max_queries: 1 }, TOOLS);
    expect(plan.state.notes).toEqual(['existing note']);
    expect(plan.refused.map((r) => [r.kind, r.reason])).toEqual([
      ['note', 'cap_reached'],
      ['request', 'no_room'],
    ]);
    expect(plan.queries_added).toEqual([]);
  });

  it('withdrawing keeps the notes and puts the examples back as they were', () => {
    const plan = withdrawExamples(row, planApply(row, rev, { max_notes: 4, max_avoid: 2, max_queries: 1 }, TOOLS));
    expect(plan.state.examples).toBe(row.examples);
    expect(plan.state.notes).toEqual(['existing note', 'new note']);
    expect(plan.queries_added).toEqual([]);
    expect(plan.queries_displaced).toEqual([]);
  });

  it('lets memory’s copy of a wording go when an example comes to say it, and withdrawing brings it back', () => {
    const remembering: LearnedState = {
      ...row,
      memory: [
        { text: 'where is my FNOL please', at: 1 },
        { text: 'has my claim been paid yet', at: 2 },
      ],
    };
    const caps = { max_notes: 4, max_avoid: 2, max_queries: 12 };
    const plan = planApply(remembering, rev, caps, TOOLS);
    expect(plan.state.memory).toEqual([{ text: 'has my claim been paid yet', at: 2 }]);
    expect(withdrawExamples(remembering, plan).state.memory).toBe(remembering.memory);
    // An example refused for want of room takes nothing from memory.
    const full = { ...remembering, examples: [{ text: 'by hand', source: 'unknown' as const, revision_id: null }] };
    expect(planApply(full, rev, { ...caps, max_queries: 1 }, TOOLS).state.memory).toBeUndefined();
  });

  it('refuses a "Not for" line whose named tool is no longer registered', () => {
    const plan = planApply(row, rev, { max_notes: 4, max_avoid: 2, max_queries: 12 }, new Set(['lookup_claim']));
    expect(plan.state.avoid).toEqual([]);
    expect(plan.refused).toEqual([
      {
        tool: 'lookup_claim',
        kind: 'avoid',
        text: 'Not for refunds; use refund.',
        reason: 'unknown_tool',
        detail: '"refund" is no longer registered',
      },
    ]);
  });
});

describe('findDisplaced', () => {
  const v = (...xs: number[]) => {
    const a = Float32Array.from(xs);
    const n = Math.hypot(...xs);
    return a.map((x) => x / n);
  };
  const before = buildRoutingIndex([
    { name: 'a', text: 'alpha', vector: v(1, 0, 0) },
    { name: 'b', text: 'beta', vector: v(0, 1, 0) },
    { name: 'c', text: 'gamma', vector: v(0, 0, 1) },
  ]);
  it('lists a request whose serving tool the change pushes out of the top k', () => {
    const after = buildRoutingIndex([
      { name: 'a', text: 'alpha', vector: v(1, 0, 0) },
      { name: 'b', text: 'beta', vector: v(0, 1, 0) },
      { name: 'c', text: 'gamma', vector: v(0.2, 1, 0) },
    ]);
    const requests = [
      { text: 'query', shown: 'query', vector: v(0.1, 1, 0), served_by: 'b' },
      { text: 'other', shown: 'other', vector: v(1, 0, 0), served_by: 'a' },
    ];
    expect(findDisplaced(before, before, requests, 1)).toEqual([]);
    expect(findDisplaced(before, after, requests, 1)).toEqual([{ request: 'query', tool: 'b' }]);
  });
});

describe('requestsServedByOthers', () => {
  const call = (seq: number, tool: string, turn_id: string | null, request: string | null, extra = {}) =>
    callRecord(seq, tool, { request, turn_id, at: `2026-01-01T00:00:0${seq}Z`, ...extra });
  const turn = (seq: number, turn_id: string, request: string, conversation_id: string | null = null) => ({
    seq,
    turn_id,
    request,
    conversation_id,
    routed: true,
    offered: [],
    created_at: `2026-01-01T00:00:0${seq}Z`,
  });

  it('reads the finally serving tool of each run, newest first, and skips the tool itself', () => {
    const log = {
      // `lookup` prepares `x` in most runs where it succeeds (a lookup on the way, not a second change).
      turns: [turn(1, 't2', 'second'), turn(2, 't3', 'third'), turn(3, 't4', 'fourth')],
      calls: [
        call(7, 'lookup', 't2', null),
        call(8, 'lookup', 't3', null),
        call(9, 'x', 't3', null),
        call(3, 'lookup', 't4', null),
        call(4, 'x', 't4', null),
      ],
      outcomes: [],
    };
    const solo = { ...log, calls: [...log.calls, call(6, 'y', null, 'solo'), call(5, 'z', null, null)] };
    expect(requestsServedByOthers(solo, 'lookup', 10)).toEqual([
      { text: 'solo', shown: 'solo', served_by: 'y' },
      { text: 'fourth', shown: 'fourth', served_by: 'x' },
      { text: 'third', shown: 'third', served_by: 'x' },
    ]);
  });

  it('gives a corrected request to the tool that served the re-ask, with values scrubbed', () => {
    const log = {
      turns: [
        turn(1, 't1', 'raise the reserve on CW-444444', 'r1'),
        turn(2, 't2', 'no, set the reserve to 20000', 'r1'),
      ],
      calls: [
        call(1, 'refer_llu', 't1', null, { arguments: { claim_ref: 'CW-444444' } }),
        call(2, 'set_rvf', 't2', null, { arguments: { claim_ref: 'CW-444444', amount: 20000 } }),
      ],
      outcomes: [],
    };
    expect(requestsServedByOthers(log, 'refer_llu', 10)).toEqual([
      { text: 'no, set the reserve to 20000', shown: 'no, set the reserve to <value>', served_by: 'set_rvf' },
      { text: 'raise the reserve on CW-444444', shown: 'raise the reserve on <value>', served_by: 'set_rvf' },
    ]);
  });
});
