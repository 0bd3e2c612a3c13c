import { describe, expect, it } from 'vitest';
import { testEndpointResult, tryRequests } from '../../src/core/try-run.ts';
import type { Evidence } from '../../src/schemas.ts';
import { evidenceItem } from '../helpers/evidence.ts';

function evidence(kind: Evidence['kind'], text: string, more: Partial<Evidence> = {}): Evidence {
  return evidenceItem(`${kind}:${text}`, kind, text, { arguments: [], ...more });
}

describe('the requests a try run replays', () => {
  it('takes the evidence first, then served calls, each text once, without placeholders', () => {
    const got = tryRequests(
      'lookup_claim',
      [
        evidence('missed_request', 'open the FNOL for <value>'),
        evidence('confused_request', 'refer the large loss', { served_by: 'refer_llu' }),
        evidence('failed_call', 'claim_ref must start with CW-', { call_id: 'c-failed' }),
        evidence('failed_call', 'an error whose call is no longer read', { call_id: 'c-gone' }),
        evidence('missed_request', 'open the FNOL for'),
      ],
      [
        { call_id: 'c-failed', success: false, request: 'show claim <value>' },
        { call_id: 'c-ok', success: true, request: 'open the FNOL for <value>' },
        { call_id: 'c-ok2', success: true, request: 'the claim record please' },
        { call_id: 'c-none', success: true, request: null },
      ],
    );
    expect(got).toEqual([
      { request: 'open the FNOL for', source: 'evidence', evidence_kind: 'missed_request', expected: 'lookup_claim' },
      { request: 'refer the large loss', source: 'evidence', evidence_kind: 'confused_request', expected: 'refer_llu' },
      // A failed call's evidence text is the error: the request is the call's own.
      { request: 'show claim', source: 'evidence', evidence_kind: 'failed_call', expected: 'lookup_claim' },
      { request: 'the claim record please', source: 'served', evidence_kind: null, expected: 'lookup_claim' },
    ]);
  });

  it('keeps to its bounds on each side', () => {
    const many = Array.from({ length: 30 }, (_, i) => evidence('missed_request', `request number ${i}`));
    const calls = Array.from({ length: 30 }, (_, i) => ({ call_id: `c${i}`, success: true, request: `served ${i}` }));
    const got = tryRequests('lookup_claim', many, calls);
    expect(got.filter((r) => r.source === 'evidence')).toHaveLength(12);
    expect(got.filter((r) => r.source === 'served')).toHaveLength(8);
  });
});

describe("a test endpoint's answer", () => {
  it('is its result, or an error saying what came back', () => {
    expect(testEndpointResult(200, '{"result": {"ok": 1}}')).toEqual({ result: { ok: 1 } });
    expect(testEndpointResult(200, '{"result": null}')).toEqual({ result: null });
    expect(testEndpointResult(500, '{"result": 1}')).toEqual({ error: 'HTTP 500' });
    expect(testEndpointResult(200, 'ok')).toEqual({ error: 'the answer is not JSON' });
    expect(testEndpointResult(200, '[1]')).toEqual({ error: 'the answer has no "result"' });
  });
});
