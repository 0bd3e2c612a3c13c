/**
 * The review's selection rules (docs/learning.md "Review"): which tools a review reads, which of
 * those it asks the model about, what each tool's kept "Not for" lines rest on, and which of the
 * proposed "Not for" lines mirror another. Pure: each answers new values and changes none it is
 * given; src/services/review.ts reads the log and the store, and records what these decide.
 */
import type { Evidence, Refusal, Review, Revision, Settings } from '../schemas.ts';
import { type ToolEvidence, teachesNote } from './evidence.ts';
import { type KeptLines, namedTool, requestKey } from './proposals.ts';
import type { CallRecord } from './records.ts';

/** What the log says of one registered tool since its last review (the newest `max_calls_per_tool` calls). */
export interface ToolActivity {
  name: string;
  /** Highest calls.seq the last review of this tool read (0: never reviewed). */
  reviewed_seq: number;
  /** Newest call of the tool (0: none). */
  last_call_seq: number;
  recent_calls: number;
  recent_failures: number;
  /** Routed turns (of the newest `perTool`) that ranked the tool first. */
  ranked_first: number;
  /** Newest call made in one of those turns (0: none). */
  last_ranked_call_seq: number;
}

/** A tool the review passes over, and why. */
export type Skip = Review['skipped'][number];

/**
 * What a selection decided: the tools kept, the tools skipped, and the marks of the skipped tools
 * whose calls need no second look (tool → newest seq read), so the next review starts after them.
 */
export interface Selection<T> {
  kept: T[];
  skipped: Skip[];
  marks: Map<string, number>;
}

/** A tool the review asks the model about, with its evidence. */
export interface Chosen {
  activity: ToolActivity;
  evidence: ToolEvidence;
}

/** The newest call a tool's review reads about it: its own, or one in a turn that ranked it first. */
export function newestSeq(a: ToolActivity): number {
  return Math.max(a.last_call_seq, a.last_ranked_call_seq);
}

function belowThreshold(calls: number, confused: number, s: Settings): string {
  return `below_threshold: ${calls} calls (min_calls ${s.min_calls}), ${confused} confused requests (min_confusions ${s.min_confusions})`;
}

/**
 * Which tools to read: not one with a revision waiting (`waiting`: tool → its revision id), not
 * one with no new calls since its last review (no model call), not one that cannot reach
 * `min_calls` calls, `min_misses` missed requests (each is a call of the tool) or `min_confusions`
 * confused requests. A tool with no calls at all is not mentioned.
 */
export function chooseReads(
  activity: readonly ToolActivity[],
  waiting: ReadonlyMap<string, string>,
  s: Settings,
): Selection<ToolActivity> {
  const out: Selection<ToolActivity> = { kept: [], skipped: [], marks: new Map() };
  for (const a of activity) {
    const newest = newestSeq(a);
    const waitingId = waiting.get(a.name);
    if (waitingId !== undefined)
      out.skipped.push({ tool: a.name, reason: `revision_waiting: revision ${waitingId} is proposed` });
    else if (newest === 0) continue;
    else if (newest <= a.reviewed_seq)
      out.skipped.push({ tool: a.name, reason: 'no_new_calls: no calls since its last review' });
    else if (
      a.recent_calls < s.min_calls &&
      a.recent_calls < s.min_misses &&
      a.recent_calls + a.ranked_first < s.min_confusions
    ) {
      out.skipped.push({ tool: a.name, reason: belowThreshold(a.recent_calls, 0, s) });
      out.marks.set(a.name, newest);
    } else out.kept.push(a);
  }
  return out;
}

/**
 * Why the tool's other failed calls teach no note, for the skip reason: how many, and the reason of
 * the most common kind (the reason quotes no error text, so no value).
 */
function noNoteClause(ev: ToolEvidence): string {
  const reasons = new Map<string, number>();
  for (const e of ev.failed)
    if (e.why_no_note !== undefined) reasons.set(e.why_no_note, (reasons.get(e.why_no_note) ?? 0) + 1);
  if (reasons.size === 0) return '';
  const [why] = [...reasons.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0] ?? [''];
  const total = [...reasons.values()].reduce((a, b) => a + b, 0);
  return `; ${total} failed calls that were not the caller's fault teach no note (${why})`;
}

/**
 * The tools reviewed this pass, of those read (`own`: each tool's own newest calls): ≥ `min_calls`
 * calls, ≥ `min_misses` missed requests (a tool routing keeps missing is seldom called through it)
 * or ≥ `min_confusions` confused requests, with enough of one kind of evidence for a line to pass
 * its check (else no model call is worth making), most failed calls first, at most `max_tools`.
 */
export function chooseTools(
  read: readonly ToolActivity[],
  own: ReadonlyMap<string, readonly CallRecord[]>,
  evidence: ReadonlyMap<string, ToolEvidence>,
  s: Settings,
): Selection<Chosen> {
  const out: Selection<Chosen> = { kept: [], skipped: [], marks: new Map() };
  const candidates: Chosen[] = [];
  for (const a of read) {
    const ownIds = new Set((own.get(a.name) ?? []).map((c) => c.call_id));
    const found = evidence.get(a.name) ?? { failed: [], missed: [], confused: [] };
    // Failed calls count only among the tool's own newest calls (docs/learning.md max_calls_per_tool).
    const ev: ToolEvidence = {
      ...found,
      failed: found.failed.filter((e) => e.call_id !== null && ownIds.has(e.call_id)),
    };
    // Only a failure that was the caller's fault can teach a note (docs/learning.md "Whose fault a failure is").
    const teaching = ev.failed.filter(teachesNote).length;
    if (a.recent_calls < s.min_calls && ev.missed.length < s.min_misses && ev.confused.length < s.min_confusions) {
      out.skipped.push({ tool: a.name, reason: belowThreshold(a.recent_calls, ev.confused.length, s) });
      out.marks.set(a.name, newestSeq(a));
    } else if (teaching < s.min_failures && ev.missed.length < s.min_misses && ev.confused.length < s.min_confusions) {
      const counts = `${teaching} failed calls, ${ev.missed.length} missed and ${ev.confused.length} confused requests`;
      out.skipped.push({
        tool: a.name,
        reason: `nothing_to_fix: ${counts}, each below its threshold${noNoteClause(ev)}`,
      });
      out.marks.set(a.name, newestSeq(a));
    } else {
      candidates.push({ activity: a, evidence: ev });
    }
  }
  const teachingCount = (c: Chosen) => c.evidence.failed.filter(teachesNote).length;
  candidates.sort((x, y) => teachingCount(y) - teachingCount(x) || (x.activity.name < y.activity.name ? -1 : 1));
  for (const c of candidates.slice(s.max_tools)) {
    out.skipped.push({
      tool: c.activity.name,
      reason: `max_tools: ${s.max_tools} tools with more failed calls were reviewed first`,
    });
  }
  out.kept = candidates.slice(0, s.max_tools);
  return out;
}

/** What `keptLines` reads of an applied revision. */
export type AppliedRevision = Pick<Revision, 'tool' | 'avoid_added' | 'evidence'>;

/**
 * What each tool's kept "Not for" lines rest on (docs/learning.md "Cross-checks"), from the
 * evidence of the applied revisions that added lines the tool still keeps (`avoid`: each tool's
 * "Not for" lines now): per tool, the requests it sends elsewhere, and the requests other tools'
 * kept lines send to it.
 */
export function keptLines(
  applied: readonly AppliedRevision[],
  avoid: ReadonlyMap<string, readonly string[]>,
): Map<string, KeptLines> {
  const avoided = new Map<string, Set<string>>();
  const naming = new Map<string, Map<string, Set<string>>>();
  for (const rev of applied) {
    const kept = avoid.get(rev.tool);
    if (!kept || !rev.avoid_added.some((line) => kept.includes(line))) continue;
    for (const e of rev.evidence) {
      if (e.kind !== 'confused_request' || e.served_by === null) continue;
      const key = requestKey(e.text);
      avoided.set(rev.tool, (avoided.get(rev.tool) ?? new Set()).add(key));
      const target = naming.get(e.served_by) ?? new Map<string, Set<string>>();
      target.set(rev.tool, (target.get(rev.tool) ?? new Set()).add(key));
      naming.set(e.served_by, target);
    }
  }
  const out = new Map<string, KeptLines>();
  for (const name of avoid.keys()) {
    out.set(name, { avoided: avoided.get(name) ?? new Set(), naming: naming.get(name) ?? new Map() });
  }
  return out;
}

/** What `withoutMirrors` reads and answers of a proposed revision. */
export type ProposedLines = Pick<
  Revision,
  'tool' | 'avoid_added' | 'notes_added' | 'queries_added' | 'call_example' | 'evidence' | 'refused'
>;

/**
 * Mirror-image lines proposed in one review (A: "use B" and B: "use A" resting on the same
 * requests) cannot both be right: the second tool's line, by name order, is refused. Answers the
 * revisions without those lines, in their order (a revision left with nothing to add is dropped;
 * each refused line is also in its revision's `refused`), and the refusals.
 */
export function withoutMirrors<R extends ProposedLines>(
  revisions: readonly R[],
  registered: ReadonlySet<string>,
): { revisions: R[]; refused: Refusal[] } {
  const sends = new Map<string, Set<string>>();
  const refused: Refusal[] = [];
  const edited = new Map<R, R>();
  const ordered = [...revisions].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  for (const rev of ordered) {
    const keep: string[] = [];
    const own: Refusal[] = [];
    for (const line of rev.avoid_added) {
      const target = namedTool(line, registered);
      const requests = rev.evidence
        .filter((e: Evidence) => e.kind === 'confused_request' && e.served_by === target)
        .map((e) => requestKey(e.text));
      const back = sends.get(`${target}\u0000${rev.tool}`);
      const mirror = back ? requests.find((r) => back.has(r)) : undefined;
      if (mirror !== undefined) {
        own.push({
          tool: rev.tool,
          kind: 'avoid',
          text: line,
          reason: 'contradicts',
          detail: `${target} is proposed a "Not for" line sending "${mirror}" to ${rev.tool}`,
        });
        continue;
      }
      keep.push(line);
      const key = `${rev.tool}\u0000${target}`;
      sends.set(key, new Set([...(sends.get(key) ?? []), ...requests]));
    }
    refused.push(...own);
    edited.set(rev, { ...rev, avoid_added: keep, refused: [...rev.refused, ...own] });
  }
  const out = revisions
    .map((r) => edited.get(r) ?? r)
    .filter((r) => r.notes_added.length + r.queries_added.length + r.avoid_added.length > 0 || r.call_example !== null);
  return { revisions: out, refused };
}
