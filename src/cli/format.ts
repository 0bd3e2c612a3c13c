/** Plain-text renderings of API answers for the CLI: aligned tables and short summaries. */
import type {
  Flag,
  QualityAnswer,
  RegisterToolsAnswer,
  Review,
  Revision,
  RouteResult,
  ToolRow,
  UnregisteredTool,
} from '../client/index.ts';

const CELL_CHARS = 60;

/** An aligned table with a header row; cells are cut to 60 characters so rows stay on one line. */
export function table(header: string[], rows: (string | number | null)[][]): string {
  if (rows.length === 0) return '(none)';
  const cells = [header, ...rows.map((r) => r.map(cell))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** A blank line, `title:` and the table, when there are rows. */
function section(lines: string[], title: string, header: string[], rows: (string | number | null)[][]): void {
  if (rows.length > 0) lines.push('', `${title}:`, table(header, rows));
}

function cell(v: string | number | null): string {
  const s = v === null ? '-' : String(v).replace(/\s+/g, ' ');
  return s.length > CELL_CHARS ? `${s.slice(0, CELL_CHARS - 1)}…` : s;
}

export function toolsTable(tools: ToolRow[]): string {
  return table(
    ['NAME', 'VERSION', 'EXAMPLES', 'NOTES', 'UPDATED'],
    tools.map((t) => [t.name, t.version, t.examples.length, t.notes.length + t.avoid.length, t.updated_at]),
  );
}

export function registered(answer: RegisterToolsAnswer): string {
  return `${answer.tools.length} tool(s) registered\n${toolsTable(answer.tools)}`;
}

export function routed(result: RouteResult): string {
  const head = `turn ${result.turn_id}${result.routed ? '' : ' (every tool sent: the toolbox is under stable_tool_list_tokens)'}`;
  return `${head}\n${table(
    ['RANK', 'TOOL', 'SCORE'],
    result.tools.map((t) => [t.rank, t.name, t.score.toFixed(3)]),
  )}`;
}

/** One line of what a revision adds, e.g. "2 notes, 1 example, 1 not-for, example call". */
export function additions(r: Revision): string {
  const parts = [
    count(r.notes_added.length, 'note'),
    count(r.queries_added.length, 'example'),
    count(r.avoid_added.length, 'not-for'),
    r.call_example ? 'example call' : '',
  ].filter(Boolean);
  return parts.join(', ') || 'nothing';
}

function count(n: number, what: string): string {
  return n === 0 ? '' : `${n} ${what}${n === 1 ? '' : 's'}`;
}

export function revisionsTable(revisions: Revision[]): string {
  return table(
    ['REVISION', 'TOOL', 'STATUS', 'CREATED', 'ADDS'],
    revisions.map((r) => [r.revision_id, r.tool, r.status, r.created_at, additions(r)]),
  );
}

export function reviewed(review: Review): string {
  const lines = [
    `review ${review.review_id}${review.dry_run ? ' (dry run: nothing stored)' : ''}: ${review.revisions.length} revision(s), ${review.refused.length} refused, ${review.model_calls} model call(s)`,
  ];
  if (review.revisions.length > 0) lines.push('', revisionsTable(review.revisions));
  section(
    lines,
    'Refused',
    ['TOOL', 'KIND', 'REASON', 'TEXT'],
    review.refused.map((r) => [r.tool, r.kind, r.reason, r.text]),
  );
  section(
    lines,
    'Skipped',
    ['TOOL', 'REASON'],
    review.skipped.map((s) => [s.tool, s.reason]),
  );
  if (review.flags.length > 0) lines.push('', 'Flags:', flagsTable(review.flags));
  return lines.join('\n');
}

/** A revision in full: what it adds, what it rests on, what was refused. */
export function revisionDetail(r: Revision): string {
  const lines = [
    `revision ${r.revision_id}  tool ${r.tool}  status ${r.status}`,
    `created ${r.created_at}${r.applied_at ? `  applied ${r.applied_at} by ${r.approved_by ?? '-'}` : ''}${r.dismiss_reason ? `  dismissed: ${r.dismiss_reason}` : ''}`,
  ];
  const list = (title: string, items: string[]) => {
    if (items.length > 0) lines.push('', `${title}:`, ...items.map((i) => `  ${i}`));
  };
  list('Notes', r.notes_added);
  list('Example requests', r.queries_added);
  list('Not for', r.avoid_added);
  list('Example call', r.call_example ? [r.call_example] : []);
  list('Withdrawn examples', r.queries_withdrawn);
  list(
    'Displaced',
    r.displaced.map((d) => `${d.request} (${d.tool})`),
  );
  list(
    'Refused',
    r.refused.map((x) => `${x.kind} ${x.reason}: ${x.text}`),
  );
  section(
    lines,
    'Evidence',
    ['KIND', 'HOW', 'TEXT'],
    r.evidence.map((e) => [e.kind, e.how, e.text]),
  );
  section(
    lines,
    'Ranks',
    ['REQUEST', 'BEFORE', 'AFTER'],
    r.ranks.map((k) => [k.request, k.before, k.after]),
  );
  return lines.join('\n');
}

export function flagsTable(flags: Flag[]): string {
  return table(
    ['TOOL', 'FLAG', 'OFFERED', 'CALLS', 'ROUTED TURNS'],
    flags.map((f) => [f.tool, f.flag, f.offered_turns, f.calls, f.routed_turns]),
  );
}

export function unregisteredTable(tools: UnregisteredTool[]): string {
  return table(
    ['NAME', 'CALLS', 'FAILURES', 'LAST SEEN', 'DRAFT FROM'],
    tools.map((t) => [t.name, t.call_count, t.failure_count, t.last_seen_at, t.definition_source]),
  );
}

const pct = (x: number | null): string => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);

/** `whetstone quality`: one row per UTC day, then each applied revision's before and after. */
export function qualityTables(q: QualityAnswer): string {
  const days = table(
    ['DATE', 'ROUTED', 'SERVED', 'HITS', 'HIT RATE', 'MRR', 'MISSES', 'CONFUSIONS', 'FAILED'],
    q.days.map((d) => [
      d.date,
      d.routed_turns,
      d.served_turns,
      d.hits,
      pct(d.hit_rate),
      d.mrr === null ? '-' : d.mrr.toFixed(3),
      d.misses,
      d.confusions,
      d.failed_calls,
    ]),
  );
  const revisions = table(
    ['REVISION', 'TOOL', 'APPLIED', 'UNDONE', 'BEFORE HITS/SERVED', 'AFTER HITS/SERVED'],
    q.revisions.map((r) => [
      r.revision_id,
      r.tool,
      r.applied_at,
      r.undone_at,
      `${r.before.hits}/${r.before.served_turns}`,
      `${r.after.hits}/${r.after.served_turns}`,
    ]),
  );
  const note = q.truncated ? '\n(the window holds more rows than one report reads: the oldest are left out)' : '';
  return `${days}\n\nRevisions:\n${revisions}${note}`;
}
