/**
 * How approvers decide (the quality report's `approvals`, docs/api.md "Quality"): of the revisions
 * of lines decided in a window, how many were applied as proposed, applied after an edit, applied
 * by `auto_apply`, or dismissed; and, per kind of line, how many proposed lines approvers kept word
 * for word, how many they took out (dropped or reworded) and how many they wrote. An edit is data:
 * a kind whose lines approvers keep rewording is a kind the learning writes badly.
 * Pure: the revisions are read, never changed.
 */
import type { Revision } from '../schemas.ts';

type Lines = Pick<Revision, 'notes_added' | 'queries_added' | 'avoid_added' | 'call_example'>;

/** The four kinds of line a revision adds, as the edit API names them. */
export const LINE_KINDS = ['notes_added', 'queries_added', 'avoid_added', 'call_example'] as const;
export type LineKind = (typeof LINE_KINDS)[number];

/** Per kind of line: proposed lines of applied revisions, and what approvers made of them. */
export interface LineEdits {
  /** Lines proposed in the revisions that were applied. */
  proposed: number;
  /** Proposed lines applied word for word. */
  kept: number;
  /** Proposed lines not applied as written: dropped, or replaced by a reworded line. */
  taken_out: number;
  /** Applied lines no one proposed: the approvers' rewordings. */
  written: number;
}

export interface ApprovalStats {
  /** Revisions of lines decided (applied, since undone, or dismissed) that were created in the window. */
  decided: number;
  applied_as_proposed: number;
  applied_edited: number;
  /** Applied by the agent's `auto_apply` policy, not by a person (counted in applied_as_proposed too). */
  auto_applied: number;
  dismissed: number;
  /** applied_edited / (applied_as_proposed + applied_edited); null when none was applied. */
  edit_rate: number | null;
  lines: Record<LineKind, LineEdits>;
}

function linesOf(lines: Lines, kind: LineKind): string[] {
  if (kind === 'call_example') return lines.call_example === null ? [] : [lines.call_example];
  return [...lines[kind]];
}

/** What approvers did with one kind of line: multiset difference, so a repeated line counts twice. */
function compare(proposed: readonly string[], applied: readonly string[]): LineEdits {
  const left = new Map<string, number>();
  for (const line of proposed) left.set(line, (left.get(line) ?? 0) + 1);
  let kept = 0;
  for (const line of applied) {
    const n = left.get(line) ?? 0;
    if (n > 0) {
      kept += 1;
      left.set(line, n - 1);
    }
  }
  return { proposed: proposed.length, kept, taken_out: proposed.length - kept, written: applied.length - kept };
}

/**
 * The approvals of `revisions` created at or after `since` (an ISO time). Routing memory revisions
 * are left out: they have no lines a person reads. `autoBy` is the `approved_by` of the policy.
 */
export function approvalStats(revisions: readonly Revision[], since: string, autoBy: string): ApprovalStats {
  const zero = (): LineEdits => ({ proposed: 0, kept: 0, taken_out: 0, written: 0 });
  const lines = Object.fromEntries(LINE_KINDS.map((k) => [k, zero()])) as Record<LineKind, LineEdits>;
  let asProposed = 0;
  let edited = 0;
  let auto = 0;
  let dismissed = 0;
  for (const r of revisions) {
    if (r.kind === 'memory' || r.created_at < since || r.status === 'proposed') continue;
    if (r.status === 'dismissed') {
      dismissed += 1;
      continue;
    }
    if (r.applied_at === null) continue;
    if (r.proposed) edited += 1;
    else asProposed += 1;
    if (r.approved_by === autoBy) auto += 1;
    for (const kind of LINE_KINDS) {
      const seen = compare(linesOf(r.proposed ?? r, kind), linesOf(r, kind));
      const into = lines[kind];
      into.proposed += seen.proposed;
      into.kept += seen.kept;
      into.taken_out += seen.taken_out;
      into.written += seen.written;
    }
  }
  const applied = asProposed + edited;
  return {
    decided: applied + dismissed,
    applied_as_proposed: asProposed,
    applied_edited: edited,
    auto_applied: auto,
    dismissed,
    edit_rate: applied === 0 ? null : edited / applied,
    lines,
  };
}
