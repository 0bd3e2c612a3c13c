/** Evidence of a revision as a review cites it. No Workers module. */
import type { Evidence } from '../../src/schemas.ts';

/** Evidence of `kind` about lookup_claim's claim_ref, tied to no turn or call, at 2026-01-01; `extra` sets any other field. */
export function evidenceItem(
  evidence_id: string,
  kind: Evidence['kind'],
  text: string,
  extra: Partial<Evidence> = {},
): Evidence {
  return {
    evidence_id,
    kind,
    tool: 'lookup_claim',
    text,
    arguments: ['claim_ref'],
    how: null,
    served_by: null,
    turn_id: null,
    call_id: null,
    at: '2026-01-01T00:00:00Z',
    ...extra,
  };
}
