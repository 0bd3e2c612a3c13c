import { describe, expect, it } from 'vitest';
import { buildExampleCall, isFormat } from '../../src/core/example-call.ts';
import type { CallRecord } from '../../src/core/records.ts';

let seq = 0;
function ok(args: Record<string, unknown>, success = true): CallRecord {
  seq++;
  return {
    seq,
    call_id: `c${seq}`,
    tool: 'upload_file',
    arguments: args,
    success,
    error: null,
    request: null,
    turn_id: null,
    conversation_id: null,
    at: '2026-01-01T00:00:00Z',
  };
}

describe('buildExampleCall (docs/learning.md "Example call")', () => {
  it('builds the reference line from the calls that worked', () => {
    const line = buildExampleCall([
      ok({ claim_ref: 'CW-123456', file_mb: 12 }),
      ok({ claim_ref: 'CW-998877', file_mb: 3.5 }),
      ok({ claim_ref: '123456', file_mb: 1 }, false),
    ]);
    expect(line).toBe('Example call: {"claim_ref": "CW-######", "file_mb": "<number>"}');
  });

  it('shows <text> when the masked forms differ or much of the string is fixed', () => {
    const line = buildExampleCall([
      ok({ ref: 'CW-123456', name: 'Ann Smith', room: 'Room 12', email: 'a@x.io' }),
      ok({ ref: 'CW-12345', name: 'Bo Li', room: 'Room 12', email: 'b@y.io' }),
    ]);
    expect(line).toBe('Example call: {"ref": "<text>", "name": "<text>", "room": "<text>", "email": "<text>"}');
  });

  it('names every other type, keeps keys in order of first appearance and no value', () => {
    const line = buildExampleCall([
      ok({ urgent: true, tags: ['a'] }),
      ok({ meta: { k: 'secret' }, urgent: false, date: '2026-01-31' }),
      ok({ date: '2025-12-01', mixed: 1 }),
      ok({ mixed: 'one', empty: null }),
    ]);
    expect(line).toBe(
      'Example call: {"urgent": "<boolean>", "tags": "<list>", "meta": "<object>", "date": "####-##-##", "mixed": "<value>", "empty": null}',
    );
    expect(line).not.toContain('secret');
  });

  it('is null without a successful call that passed an argument', () => {
    expect(buildExampleCall([])).toBeNull();
    expect(buildExampleCall([ok({ claim_ref: 'CW-1' }, false)])).toBeNull();
    expect(buildExampleCall([ok({})])).toBeNull();
  });

  it('decides a format by the documented rule', () => {
    expect(isFormat('CW-######')).toBe(true);
    expect(isFormat('ACME-######')).toBe(true);
    expect(isFormat('ACME-####')).toBe(false); // less than half masked
    expect(isFormat('+## ### ### ####')).toBe(true);
    expect(isFormat('ABCDE-#####')).toBe(false); // five letters
    expect(isFormat('CW-####-A')).toBe(false); // a letter after the digits
    expect(isFormat('Room ##')).toBe(false); // less than half masked
    expect(isFormat('#')).toBe(false); // one digit is no format
    expect(isFormat('##@##')).toBe(false); // not a separator
  });
});
