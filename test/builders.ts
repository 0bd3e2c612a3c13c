/**
 * Plain records for tests, built the same way in every file: a call of the log and a revision as a
 * review stores it, each with the fields a test does not care about filled in. No Workers module:
 * the core's tests use them as the Worker's do.
 */
import type { NewRevision } from '../src/adapters/d1-revisions.ts';
import { type CallRecord, noChanges } from '../src/core/records.ts';

/** A tool definition as an agent registers it: `props` are its parameters' JSON Schema properties. */
export const tool = (name: string, description: string, props: Record<string, unknown> = {}) => ({
  name,
  description,
  parameters: { type: 'object', properties: props },
});

/** The claims desk's tools, defined once: the learning and routing tests name them in any mix. */
export const CLAIM_TOOLS = {
  lookup_claim: tool('lookup_claim', 'Look up an insurance claim by its claim reference and show its status.', {
    claim_ref: { type: 'string' },
  }),
  upload_file: tool('upload_file', 'Attach an uploaded document or photo to a claim.', {
    claim_ref: { type: 'string' },
    file_mb: { type: 'number' },
  }),
  start_recovery: tool('start_recovery', 'Start a subrogation recovery against a third party on a claim.', {
    claim_ref: { type: 'string' },
  }),
  refer_llu: tool('refer_llu', 'Refer a large loss to the large loss unit for specialist handling.', {
    claim_ref: { type: 'string' },
  }),
  set_rvf: tool('set_rvf', 'Set the reserve value figure held against a claim to an amount.', {
    claim_ref: { type: 'string' },
    amount: { type: 'number' },
  }),
};

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

let revisions = 0;
/**
 * A revision of `tool` as a review would store it, changing nothing but `fields`: version 1, each
 * one made a second after the one before (from 2026-01-01), so a file's revisions keep their order.
 */
export function newRevision(tool: string, fields: Partial<NewRevision> = {}): NewRevision {
  revisions += 1;
  return {
    revision_id: `rev_${crypto.randomUUID()}`,
    tool,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, revisions)).toISOString(),
    ...noChanges(),
    base_version: 1,
    ...fields,
  };
}
