/**
 * An approver's edit of a proposed revision (docs/learning.md "Edit, then apply"): the lines a
 * person keeps, drops or rewords before applying. A reworded line is held to every check a model's
 * line passes (src/core/proposals.ts): its form, the text aimed at the model, argument and personal
 * values, the evidence it rests on, the cross-checks, duplicates and caps. A line kept word for word
 * was checked when it was proposed and stays as it is.
 */
import type { Evidence, Refusal } from '../schemas.ts';
import { checkExampleCall, checkProposal, namedTool, type ProposalContext, type ProposalReply } from './proposals.ts';
import { checkLineText, normalizeLine } from './safety.ts';
import { withoutPlaceholders } from './scrub.ts';
import { contentWords } from './text.ts';

/** The lines of a revision an approver can edit. */
export interface RevisionLines {
  notes_added: string[];
  queries_added: string[];
  avoid_added: string[];
  call_example: string | null;
}

/** An edit: each field absent stays as proposed; a list replaces the proposed list. */
export type LineEdit = Partial<RevisionLines>;

export type LineKind = 'note' | 'request' | 'avoid' | 'call_example';

/** The first edited line a check refused, named by its field and place. */
export interface EditRefusal {
  field: keyof RevisionLines;
  /** Zero-based place of the line in its edited list (0 for the example call). */
  index: number;
  kind: LineKind;
  text: string;
  check: Refusal['reason'];
  detail: string;
}

export type EditResult = { ok: true; lines: RevisionLines; changed: boolean } | { ok: false; refusal: EditRefusal };

const GROUPS = [
  ['notes_added', 'note', 'notes'],
  ['queries_added', 'request', 'requests'],
  ['avoid_added', 'avoid', 'avoid'],
] as const;

/** The evidence kind each kind of line rests on. */
const BASIS = { note: 'failed_call', request: 'missed_request', avoid: 'confused_request' } as const;

/** The lines of a revision as proposed. */
export function linesOf(rev: RevisionLines): RevisionLines {
  return {
    notes_added: [...rev.notes_added],
    queries_added: [...rev.queries_added],
    avoid_added: [...rev.avoid_added],
    call_example: rev.call_example,
  };
}

/**
 * The context an approver's lines are checked in: every check a learned line passes but the two
 * that weigh what the log credited — an example's words asked of its tool in `min_conversations`
 * conversations (proposals.ts `unseenWords`), and the log's majority on who serves its wording.
 * Those checks are for wordings the log credited to a tool, which may be another tool's; a line
 * the approver wrote is their own word, not a credit.
 */
function asApprover(ctx: ProposalContext): ProposalContext {
  if (ctx.origins === undefined) return ctx;
  const { served: _credited, servedRequests: _majority, ...origins } = ctx.origins;
  return { ...ctx, origins };
}

/**
 * Checks an edit of `proposed` against the context the review would use (the revision's evidence,
 * the tool's rows, the log's values and privacy rule). Lines are checked in the order a proposal
 * is (notes, examples, "Not for" lines, then the example call), each on top of the lines kept
 * before it, so duplicates and caps count what the edit keeps. Answers the lines to apply (a
 * reworded line as the checks store it: normalised, personal values masked) or the first refusal.
 */
export function checkEdit(proposed: RevisionLines, edit: LineEdit, given: ProposalContext): EditResult {
  const ctx = asApprover(given);
  const wanted: RevisionLines = { ...linesOf(proposed), ...edit };
  const kept: ProposalReply = { notes: [], requests: [], avoid: [] };
  const out: RevisionLines = { notes_added: [], queries_added: [], avoid_added: [], call_example: null };
  for (const [field, kind, group] of GROUPS) {
    for (const [index, line] of wanted[field].entries()) {
      if (proposed[field].includes(line)) {
        out[field].push(line);
        kept[group].push({ text: line, cites: citesFor(kind, line, ctx.evidence, ctx) });
        continue;
      }
      const item = { text: line, cites: citesFor(kind, line, ctx.evidence, ctx) };
      const before = checkProposal(kept, ctx).refused.length;
      const trial: ProposalReply = { ...kept, [group]: [...kept[group], item] };
      const checked = checkProposal(trial, ctx);
      const refused = checked.refused.length > before ? checked.refused.at(-1) : undefined;
      if (refused) {
        return {
          ok: false,
          refusal: { field, index, kind, text: line, check: refused.reason, detail: refused.detail },
        };
      }
      const accepted = checked[field].at(-1) ?? line;
      out[field].push(accepted);
      kept[group].push({ text: accepted, cites: item.cites });
    }
  }
  const example = wanted.call_example;
  if (example !== null && example !== proposed.call_example) {
    const text = normalizeLine(example).trim();
    const refusal =
      text === ''
        ? { reason: 'bad_shape' as const, detail: 'empty text' }
        : checkExampleCall(ctx.tool, text, ctx.values);
    if (refusal) {
      return {
        ok: false,
        refusal: { field: 'call_example', index: 0, kind: 'call_example', text: example, ...checkOf(refusal) },
      };
    }
    out.call_example = checkLineText(text, { definition: ctx.definition }).text;
  } else out.call_example = example;
  return { ok: true, lines: out, changed: !sameLines(out, proposed) };
}

function checkOf(r: { reason: Refusal['reason']; detail: string }): { check: Refusal['reason']; detail: string } {
  return { check: r.reason, detail: r.detail };
}

/** True when an edit keeps no line at all (applying it would change nothing: dismiss instead). */
export function isEmpty(lines: RevisionLines): boolean {
  return (
    lines.notes_added.length + lines.queries_added.length + lines.avoid_added.length === 0 &&
    lines.call_example === null
  );
}

export function sameLines(a: RevisionLines, b: RevisionLines): boolean {
  const same = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return (
    same(a.notes_added, b.notes_added) &&
    same(a.queries_added, b.queries_added) &&
    same(a.avoid_added, b.avoid_added) &&
    a.call_example === b.call_example
  );
}

/**
 * The evidence an edited line rests on: the revision's evidence of the kind the line needs that
 * the line is about. A note rests on the failed calls; an example on the missed requests it shares
 * a word with; a "Not for" line on the confused requests served by the tool it names that share a
 * word with it. The thresholds then count what is left, as they count a model's citations.
 */
export function citesFor(
  kind: 'note' | 'request' | 'avoid',
  line: string,
  evidence: readonly Evidence[],
  ctx: Pick<ProposalContext, 'tool' | 'registered'>,
): string[] {
  const own = evidence.filter((e) => e.tool === ctx.tool && e.kind === BASIS[kind]);
  if (kind === 'note') return own.map((e) => e.evidence_id);
  const target = kind === 'avoid' ? namedTool(line, ctx.registered) : null;
  const words = contentWords(
    withoutPlaceholders(kind === 'avoid' ? (/^Not for (.+); use \S+$/.exec(line)?.[1] ?? line) : line),
  );
  return own
    .filter((e) => target === null || e.served_by === target)
    .filter((e) => [...contentWords(withoutPlaceholders(e.text))].some((w) => words.has(w)))
    .map((e) => e.evidence_id);
}
