/**
 * Bulk decisions (docs/api.md "Bulk"): each revision is decided on its own; the answer lists, in the
 * order asked, which were decided and why the others were not.
 */

/** The outcome of one revision of a bulk request. */
export type BulkItem =
  | { revision_id: string; ok: true; status: string }
  | { revision_id: string; ok: false; error: { code: string; message: string } };

/** One outcome from a decision's result or the error it threw. */
export function bulkItem(
  id: string,
  outcome: { status: string } | { error: unknown },
  codeOf: (err: unknown) => { code: string; message: string },
): BulkItem {
  return 'status' in outcome
    ? { revision_id: id, ok: true, status: outcome.status }
    : { revision_id: id, ok: false, error: codeOf(outcome.error) };
}

/** The answer: every outcome, and how many were decided and refused. */
export function bulkAnswer(items: BulkItem[]): { results: BulkItem[]; decided: number; failed: number } {
  const decided = items.filter((i) => i.ok).length;
  return { results: items, decided, failed: items.length - decided };
}
