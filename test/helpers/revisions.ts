/** Revisions as a review stores them, with the fields a test does not care about filled in. No Workers module. */
import type { NewRevision } from '../../src/adapters/d1-revisions.ts';
import { noChanges } from '../../src/core/records.ts';

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
