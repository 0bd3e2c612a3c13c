/**
 * Plain records the core reads: the call log and turns as the store hands them over (docs/learning.md).
 * Times are ISO strings; `seq` orders rows as they were written.
 */

import type { Revision } from '../schemas.ts';

export interface OfferedTool {
  name: string;
  rank: number;
  score: number;
}

/** One user request, as routed by `/route` or recorded from a trace. */
export interface TurnRecord {
  seq: number;
  turn_id: string;
  request: string | null;
  conversation_id: string | null;
  /** false when the stable-list rule sent every tool (routing chose nothing). */
  routed: boolean;
  offered: OfferedTool[];
  created_at: string;
}

/** One logged tool call. */
export interface CallRecord {
  seq: number;
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  success: boolean;
  error: string | null;
  request: string | null;
  turn_id: string | null;
  conversation_id: string | null;
  at: string;
}

/** An outcome the application reported (docs/learning.md "verified"). */
export interface OutcomeRecord {
  turn_id: string;
  ok: boolean;
  served_by: string | null;
  at: string;
}

/** A tool row as stored: the model-facing fields plus what the store keeps beside them. */
export interface StoredTool {
  name: string;
  docstring: string;
  description: string | null;
  parameters: Record<string, unknown>;
  examples: import('../schemas.ts').Example[];
  notes: string[];
  avoid: string[];
  call_example: string | null;
  /** Routing memory (src/core/routing-memory.ts): read by routing, never shown to the model. */
  memory: import('./routing-memory.ts').MemoryWording[];
  queries_source: 'augmentation' | null;
  version: number;
  definition_hash: string;
  vector: Float32Array | null;
  embedder: string;
  reviewed_seq: number;
  created_at: string;
  updated_at: string;
}

/** What a revision adds, withdraws and rests on: the lists a new revision starts from, each empty. */
export type RevisionChanges = Pick<
  Revision,
  | 'notes_added'
  | 'queries_added'
  | 'avoid_added'
  | 'call_example'
  | 'queries_withdrawn'
  | 'displaced'
  | 'queries_displaced'
  | 'refused'
  | 'evidence'
  | 'ranks'
>;

/** A revision's changes before anything is proposed: every list new and empty, no call example. */
export function noChanges(): RevisionChanges {
  return {
    notes_added: [],
    queries_added: [],
    avoid_added: [],
    call_example: null,
    queries_withdrawn: [],
    displaced: [],
    queries_displaced: [],
    refused: [],
    evidence: [],
    ranks: [],
  };
}
