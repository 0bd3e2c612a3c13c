/**
 * The review's selection rules (src/core/review-selection.ts), without D1: which tools are read,
 * which are reviewed, what kept "Not for" lines rest on, and which mirrored lines are refused.
 */
import { describe, expect, it } from 'vitest';
import type { ToolEvidence } from '../../src/core/evidence.ts';
import type { CallRecord } from '../../src/core/records.ts';
import {
  chooseReads,
  chooseTools,
  keptLines,
  type ProposedLines,
  type ToolActivity,
  withoutMirrors,
} from '../../src/core/review-selection.ts';
import { DEFAULT_SETTINGS, type Evidence, type Settings } from '../../src/schemas.ts';
import { evidenceItem } from '../helpers/evidence.ts';

const settings: Settings = {
  ...DEFAULT_SETTINGS,
  min_calls: 3,
  min_misses: 3,
  min_confusions: 2,
  min_failures: 2,
  max_tools: 1,
};

function activity(name: string, over: Partial<ToolActivity> = {}): ToolActivity {
  return {
    name,
    reviewed_seq: 0,
    last_call_seq: 10,
    recent_calls: 5,
    recent_failures: 0,
    ranked_first: 0,
    last_ranked_call_seq: 0,
    ...over,
  };
}

function evidence(kind: Evidence['kind'], over: Partial<Evidence> = {}): Evidence {
  return evidenceItem(`ev_${Math.random()}`, kind, 'book a table', { tool: 'a', arguments: [], ...over });
}

const failed = (callId: string): Evidence => evidence('failed_call', { call_id: callId });
const calls = (...ids: string[]) => ids.map((call_id) => ({ call_id }) as CallRecord);

describe('chooseReads', () => {
  it('skips a tool with a revision waiting, one with no new calls, and one below every threshold (marked)', () => {
    const all = [
      activity('waiting'),
      activity('seen', { reviewed_seq: 10 }),
      activity('quiet', { recent_calls: 1 }),
      activity('never', { last_call_seq: 0 }),
      activity('busy'),
    ];
    const input = structuredClone(all);
    const out = chooseReads(all, new Map([['waiting', 'rev_1']]), settings);
    expect(out.kept.map((a) => a.name)).toEqual(['busy']);
    expect(out.skipped).toEqual([
      { tool: 'waiting', reason: 'revision_waiting: revision rev_1 is proposed' },
      { tool: 'seen', reason: 'no_new_calls: no calls since its last review' },
      { tool: 'quiet', reason: 'below_threshold: 1 calls (min_calls 3), 0 confused requests (min_confusions 2)' },
    ]);
    expect([...out.marks]).toEqual([['quiet', 10]]);
    expect(all).toEqual(input);
  });
});

describe('chooseTools', () => {
  it('reviews the tool with most failed calls that teach a note, counting only its own calls, within max_tools', () => {
    const read = [activity('a'), activity('b'), activity('c')];
    const ev = new Map<string, ToolEvidence>([
      ['a', { failed: [failed('a1'), failed('a2')], missed: [], confused: [] }],
      ['b', { failed: [failed('b1'), failed('b2'), failed('b3')], missed: [], confused: [] }],
      // c's failures are not among its own newest calls: nothing to fix.
      ['c', { failed: [failed('x1'), failed('x2')], missed: [], confused: [] }],
    ]);
    const own = new Map([
      ['a', calls('a1', 'a2')],
      ['b', calls('b1', 'b2', 'b3')],
      ['c', calls('c1')],
    ]);
    const before = structuredClone([...ev]);
    const out = chooseTools(read, own, ev, settings);
    expect(out.kept.map((c) => c.activity.name)).toEqual(['b']);
    expect(out.skipped).toEqual([
      {
        tool: 'c',
        reason: 'nothing_to_fix: 0 failed calls, 0 missed and 0 confused requests, each below its threshold',
      },
      { tool: 'a', reason: 'max_tools: 1 tools with more failed calls were reviewed first' },
    ]);
    expect([...out.marks]).toEqual([['c', 10]]);
    expect([...ev]).toEqual(before);
  });
});

describe('keptLines', () => {
  it('rests a kept "Not for" line on the confused requests of the revision that added it, both ways', () => {
    const applied = [
      {
        tool: 'a',
        avoid_added: ['Not for refunds; use b'],
        evidence: [evidence('confused_request', { text: 'Refund My Order', served_by: 'b' })],
      },
      // Its line is no longer kept: it rests on nothing.
      { tool: 'b', avoid_added: ['Not for x; use a'], evidence: [evidence('confused_request', { served_by: 'a' })] },
    ];
    const kept = keptLines(
      applied,
      new Map([
        ['a', ['Not for refunds; use b']],
        ['b', []],
      ]),
    );
    expect([...(kept.get('a')?.avoided ?? [])]).toEqual(['refund my order']);
    expect([...(kept.get('b')?.naming.get('a') ?? [])]).toEqual(['refund my order']);
    expect(kept.get('b')?.avoided.size).toBe(0);
  });
});

describe('withoutMirrors', () => {
  const proposed = (tool: string, other: string): ProposedLines => ({
    tool,
    avoid_added: [`Not for refunds; use ${other}`],
    notes_added: [],
    queries_added: [],
    call_example: null,
    evidence: [evidence('confused_request', { tool, text: 'refund my order', served_by: other })],
    refused: [],
  });

  it('refuses the second of two mirrored lines by name order, drops a revision left empty, and changes no input', () => {
    const revisions = [proposed('b', 'a'), proposed('a', 'b')];
    const input = structuredClone(revisions);
    const out = withoutMirrors(revisions, new Set(['a', 'b']));
    expect(out.revisions.map((r) => r.tool)).toEqual(['a']);
    expect(out.refused).toEqual([
      {
        tool: 'b',
        kind: 'avoid',
        text: 'Not for refunds; use a',
        reason: 'contradicts',
        detail: 'a is proposed a "Not for" line sending "refund my order" to b',
      },
    ]);
    expect(revisions).toEqual(input);
  });
});
