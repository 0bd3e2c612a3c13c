import { describe, expect, it } from 'vitest';
import { callRecord, turnRecord } from '../helpers/calls.ts';
import { qualityDay } from '../helpers/quality.ts';
import { qualityReport } from '../../src/core/quality-math.ts';
import type { CallRecord, TurnRecord } from '../../src/core/records.ts';

let seq = 0;
function turn(
  id: string,
  at: string,
  request: string,
  offered: string[],
  conversation: string | null = null,
): TurnRecord {
  seq++;
  return turnRecord(seq, id, request, offered, { conversation_id: conversation, created_at: at });
}
function call(id: string, tool: string, at: string, extra: Partial<CallRecord> = {}): CallRecord {
  seq++;
  return callRecord(seq, tool, { call_id: id, at, ...extra });
}

/**
 * Four days ending 2026-03-04:
 * - 03-01: t1 served by lookup at rank 1 (hit); t2 served by refund, not offered (miss); a failed call.
 * - 03-02: no traffic.
 * - 03-03: t3 "cancel my order" went to lookup, the re-ask t4 "cancel the order please" to cancel at
 *   rank 2 → t3 is corrected (served by cancel, not offered: a miss and a confusion lookup→cancel),
 *   t4 a hit at rank 2; a loose call (no turn) served by refund: served, neither hit nor miss, so
 *   the day's hit rate is 1 of 2 ranked requests.
 * - 03-04: t5 routed, nothing called (routed, not served).
 * A revision on cancel applied 03-03T12:00 and undone 03-04T00:00.
 */
const turns = [
  turn('t1', '2026-03-01T10:00:00.000Z', 'find my claim', ['lookup', 'cancel']),
  turn('t2', '2026-03-01T11:00:00.000Z', 'refund it', ['lookup', 'cancel']),
  turn('t3', '2026-03-03T10:00:00.000Z', 'cancel my order', ['lookup'], 'k'),
  turn('t4', '2026-03-03T10:01:00.000Z', 'cancel the order please', ['lookup', 'cancel'], 'k'),
  turn('t5', '2026-03-04T09:00:00.000Z', 'hello', ['lookup']),
];
const calls = [
  call('c1', 'lookup', '2026-03-01T10:00:01.000Z', { turn_id: 't1' }),
  call('c2', 'refund', '2026-03-01T11:00:01.000Z', { turn_id: 't2' }),
  call('c3', 'refund', '2026-03-01T11:00:02.000Z', { success: false, error: 'x' }),
  call('c4', 'lookup', '2026-03-03T10:00:01.000Z', { turn_id: 't3' }),
  call('c5', 'cancel', '2026-03-03T10:01:01.000Z', { turn_id: 't4' }),
  call('c6', 'refund', '2026-03-03T15:00:00.000Z', { request: 'refund that order' }),
];
const revisions = [
  { revision_id: 'r1', tool: 'cancel', applied_at: '2026-03-03T10:00:30.000Z', undone_at: '2026-03-04T00:00:00.000Z' },
];

describe('qualityReport', () => {
  it('counts every day exactly: hits, misses, a corrected request, a loose call, a day with no traffic', () => {
    const r = qualityReport({ turns, calls, outcomes: [], revisions, days: 4, now: '2026-03-04T12:00:00.000Z' });
    expect(r.days).toEqual([
      qualityDay('2026-03-01', {
        routed_turns: 2,
        served_turns: 2,
        hits: 1,
        hit_rate: 0.5,
        mrr: 0.5,
        misses: 1,
        failed_calls: 1,
      }),
      qualityDay('2026-03-02'),
      qualityDay('2026-03-03', {
        routed_turns: 2,
        served_turns: 3,
        hits: 1,
        hit_rate: 0.5,
        mrr: 0.25,
        misses: 1,
        confusions: 1,
      }),
      qualityDay('2026-03-04', { routed_turns: 1 }),
    ]);
    expect(r.top_missed).toEqual([
      { tool: 'cancel', misses: 1 },
      { tool: 'refund', misses: 1 },
    ]);
    expect(r.top_confused).toEqual([{ tool: 'lookup', served_by: 'cancel', count: 1 }]);
  });

  it('gives each applied revision its before and after by whole hours, the apply hour counted after', () => {
    // t3 (10:00, served by cancel after correction, not offered) and t4 (10:01, a hit) are in the
    // 10:00 hour: after a revision applied at 10:00:30, before one applied at 11:00.
    const later = { revision_id: 'r2', tool: 'cancel', applied_at: '2026-03-03T11:00:00.000Z', undone_at: null };
    const r = qualityReport({
      turns,
      calls,
      outcomes: [],
      revisions: [...revisions, later],
      days: 4,
      now: '2026-03-04T12:00:00.000Z',
    });
    expect(r.revisions).toEqual([
      { ...revisions[0], before: { served_turns: 0, hits: 0 }, after: { served_turns: 2, hits: 1 } },
      { ...later, before: { served_turns: 2, hits: 1 }, after: { served_turns: 0, hits: 0 } },
    ]);
  });

  it("ends a revision's after at the hour of its undo", () => {
    const undone = {
      revision_id: 'r3',
      tool: 'cancel',
      applied_at: '2026-03-02T08:00:00.000Z',
      undone_at: '2026-03-03T09:59:00.000Z',
    };
    const r = qualityReport({
      turns,
      calls,
      outcomes: [],
      revisions: [undone],
      days: 4,
      now: '2026-03-04T12:00:00.000Z',
    });
    expect(r.revisions[0]).toMatchObject({ before: { served_turns: 0, hits: 0 }, after: { served_turns: 0, hits: 0 } });
    const open = qualityReport({
      turns,
      calls,
      outcomes: [],
      revisions: [{ ...undone, undone_at: null }],
      days: 4,
      now: '2026-03-04T12:00:00.000Z',
    });
    expect(open.revisions[0]).toMatchObject({ after: { served_turns: 2, hits: 1 } });
  });

  it('narrows to one tool: its served requests, its confusions either way, its failed calls', () => {
    const r = qualityReport({
      turns,
      calls,
      outcomes: [],
      revisions,
      days: 4,
      now: '2026-03-04T12:00:00.000Z',
      tool: 'refund',
    });
    expect(r.days.map((d) => [d.date, d.routed_turns, d.served_turns, d.hits, d.misses, d.failed_calls])).toEqual([
      ['2026-03-01', 0, 1, 0, 1, 1],
      ['2026-03-02', 0, 0, 0, 0, 0],
      ['2026-03-03', 0, 1, 0, 0, 0],
      ['2026-03-04', 0, 0, 0, 0, 0],
    ]);
    expect(r.revisions).toEqual([]);
  });

  it('lets a reported outcome name the serving tool', () => {
    const r = qualityReport({
      turns: [turn('t9', '2026-03-04T08:00:00.000Z', 'refund please', ['lookup', 'refund'])],
      calls: [call('c9', 'lookup', '2026-03-04T08:00:01.000Z', { turn_id: 't9' })],
      outcomes: [{ turn_id: 't9', ok: false, served_by: 'refund', at: '2026-03-04T08:01:00.000Z' }],
      revisions: [],
      days: 1,
      now: '2026-03-04T12:00:00.000Z',
    });
    expect(r.days[0]).toMatchObject({ served_turns: 1, hits: 1, hit_rate: 1, mrr: 0.5, confusions: 1 });
    expect(r.top_confused).toEqual([{ tool: 'lookup', served_by: 'refund', count: 1 }]);
  });
});
