/** Calls of the log, built the same way in every file. No Workers module. */
import type { CallRecord } from '../../src/core/records.ts';

/** A successful call `c<seq>` of `tool` with no arguments, outside any turn, at second `seq` of 2026-01-01T00:01. */
export function callRecord(seq: number, tool: string, extra: Partial<CallRecord> = {}): CallRecord {
  return {
    seq,
    call_id: `c${seq}`,
    tool,
    arguments: {},
    success: true,
    error: null,
    request: null,
    turn_id: null,
    conversation_id: null,
    at: `2026-01-01T00:01:${String(seq).padStart(2, '0')}Z`,
    ...extra,
  };
}
