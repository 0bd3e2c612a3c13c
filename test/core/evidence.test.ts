import { describe, expect, it } from 'vitest';
import { callRecord, turnRecord } from '../helpers/calls.ts';
import {
  evidenceByTool,
  findEvidence,
  findFailedCalls,
  successfulCallEvidence,
  teachesNote,
} from '../../src/core/evidence.ts';
import { failureKind, readFailures } from '../../src/core/failures.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from '../../src/core/records.ts';
import { groupRuns, onTheWay, servingTool } from '../../src/core/serving.ts';

const REGISTERED = new Set(['lookup_claim', 'start_recovery', 'refer_llu', 'upload_file']);
let seq = 0;

function turn(turn_id: string, request: string | null, offered: string[], extra: Partial<TurnRecord> = {}): TurnRecord {
  seq++;
  return turnRecord(seq, turn_id, request, offered, extra);
}

function call(call_id: string, tool: string, extra: Partial<CallRecord> = {}): CallRecord {
  seq++;
  return callRecord(seq, tool, { call_id, ...extra });
}

function find(turns: TurnRecord[], calls: CallRecord[], outcomes: OutcomeRecord[] = []) {
  return findEvidence({ turns, calls, outcomes, registered: REGISTERED });
}

describe('serving tool (docs/learning.md)', () => {
  it('is the tool of the last successful call; earlier calls are on the way', () => {
    const calls = [
      call('c1', 'lookup_claim', { turn_id: 't1' }),
      call('c2', 'start_recovery', { turn_id: 't1' }),
      call('c3', 'refer_llu', { turn_id: 't1', success: false, error: 'boom' }),
    ];
    expect(servingTool(calls)).toBe('start_recovery');
    expect(onTheWay(calls).map((c) => c.call_id)).toEqual(['c1']);
    expect(servingTool([call('c4', 'refer_llu', { success: false })])).toBeNull();
  });

  it('groups calls by turn; a call without a turn forms its own run only when it carries a request', () => {
    const runs = groupRuns(
      [turn('t1', 'find my claim', [])],
      [
        call('c1', 'lookup_claim', { turn_id: 't1' }),
        call('c2', 'lookup_claim', { request: 'find claim again' }),
        call('c3', 'lookup_claim'),
        call('c4', 'lookup_claim', { turn_id: 't9', request: 'unrecorded turn' }),
      ],
    );
    expect(runs.map((r) => [r.key, r.request, r.calls.map((c) => c.call_id)])).toEqual([
      ['turn:t1', 'find my claim', ['c1']],
      ['call:c2', 'find claim again', ['c2']],
      ['turn:t9', 'unrecorded turn', ['c4']],
    ]);
  });

  it('gives a loose call to the routed turn of its conversation that asked the same request before it', () => {
    const runs = groupRuns(
      [turn('t1', 'Refund order 12', [], { conversation_id: 'k', created_at: '2026-01-01T00:00:00Z' })],
      [
        call('c1', 'refund_order', { conversation_id: 'k', request: 'refund order 12', at: '2026-01-01T00:00:05Z' }),
        call('c2', 'refund_order', { conversation_id: 'k', request: 'something else', at: '2026-01-01T00:00:06Z' }),
      ],
    );
    expect(runs.map((r) => [r.key, r.calls.map((c) => c.call_id)])).toEqual([
      ['turn:t1', ['c1']],
      ['call:c2', ['c2']],
    ]);
  });

  it('makes one run of consecutive loose calls of one conversation asking the same request', () => {
    const runs = groupRuns(
      [],
      [
        call('c1', 'lookup_claim', { conversation_id: 'k', request: 'Start recovery on claim CW-1' }),
        call('c2', 'start_recovery', { conversation_id: 'k', request: 'start recovery on  claim CW-1' }),
        call('c3', 'lookup_claim', { conversation_id: 'k', request: 'another request' }),
        call('c4', 'lookup_claim', { conversation_id: 'j', request: 'another request' }),
      ],
    );
    expect(runs.map((r) => [r.key, r.calls.map((c) => c.call_id), r.serving?.tool])).toEqual([
      ['call:c1', ['c1', 'c2'], 'start_recovery'],
      ['call:c3', ['c3'], 'lookup_claim'],
      ['call:c4', ['c4'], 'lookup_claim'],
    ]);
  });
});

describe('ranked_low', () => {
  it('a request the tool served at a rank below the first only just reached it: a missed request', () => {
    const found = find(
      [turn('t1', 'open a referral', ['lookup_claim', 'refer_llu']), turn('t2', 'look it up', ['lookup_claim'])],
      [call('c1', 'refer_llu', { turn_id: 't1' }), call('c2', 'lookup_claim', { turn_id: 't2' })],
    );
    expect(found.map((e) => [e.evidence_id, e.tool, e.how])).toEqual([
      ['missed:ranked_low:turn:t1', 'refer_llu', 'ranked_low'],
    ]);
  });

  // The agent passed over start_recovery (ranked first) for refer_llu, and the user's next request
  // went to start_recovery: "open the case now" reads as a new step, but the pick is in doubt.
  const passedOver = (second: CallRecord[]) =>
    find(
      [
        turn('t1', 'claw back the overpayment', ['start_recovery', 'refer_llu'], { conversation_id: 'k1' }),
        turn('t2', 'open the case now please', ['start_recovery'], { conversation_id: 'k1' }),
      ],
      [call('c1', 'refer_llu', { turn_id: 't1', conversation_id: 'k1' }), ...second],
    ).filter((e) => e.how === 'ranked_low');

  it('is no missed request when the next request went to a tool routing ranked above it', () => {
    expect(passedOver([call('c2', 'start_recovery', { turn_id: 't2', conversation_id: 'k1' })])).toEqual([]);
  });

  it('nor when the next run is doubtful and the passed-over tool did something in it', () => {
    // upload_file failed and start_recovery succeeded after it: the log cannot say which served.
    const second = [
      call('c2', 'upload_file', { turn_id: 't2', conversation_id: 'k1', success: false }),
      call('c3', 'start_recovery', { turn_id: 't2', conversation_id: 'k1' }),
    ];
    expect(passedOver(second)).toEqual([]);
  });

  it('stays a missed request when the next request went to another tool', () => {
    const found = passedOver([call('c2', 'lookup_claim', { turn_id: 't2', conversation_id: 'k1' })]);
    expect(found.map((e) => [e.evidence_id, e.tool])).toEqual([['missed:ranked_low:turn:t1', 'refer_llu']]);
  });
});

describe('failed calls', () => {
  it('cites each failed call of a registered tool with its error scrubbed and argument names only', () => {
    const calls = [
      call('c1', 'lookup_claim', {
        success: false,
        error: 'claim_ref "123456" not found; references start with CW-',
        arguments: { claim_ref: '123456' },
      }),
      call('c2', 'not_registered', { success: false, error: 'nope' }),
      call('c3', 'lookup_claim', { success: false }),
    ];
    const found = find([], calls);
    expect(found.map((e) => [e.evidence_id, e.kind, e.tool, e.text, e.arguments])).toEqual([
      [
        'failed:c1',
        'failed_call',
        'lookup_claim',
        'claim_ref "<value>" not found; references start with CW-',
        ['claim_ref'],
      ],
      ['failed:c3', 'failed_call', 'lookup_claim', 'failed without an error message', []],
    ]);
  });

  it('lists successful calls as evidence for an example call, without values', () => {
    const [e] = successfulCallEvidence([
      call('c1', 'upload_file', { arguments: { claim_ref: 'CW-123456' }, request: 'attach the photo to CW-123456' }),
    ]);
    expect(e).toMatchObject({
      evidence_id: 'succeeded:c1',
      kind: 'successful_call',
      text: 'attach the photo to <value>',
      arguments: ['claim_ref'],
    });
  });
});

describe('missed requests', () => {
  it('not_offered: the serving tool was not offered on a routed turn', () => {
    const found = find(
      [turn('t1', 'refer this to LLU', ['lookup_claim', 'start_recovery'])],
      [call('c1', 'refer_llu', { turn_id: 't1', arguments: { claim_ref: 'CW-1' } })],
    );
    expect(found.filter((e) => e.kind === 'missed_request')).toEqual([
      {
        evidence_id: 'missed:not_offered:turn:t1',
        kind: 'missed_request',
        tool: 'refer_llu',
        text: 'refer this to LLU',
        arguments: ['claim_ref'],
        how: 'not_offered',
        served_by: null,
        turn_id: 't1',
        call_id: 'c1',
        at: expect.any(String),
      },
    ]);
  });

  it('not_offered needs routing to have chosen and the tool to be missing', () => {
    const unrouted = find(
      [turn('t1', 'refer this', [], { routed: false })],
      [call('c1', 'refer_llu', { turn_id: 't1' })],
    );
    const offered = find([turn('t2', 'refer this', ['refer_llu'])], [call('c2', 'refer_llu', { turn_id: 't2' })]);
    expect(unrouted).toEqual([]);
    expect(offered).toEqual([]);
  });

  it('counts a run for its serving tool only: a lookup on the way is not missed', () => {
    const found = find(
      [turn('t1', 'start recovery on my claim', ['start_recovery'])],
      [call('c1', 'lookup_claim', { turn_id: 't1' }), call('c2', 'start_recovery', { turn_id: 't1' })],
    );
    expect(found).toEqual([]);
  });

  it('next_request: the next turn of the conversation was served by X; the first wording is the missed one', () => {
    const found = find(
      [
        turn('t1', 'send it to the large loss unit', ['lookup_claim', 'refer_llu'], { conversation_id: 'k1' }),
        turn('t2', 'refer it to the loss unit please', ['refer_llu'], { conversation_id: 'k1' }),
      ],
      [call('c1', 'refer_llu', { turn_id: 't2' })],
    );
    expect(found.map((e) => [e.evidence_id, e.tool, e.text, e.how, e.turn_id, e.call_id])).toEqual([
      ['missed:next_request:turn:t1', 'refer_llu', 'send it to the large loss unit', 'next_request', 't1', 'c1'],
    ]);
  });

  it('next_request needs the same conversation, and a first turn not served by X', () => {
    const other = find(
      [
        turn('t1', 'send it to the large loss unit', ['refer_llu'], { conversation_id: 'k1' }),
        turn('t2', 'refer to LLU', ['refer_llu'], { conversation_id: 'k2' }),
      ],
      [call('c1', 'refer_llu', { turn_id: 't2' })],
    );
    const servedTwice = find(
      [
        turn('t3', 'refer it', ['refer_llu'], { conversation_id: 'k3' }),
        turn('t4', 'refer another', ['refer_llu'], { conversation_id: 'k3' }),
      ],
      [call('c2', 'refer_llu', { turn_id: 't3' }), call('c3', 'refer_llu', { turn_id: 't4' })],
    );
    expect(other).toEqual([]);
    expect(servedTwice).toEqual([]);
  });

  it('counts requests only when the call or its turn carried one', () => {
    const found = find(
      [
        turn('t1', null, ['lookup_claim'], { conversation_id: 'k1' }),
        turn('t2', null, ['lookup_claim'], { conversation_id: 'k1' }),
      ],
      [call('c1', 'refer_llu', { turn_id: 't2' })],
    );
    expect(found).toEqual([]);
  });

  it('scrubs argument values of the runs involved from the request', () => {
    const found = find(
      [turn('t1', 'refer CW-123456 and CW-555111 to LLU', ['lookup_claim'])],
      [call('c1', 'refer_llu', { turn_id: 't1', arguments: { claim_ref: 'CW-123456' } })],
    );
    expect(found[0]?.text).toBe('refer <value> and <value> to LLU');
  });
});

describe('confused requests', () => {
  it('re_asked: Y served the turn and the next turn of the conversation was served by X', () => {
    const found = find(
      [
        turn('t1', 'this is a large loss', ['start_recovery', 'lookup_claim'], { conversation_id: 'k1' }),
        turn('t2', 'no, refer it as a large loss', ['refer_llu'], { conversation_id: 'k1' }),
      ],
      [call('c1', 'start_recovery', { turn_id: 't1' }), call('c2', 'refer_llu', { turn_id: 't2' })],
    );
    const confused = found.filter((e) => e.kind === 'confused_request');
    expect(confused.map((e) => [e.evidence_id, e.tool, e.served_by, e.how, e.text])).toEqual([
      ['confused:re_asked:turn:t1', 'start_recovery', 'refer_llu', 're_asked', 'this is a large loss'],
    ]);
    expect(found.filter((e) => e.kind === 'missed_request').map((e) => e.evidence_id)).toEqual([
      'missed:next_request:turn:t1',
    ]);
  });

  it('sends nothing to a tool the log shows around whatever was asked: a notification sent by habit', () => {
    const registered = new Set([...REGISTERED, 'send_email']);
    // send_email follows every change, whatever was asked, in two conversations: a habit.
    const habit = ['h1', 'h2'].flatMap((k) => [
      turn(`${k}t`, 'refer this claim to the specialists', ['refer_llu'], { conversation_id: k }),
    ]);
    const habitCalls = ['h1', 'h2'].flatMap((k) => [
      call(`${k}a`, 'refer_llu', { turn_id: `${k}t` }),
      call(`${k}b`, 'send_email', { turn_id: `${k}t` }),
    ]);
    const turns = [
      ...habit,
      turn('t1', 'email the claim summary to the adjuster', ['start_recovery'], { conversation_id: 'k1' }),
      turn('t2', 'no, email the adjuster the claim summary', ['send_email'], { conversation_id: 'k1' }),
    ];
    const calls = [
      ...habitCalls,
      call('c1', 'start_recovery', { turn_id: 't1' }),
      call('c2', 'send_email', { turn_id: 't2' }),
    ];
    const confused = findEvidence({ turns, calls, outcomes: [], registered }).filter(
      (e) => e.kind === 'confused_request',
    );
    expect(confused).toEqual([]);
  });

  it('ranked_first: Y ranked first, X left out and X served the turn', () => {
    const found = find(
      [turn('t1', 'large loss referral', ['start_recovery', 'lookup_claim'])],
      [call('c1', 'refer_llu', { turn_id: 't1' })],
    );
    expect(found.map((e) => [e.evidence_id, e.tool, e.served_by])).toEqual([
      ['confused:ranked_first:turn:t1', 'start_recovery', 'refer_llu'],
      ['missed:not_offered:turn:t1', 'refer_llu', null],
    ]);
  });

  it('ranked_first does not count a Y the run called on the way', () => {
    const found = find(
      [turn('t1', 'refer this claim to the specialists', ['lookup_claim', 'start_recovery'])],
      [call('c1', 'lookup_claim', { turn_id: 't1' }), call('c2', 'refer_llu', { turn_id: 't1' })],
    );
    expect(found.map((e) => e.evidence_id)).toEqual(['missed:not_offered:turn:t1']);
  });

  it('verified: a miss for the named tool, a confusion only for the tool that served or was ranked first leaving it out', () => {
    const turns = [
      turn('t1', 'large loss on this claim', ['start_recovery']),
      turn('t2', 'large loss again', ['start_recovery', 'refer_llu']),
      turn('t3', 'all good', ['refer_llu']),
    ];
    const calls = [call('c1', 'start_recovery', { turn_id: 't1' }), call('c3', 'refer_llu', { turn_id: 't3' })];
    const outcomes: OutcomeRecord[] = [
      { turn_id: 't1', ok: false, served_by: 'refer_llu', at: '2026-01-01T01:00:00Z' },
      { turn_id: 't2', ok: false, served_by: 'refer_llu', at: '2026-01-01T01:00:01Z' },
      { turn_id: 't3', ok: true, served_by: 'refer_llu', at: '2026-01-01T01:00:02Z' },
    ];
    const verified = find(turns, calls, outcomes).filter((e) => e.how === 'verified');
    // t2 offered refer_llu: ranking start_recovery first left nothing out, so no confusion there.
    expect(verified.map((e) => [e.evidence_id, e.tool, e.served_by])).toEqual([
      ['confused:verified:turn:t1', 'start_recovery', 'refer_llu'],
      ['missed:verified:turn:t1', 'refer_llu', null],
      ['missed:verified:turn:t2', 'refer_llu', null],
    ]);
  });

  it('a call without a turn but with a request forms its own run in its conversation', () => {
    const found = find(
      [],
      [
        call('c1', 'start_recovery', { request: 'large loss here', conversation_id: 'k1', at: '2026-01-02T00:00:00Z' }),
        call('c2', 'refer_llu', { request: 'refer the large loss', conversation_id: 'k1', at: '2026-01-02T00:00:05Z' }),
      ],
    );
    expect(found.map((e) => e.evidence_id).sort()).toEqual([
      'confused:re_asked:call:c1',
      'missed:next_request:call:c1',
    ]);
  });
});

describe('evidence ids', () => {
  it('are stable across runs and grouped per tool', () => {
    const input = () =>
      [
        [turn('t1', 'large loss referral', ['start_recovery'], { conversation_id: 'k' })],
        [call('c1', 'refer_llu', { turn_id: 't1' }), call('c2', 'refer_llu', { success: false, error: 'x' })],
      ] as const;
    const [turns, calls] = input();
    const first = find([...turns], [...calls]).map((e) => e.evidence_id);
    const second = find([...turns], [...calls]).map((e) => e.evidence_id);
    expect(second).toEqual(first);
    const byTool = evidenceByTool(find([...turns], [...calls]));
    expect(byTool.get('refer_llu')?.failed.map((e) => e.evidence_id)).toEqual(['failed:c2']);
    expect(byTool.get('refer_llu')?.missed.map((e) => e.evidence_id)).toEqual(['missed:not_offered:turn:t1']);
    expect(byTool.get('start_recovery')?.confused.map((e) => e.evidence_id)).toEqual(['confused:ranked_first:turn:t1']);
  });
});

describe('transient failures teach no note', () => {
  const failing = (id: string, args: Record<string, unknown>, conversation = 'conv-1') =>
    call(id, 'lookup_claim', {
      arguments: args,
      success: false,
      error: 'Could not reach claims at eu-1: carrier timeout',
      conversation_id: conversation,
    });
  const working = (id: string, args: Record<string, unknown>, conversation = 'conv-1') =>
    call(id, 'lookup_claim', { arguments: args, conversation_id: conversation });

  it('drops a failure the same call, retried with the same arguments, got past', () => {
    const calls = [failing('f1', { claim: 'C-1', region: 'eu' }), working('ok1', { region: 'eu', claim: 'C-1' })];
    expect(findFailedCalls(calls, REGISTERED).map((e) => e.call_id)).toEqual([]);
  });

  it('keeps a failure fixed by changing the arguments, one never fixed, and one retried in another conversation', () => {
    const calls = [
      failing('f1', { claim: 'C-1' }),
      working('ok1', { claim: 'C-1', region: 'eu' }),
      failing('f2', { claim: 'C-2' }, 'conv-2'),
      failing('f3', { claim: 'C-3' }, 'conv-3'),
      working('ok3', { claim: 'C-3' }, 'conv-4'),
    ];
    expect(findFailedCalls(calls, REGISTERED).map((e) => e.call_id)).toEqual(['f1', 'f2', 'f3']);
  });

  it('keeps a failure when the same call only succeeded before it', () => {
    const calls = [working('ok1', { claim: 'C-1' }), failing('f1', { claim: 'C-1' })];
    expect(findFailedCalls(calls, REGISTERED).map((e) => e.call_id)).toEqual(['f1']);
  });
});

describe('whose fault a failure is', () => {
  const failed = (id: string, error: string, extra: Partial<CallRecord> = {}) =>
    call(id, 'lookup_claim', { success: false, error, conversation_id: `conv-${id}`, ...extra });
  const kindOf = (error: string, extra: Partial<CallRecord> = {}, request: string | null = null) =>
    failureKind(failed('k', error, extra), [], request).kind;

  it('reads the service failing as an outage: status words, timeouts, resets, rate limits', () => {
    for (const error of [
      'HTTP 503 Service Unavailable',
      'the claims service is temporarily unavailable',
      '502 Bad Gateway',
      'upstream returned status 502',
      'request timed out after 30 s',
      'ECONNRESET',
      'connection reset by peer',
      '429 Too Many Requests',
      'rate limited, try again later',
      'Internal Server Error',
    ])
      expect([error, kindOf(error)]).toEqual([error, 'outage']);
  });

  it('reads a refusal on the merits as a business outcome, and "not found" for a value the user typed', () => {
    expect(kindOf('insufficient funds on the account')).toBe('business_outcome');
    expect(kindOf('order already shipped, cannot cancel')).toBe('business_outcome');
    expect(kindOf('status 409 conflict: the claim is closed')).toBe('business_outcome');
    expect(kindOf('402 Payment Required')).toBe('business_outcome');
    expect(kindOf('transfer of 500 euros refused: the room is unavailable')).toBe('business_outcome');
    expect(kindOf('order 4471-XK not found', { arguments: { order_id: '4471-XK' } }, 'cancel my order 4471 XK')).toBe(
      'business_outcome',
    );
  });

  it("reads the input's form as the caller's fault, even when the error also says not found", () => {
    expect(kindOf('claim_ref must start with CW-')).toBe('caller_fault');
    expect(kindOf('invalid value for "currency": expected one of EUR, USD')).toBe('caller_fault');
    expect(kindOf('missing required field "claim_ref"')).toBe('caller_fault');
    expect(kindOf('400 Bad Request: date format is YYYY-MM-DD')).toBe('caller_fault');
    expect(
      kindOf(
        'claim_ref "123456" not found; references start with CW-',
        { arguments: { claim_ref: '123456' } },
        'claim 123456',
      ),
    ).toBe('caller_fault');
  });

  it("reads a not-found the caller fixed by rewriting the value as the caller's fault, and one with no typed value too", () => {
    const miss = failed('n1', 'not found', { arguments: { claim_ref: '123456' }, conversation_id: 'conv-n' });
    const fixed = call('n2', 'lookup_claim', { arguments: { claim_ref: 'CW-123456' }, conversation_id: 'conv-n' });
    expect(failureKind(miss, [fixed], 'claim 123456 please').kind).toBe('caller_fault');
    expect(failureKind(miss, [], 'show my claim').kind).toBe('caller_fault');
    expect(failureKind(miss, [], 'claim 123456 please').kind).toBe('business_outcome');
  });

  it('reads a failure the same call got past when retried as no fault', () => {
    const calls = [
      failed('r1', 'Card declined', { arguments: { card: 'x' }, conversation_id: 'conv-r' }),
      call('r2', 'lookup_claim', { arguments: { card: 'x' }, conversation_id: 'conv-r' }),
    ];
    expect(readFailures(calls, () => null).get('r1')).toEqual({
      kind: 'no_fault',
      whyNoNote: 'not the caller’s fault: the same call worked when retried',
    });
  });

  it('keeps an outage and a business outcome as evidence that says why it teaches no note', () => {
    const calls = [
      failed('o1', 'HTTP 504 Gateway Timeout'),
      failed('b1', 'payment declined by the bank'),
      failed('c1', 'claim_ref must start with CW-'),
    ];
    const found = findFailedCalls(calls, REGISTERED);
    expect(found.map((e) => [e.call_id, e.why_no_note, teachesNote(e)])).toEqual([
      ['o1', 'an outage: the error says the service failed ("http 504"), not that the call was wrong', false],
      ['b1', 'a business outcome: the tool worked and said no ("declined")', false],
      ['c1', undefined, true],
    ]);
  });
});
