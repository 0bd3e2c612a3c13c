/** How approvers decide, counted from revisions alone: edits, kept and written lines, the policy's applies. */
import { describe, expect, it } from 'vitest';
import { approvalStats } from '../../src/core/approval-stats.ts';
import { noChanges } from '../../src/core/records.ts';
import type { Revision } from '../../src/schemas.ts';

const AUTO = 'whetstone:tool_learning';
const SINCE = '2026-03-01T00:00:00.000Z';

function rev(fields: Partial<Revision>): Revision {
  return {
    revision_id: `rev_${Math.random()}`,
    tool: 't',
    status: 'applied',
    created_at: '2026-03-02T00:00:00.000Z',
    applied_at: '2026-03-02T01:00:00.000Z',
    approved_by: 'dana',
    ...noChanges(),
    base_version: 1,
    applied_version: 2,
    dismiss_reason: null,
    undone_at: null,
    undone_by: null,
    ...fields,
  };
}

describe('approvalStats', () => {
  it('counts an undone revision as applied, the policy apart, and leaves out memory, waiting and older revisions', () => {
    const stats = approvalStats(
      [
        rev({ notes_added: ['a'], approved_by: AUTO }),
        rev({ status: 'undone', queries_added: ['find my order'] }),
        rev({ status: 'dismissed', applied_at: null, notes_added: ['b'] }),
        rev({ status: 'proposed', applied_at: null, notes_added: ['c'] }),
        rev({ kind: 'memory' }),
        rev({ created_at: '2026-02-28T23:59:59.000Z', notes_added: ['d'] }),
      ],
      SINCE,
      AUTO,
    );
    expect(stats).toMatchObject({
      decided: 3,
      applied_as_proposed: 2,
      applied_edited: 0,
      auto_applied: 1,
      dismissed: 1,
      edit_rate: 0,
    });
    expect(stats.lines.notes_added).toEqual({ proposed: 1, kept: 1, taken_out: 0, written: 0 });
    expect(stats.lines.queries_added).toEqual({ proposed: 1, kept: 1, taken_out: 0, written: 0 });
  });

  it('tells kept lines from rewordings and drops, a repeated line counted each time, and the example call too', () => {
    const proposed = {
      notes_added: ['Pass the id.', 'Pass the id.', 'Dates are ISO.'],
      queries_added: ['cancel my order'],
      avoid_added: ['Not for refunds; use refund_order.'],
      call_example: 'cancel_order({"order_id":"<id>"})',
    };
    const stats = approvalStats(
      [
        rev({
          proposed,
          edited_by: 'dana',
          notes_added: ['Pass the id.', 'Dates are YYYY-MM-DD.'],
          queries_added: ['cancel my order'],
          avoid_added: [],
          call_example: null,
        }),
      ],
      SINCE,
      AUTO,
    );
    expect(stats).toMatchObject({ decided: 1, applied_edited: 1, applied_as_proposed: 0, edit_rate: 1 });
    expect(stats.lines).toEqual({
      notes_added: { proposed: 3, kept: 1, taken_out: 2, written: 1 },
      queries_added: { proposed: 1, kept: 1, taken_out: 0, written: 0 },
      avoid_added: { proposed: 1, kept: 0, taken_out: 1, written: 0 },
      call_example: { proposed: 1, kept: 0, taken_out: 1, written: 0 },
    });
  });

  it('answers a null edit rate when nothing was applied', () => {
    expect(approvalStats([rev({ status: 'dismissed', applied_at: null })], SINCE, AUTO).edit_rate).toBeNull();
  });
});
