import { describe, expect, it } from 'vitest';
import { attributeRuns } from '../../src/core/attribution.ts';
import { suggestPins } from '../../src/core/pin-suggestion.ts';
import type { CallRecord, TurnRecord } from '../../src/core/records.ts';
import { groupRuns } from '../../src/core/serving.ts';
import { callRecord, turnRecord } from '../helpers/calls.ts';

const turn = (seq: number, request: string, conversation: string): TurnRecord =>
  turnRecord(seq, `t${seq}`, request, [], { conversation_id: conversation, created_at: `2026-01-01T00:00:0${seq}Z` });

const call = (seq: number, turnId: string, tool: string, success = true): CallRecord =>
  callRecord(seq, tool, { success, error: success ? null : 'boom', turn_id: turnId, at: '2026-01-01T00:00:00Z' });

describe('attributeRuns', () => {
  it('credits the last successful call, or the tool that served the re-asked request next', () => {
    const turns = [turn(1, 'Refund my order', 'a'), turn(2, 'refund  my order', 'a'), turn(3, 'weather?', 'b')];
    const calls = [
      call(1, 't1', 'get_order'),
      call(2, 't2', 'refund_order'),
      call(3, 't3', 'get_weather'),
      call(4, 't3', 'send_email', false),
    ];
    const a = attributeRuns(groupRuns(turns, calls));
    const view = (key: string) => {
      const x = a.get(key);
      return x && { served_by: x.served_by, via: x.via, own: x.own };
    };
    expect(view('turn:t1')).toEqual({ served_by: 'refund_order', via: 'next_request', own: 'get_order' });
    expect(view('turn:t2')).toEqual({ served_by: 'refund_order', via: 'own', own: 'refund_order' });
    expect(view('turn:t3')).toEqual({ served_by: 'get_weather', via: 'own', own: 'get_weather' });
  });

  it('leaves a run alone when the next request shares no word with it (the conversation moved on)', () => {
    const a = attributeRuns(
      groupRuns(
        [turn(1, 'Refund my order', 'a'), turn(2, 'and the weather', 'a')],
        [call(1, 't1', 'get_order'), call(2, 't2', 'get_weather')],
      ),
    );
    expect(a.get('turn:t1')?.served_by).toBe('get_order');
    expect(a.get('turn:t1')?.via).toBe('own');
  });

  it('lets a reported outcome stand over both rules', () => {
    const a = attributeRuns(groupRuns([turn(1, 'Refund my order', 'a')], [call(1, 't1', 'get_order')]), [
      { turn_id: 't1', ok: false, served_by: 'refund_order', at: '2026-01-01T00:00:00Z' },
    ]);
    expect(a.get('turn:t1')?.served_by).toBe('refund_order');
    expect(a.get('turn:t1')?.via).toBe('verified');
  });
});

describe('suggestPins', () => {
  it('takes the most-served tools until the share is covered, and no more', () => {
    const served = [...Array(5).fill('a'), ...Array(3).fill('b'), 'c', 'd'];
    expect(suggestPins(served, 0.8)).toMatchObject({
      served_runs: 10,
      covered_runs: 8,
      tools: [
        { name: 'a', served_runs: 5 },
        { name: 'b', served_runs: 3 },
      ],
    });
    expect(suggestPins(served, 0.81).tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(suggestPins(served, 0.5).tools.map((t) => t.name)).toEqual(['a']);
    expect(suggestPins([], 0.8)).toEqual({ tools: [], served_runs: 0, covered_runs: 0, covered_share: 0 });
  });
});
