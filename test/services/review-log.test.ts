/**
 * The review reads only some turns of a long conversation (a tool's newest calls and their
 * neighbours). splitConversations keeps the evidence rules from pairing two read turns that have
 * unread turns between them.
 */
import { describe, expect, it } from 'vitest';
import { callRecord } from '../helpers/calls.ts';
import { findEvidence } from '../../src/core/evidence.ts';
import type { CallRecord, TurnRecord } from '../../src/core/records.ts';
import { splitConversations } from '../../src/services/review-reads.ts';

const turn = (seq: number, conversation_id: string | null = 'k'): TurnRecord => ({
  seq,
  turn_id: `t${seq}`,
  request: `request number ${seq} about the claim`,
  conversation_id,
  routed: false,
  offered: [],
  created_at: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`,
});
const call = callRecord;

describe('splitConversations', () => {
  it('cuts a conversation between two read turns neither of which had its neighbours read', () => {
    // t1 and t6 were read with their neighbours (t2, t5); turns 3 and 4 were not read.
    const turns = [turn(1), turn(2), turn(5), turn(6)];
    const calls = [call(11, 'lookup_claim', { turn_id: 't2' }), call(12, 'refer_llu', { turn_id: 't5' })];
    const split = splitConversations(turns, calls, { turns: new Set(['t1', 't6']), calls: new Set() });
    expect(split.turns.map((t) => [t.turn_id, t.conversation_id])).toEqual([
      ['t1', 'k#0'],
      ['t2', 'k#0'],
      ['t5', 'k#1'],
      ['t6', 'k#1'],
    ]);
    const registered = new Set(['lookup_claim', 'refer_llu']);
    const ids = (t: TurnRecord[], c: CallRecord[]) =>
      findEvidence({ turns: t, calls: c, outcomes: [], registered }).map((e) => e.evidence_id);
    // Unsplit, t2 → t5 would read as re-asked (and t2 as missed); they are not neighbours. t1 → t2 are.
    expect(ids(turns, calls)).toEqual([
      'missed:next_request:turn:t1',
      'confused:re_asked:turn:t2',
      'missed:next_request:turn:t2',
    ]);
    expect(ids(split.turns, split.calls)).toEqual(['missed:next_request:turn:t1']);
  });

  it('keeps read neighbours together, and cuts runs logged as calls without a turn the same way', () => {
    const turns = [turn(1), turn(2), turn(3), turn(9, null)];
    const calls = [
      call(20, 'lookup_claim', { request: 'first', conversation_id: 'm' }),
      call(21, 'refer_llu', { request: 'second', conversation_id: 'm' }),
      call(30, 'lookup_claim', { request: 'later', conversation_id: 'm' }),
      call(31, 'refer_llu', { request: 'last', conversation_id: 'm' }),
      call(40, 'refer_llu', { turn_id: 't2', conversation_id: 'ignored' }),
    ];
    const split = splitConversations(turns, calls, { turns: new Set(['t2']), calls: new Set([20, 31]) });
    expect(split.turns.map((t) => t.conversation_id)).toEqual(['k#0', 'k#0', 'k#0', null]);
    expect(split.calls.map((c) => [c.call_id, c.conversation_id])).toEqual([
      ['c20', 'm#0'],
      ['c21', 'm#0'],
      ['c30', 'm#1'],
      ['c31', 'm#1'],
      ['c40', 'ignored'],
    ]);
  });

  it('puts turns and loose runs of one conversation on one timeline, so their pieces never collide', () => {
    // t1 (read with its neighbours) at 00:00:01, a loose call at 00:00:30, t40 at 00:00:40: the loose
    // run follows t1, and nothing says t40 follows the loose run (neither was read with neighbours).
    const turns = [turn(1), { ...turn(40), created_at: '2026-01-01T00:00:40Z' }];
    const calls = [
      call(5, 'lookup_claim', { turn_id: 't1' }),
      call(6, 'refer_llu', { request: 'refer that claim instead', conversation_id: 'k', at: '2026-01-01T00:00:30Z' }),
      call(7, 'start_recovery', { turn_id: 't40' }),
    ];
    const split = splitConversations(turns, calls, { turns: new Set(['t1']), calls: new Set() });
    expect(split.turns.map((t) => t.conversation_id)).toEqual(['k#0', 'k#1']);
    expect(split.calls.find((c) => c.call_id === 'c6')?.conversation_id).toBe('k#0');
    const ids = findEvidence({
      turns: split.turns,
      calls: split.calls,
      outcomes: [],
      registered: new Set(['lookup_claim', 'refer_llu', 'start_recovery']),
    }).map((e) => e.evidence_id);
    expect(ids).toEqual(['confused:re_asked:turn:t1', 'missed:next_request:turn:t1']);
  });
});
