/** Turns and calls of the log, built the same way in every file. No Workers module. */
import type { CallRecord, TurnRecord } from '../../src/core/records.ts';

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

/**
 * A routed turn outside any conversation at second `seq` of 2026-01-01T00:00, that offered
 * `offered` at ranks 1, 2, … with scores 1, 0.9, …; `extra` sets any other field.
 */
export function turnRecord(
  seq: number,
  turn_id: string,
  request: string | null,
  offered: string[] = [],
  extra: Partial<TurnRecord> = {},
): TurnRecord {
  return {
    seq,
    turn_id,
    request,
    conversation_id: null,
    routed: true,
    offered: offered.map((name, i) => ({ name, rank: i + 1, score: 1 - i / 10 })),
    created_at: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`,
    ...extra,
  };
}
