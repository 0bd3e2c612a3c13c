/**
 * The agent's inbox. Proposed revisions with their evidence, ranks before/after, what the code
 * refused and why, and the model view before → after as a diff (rendered by the server's own
 * renderer through `POST …/tools/:tool/preview`); Apply and Dismiss with `approved_by`; applied
 * revisions with Undo; "Run review now" with a dry-run toggle (docs/api.md, docs/dashboard.md).
 */
import type { Preview, Review, Revision, RevisionsAnswer, ViewContext } from './api-types.ts';
import {
  act,
  agentPath,
  alertError,
  announce,
  api,
  count,
  describeFailure,
  diffView,
  el,
  fill,
  hitsOf,
  QUALITY_DAYS,
  type RevisionQuality,
  revisionQuality,
  session,
  uid,
  when,
} from './core.ts';

type Evidence = Revision['evidence'][number];
type EvidenceKind = Evidence['kind'];

const EVIDENCE_GROUPS: { kind: EvidenceKind; heading: string; one: string; many: string }[] = [
  { kind: 'failed_call', heading: 'Failed calls', one: 'failed call', many: 'failed calls' },
  { kind: 'missed_request', heading: 'Missed requests', one: 'missed request', many: 'missed requests' },
  { kind: 'confused_request', heading: 'Confused requests', one: 'confused request', many: 'confused requests' },
  {
    kind: 'successful_call',
    heading: 'Successful calls (the example call is built from them)',
    one: 'successful call',
    many: 'successful calls',
  },
];

export async function renderInbox(ctx: ViewContext, panel: HTMLElement): Promise<void> {
  const revisionsPath = agentPath(ctx.agent, 'revisions');
  const [proposed, applied, quality] = await Promise.all([
    api<RevisionsAnswer>('GET', `${revisionsPath}?status=proposed`),
    api<RevisionsAnswer>('GET', `${revisionsPath}?status=applied`),
    revisionQuality(ctx.agent),
  ]);
  // Undo takes back the newest applied revision of a tool (docs/learning.md): only that one gets the button.
  const undoable = new Set<string>();
  const seen = new Set<string>();
  for (const r of applied.revisions) {
    if (seen.has(r.tool)) continue;
    seen.add(r.tool);
    undoable.add(r.revision_id);
  }
  const cards = proposed.revisions.map((r) => revisionCard(ctx, r, true, false, undefined));
  const lines = applied.revisions.filter((r) => r.kind !== 'memory');
  const remembered = applied.revisions.length - lines.length;
  fill(
    panel,
    reviewControls(ctx),
    autoAppliedSection(applied.revisions.filter((r) => r.approved_by === AUTO_APPLY_BY)),
    el(
      'section',
      { 'aria-labelledby': 'inbox-proposed' },
      el('h2', { id: 'inbox-proposed', text: `Proposed revisions (${proposed.revisions.length})` }),
      cards.length
        ? cards
        : el('p', { class: 'empty', text: 'Nothing waiting for approval. Run a review, or wait for the cron review.' }),
    ),
    el(
      'section',
      { 'aria-labelledby': 'inbox-applied' },
      el('h2', { id: 'inbox-applied', text: `Applied revisions (${lines.length})` }),
      lines.length
        ? lines.map((r) => revisionCard(ctx, r, false, undoable.has(r.revision_id), quality.get(r.revision_id)))
        : el('p', { class: 'empty', text: 'No applied revisions.' }),
      // Routing memory comes with every review of a busy tool: counted here, listed on each tool's history.
      ...(remembered
        ? [
            el('p', {
              class: 'meta',
              text: `Routing memory: ${count(remembered, 'revision', 'revisions')} applied (wordings routing reads, never the model); see each tool.`,
            }),
          ]
        : []),
    ),
  );
}

/** `approved_by` of what `auto_apply` applied (docs/learning.md). */
const AUTO_APPLY_BY = 'whetstone:tool_learning';

/**
 * Everything `auto_apply` applied, listed apart for a person to look at after the fact
 * (docs/security.md "auto_apply"): the lines it put in front of the model, newest first.
 */
function autoAppliedSection(revisions: readonly Revision[]): HTMLElement {
  const rows = revisions.flatMap((r) =>
    addedLines(r).map(([kind, text]) =>
      el(
        'tr',
        { 'data-auto-applied': r.revision_id },
        el('td', { text: r.tool }),
        el('td', { text: when(r.applied_at) }),
        el('td', { text: kind }),
        el('td', { text }),
      ),
    ),
  );
  return el(
    'section',
    { 'aria-labelledby': 'inbox-auto' },
    el('h2', { id: 'inbox-auto', text: `Applied by auto_apply, for a look (${revisions.length})` }),
    rows.length
      ? el(
          'table',
          { class: 'auto-applied' },
          el(
            'tr',
            {},
            ['Tool', 'Applied', 'Kind', 'Line'].map((h) => el('th', { text: h })),
          ),
          rows,
        )
      : el('p', { class: 'empty', text: 'Nothing was applied without a person.' }),
  );
}

function reviewControls(ctx: ViewContext): HTMLElement {
  const id = uid('dry');
  const dry = el('input', { type: 'checkbox', id });
  const out = el('div', { class: 'review-result' });
  const button = el('button', {
    type: 'button',
    class: 'primary',
    text: 'Run review now',
    onclick: () =>
      void act(button, async () => {
        const review = await api<Review>('POST', agentPath(ctx.agent, 'reviews'), { dry_run: dry.checked });
        const summary = reviewText(review);
        if (review.dry_run) {
          out.replaceChildren(reviewDetails(review));
          announce(`Dry run (nothing stored): ${summary}`);
        } else {
          await ctx.reload();
          announce(`Review done: ${summary}`);
        }
      }),
  });
  return el(
    'section',
    { class: 'card', 'aria-label': 'Review' },
    el(
      'div',
      { class: 'inline' },
      button,
      dry,
      el('label', { for: id, text: 'Dry run: show what it would propose, store nothing' }),
    ),
    out,
  );
}

function reviewText(review: Review): string {
  return `${review.dry_run ? 'would propose ' : 'proposed '}${count(review.revisions.length, 'revision', 'revisions')}, ${review.refused.length} refused, ${review.skipped.length} skipped, ${count(review.model_calls, 'model call', 'model calls')}.`;
}

function reviewDetails(review: Review): HTMLElement {
  return el(
    'div',
    {},
    el('h3', { text: 'Dry run result' }),
    review.revisions.length
      ? review.revisions.map((r) => el('div', { class: 'card' }, el('h4', { text: r.tool }), changeList(r)))
      : el('p', { class: 'empty', text: 'No revision would be proposed.' }),
    review.refused.length ? refusedTable(review.refused) : null,
    review.skipped.length
      ? el(
          'div',
          {},
          el('h4', { text: 'Skipped' }),
          el(
            'ul',
            { class: 'lines' },
            review.skipped.map((s) => el('li', {}, el('strong', { text: s.tool }), `: ${s.reason}`)),
          ),
        )
      : null,
  );
}

function revisionCard(
  ctx: ViewContext,
  rev: Revision,
  isProposed: boolean,
  canUndo: boolean,
  quality: RevisionQuality | undefined,
): HTMLElement {
  const heading = uid('rev');
  const stamp = isProposed
    ? `proposed ${when(rev.created_at)}`
    : `applied ${when(rev.applied_at)} by ${rev.approved_by || '—'}`;
  const preview = el('div', { class: 'preview' }, el('p', { class: 'empty', text: 'Loading the model view…' }));
  const card = el(
    'article',
    { class: 'card revision', 'aria-labelledby': heading, 'data-revision': rev.revision_id, 'data-tool': rev.tool },
    el(
      'header',
      {},
      el('h3', { id: heading }, `${rev.tool} `, el('span', { class: `badge ${rev.status}`, text: rev.status })),
      el('span', { class: 'meta', text: `${stamp} · ${rev.revision_id}` }),
    ),
    el('h4', { text: 'What it changes' }),
    changeList(rev),
    heldList(rev),
    quality ? beforeAfter(rev.tool, quality) : null,
    isProposed ? [el('h4', { text: 'Model view: before → after' }), preview] : null,
    rev.ranks.length ? ranksTable(rev.ranks) : null,
    rev.displaced.length
      ? el('p', {
          class: 'meta',
          text: `Example requests withdrawn: they pushed another tool out for ${rev.displaced.map((d) => `"${d.request}" (${d.tool})`).join(', ')}`,
        })
      : null,
    rev.refused.length ? refusedTable(rev.refused) : null,
    evidenceDetails(rev.evidence),
    isProposed ? proposedActions(ctx, rev) : canUndo ? undoAction(ctx, rev) : null,
  );
  if (isProposed) void loadPreview(ctx, rev, preview);
  return card;
}

/** What routing did for the tool's requests before the apply and since (GET …/quality). */
export function beforeAfter(tool: string, q: RevisionQuality): HTMLElement {
  return el(
    'p',
    { class: 'meta', 'data-before-after': q.revision_id },
    `Routing offered ${tool} for the requests it finally served: ${hitsOf(q.before)} in the ${QUALITY_DAYS} days before the apply, ${hitsOf(q.after)} ${q.undone_at ? 'until the undo' : 'since'}.`,
  );
}

/** Lines held back from `auto_apply`, with why: a person reads them before applying. */
function heldList(rev: Revision): HTMLElement | null {
  if (!rev.held?.length) return null;
  return el(
    'div',
    { class: 'held', 'data-held': rev.revision_id },
    el('h4', { text: `Held for a person (${rev.held.length}): auto_apply did not apply this revision` }),
    el(
      'ul',
      { class: 'lines' },
      rev.held.map((h) => el('li', {}, el('strong', { text: `${h.kind}: ` }), h.text, ` — ${h.reasons.join('; ')}`)),
    ),
  );
}

function changeList(rev: Revision): HTMLElement {
  const items = addedLines(rev);
  if (items.length === 0) return el('p', { class: 'empty', text: 'No change left after the checks.' });
  return el(
    'ul',
    { class: 'lines changes' },
    items.map(([kind, text]) => el('li', {}, el('strong', { text: `${kind}: ` }), text)),
  );
}

function addedLines(rev: Revision): [string, string][] {
  return [
    ...rev.notes_added.map((t): [string, string] => ['Usage note', t]),
    ...rev.avoid_added.map((t): [string, string] => ['"Not for" line', t]),
    ...(rev.call_example
      ? [['Example call', rev.call_example.replace(/^Example call: /, '')] as [string, string]]
      : []),
    ...rev.queries_added.map((t): [string, string] => ['Example request', t]),
    ...rev.queries_withdrawn.map((t): [string, string] => ['Withdrawn example request', t]),
    // Routing memory: wordings routing reads for the tool, never the model.
    ...(rev.memory?.added ?? []).map((t): [string, string] => ['Remembered wording', t]),
    ...(rev.memory?.withdrawn ?? []).map((t): [string, string] => ['Withdrawn wording', t]),
  ];
}

async function loadPreview(ctx: ViewContext, rev: Revision, slot: HTMLElement): Promise<void> {
  try {
    const p = await api<Preview>('POST', agentPath(ctx.agent, 'tools', rev.tool, 'preview'), rev);
    slot.replaceChildren(
      diffView(
        p.before.function.description,
        p.after.function.description,
        `Model view of ${rev.tool}, before and after`,
      ),
    );
  } catch (err) {
    slot.replaceChildren(el('p', { class: 'empty', text: `No preview: ${describeFailure(err)}` }));
  }
}

function ranksTable(ranks: Revision['ranks']): HTMLElement {
  const rank = (r: number | null): string => (r === null ? 'not offered' : `#${r}`);
  return el(
    'div',
    {},
    el('h4', { text: 'Ranks of the missed requests' }),
    el(
      'table',
      { class: 'ranks' },
      el('tr', {}, el('th', { text: 'Request' }), el('th', { text: 'Before' }), el('th', { text: 'After' })),
      ranks.map((r) =>
        el(
          'tr',
          {},
          el('td', { text: r.request }),
          el('td', { text: rank(r.before) }),
          el('td', { text: rank(r.after) }),
        ),
      ),
    ),
  );
}

function refusedTable(refused: Revision['refused']): HTMLElement {
  return el(
    'div',
    {},
    el('h4', { text: `Refused by the checks (${refused.length})` }),
    el(
      'table',
      { class: 'refused' },
      el(
        'tr',
        {},
        el('th', { text: 'Kind' }),
        el('th', { text: 'Proposed text' }),
        el('th', { text: 'Reason' }),
        el('th', { text: 'Why' }),
      ),
      refused.map((r) =>
        el(
          'tr',
          {},
          el('td', { text: r.kind }),
          el('td', { text: r.text }),
          el('td', {}, el('code', { text: r.reason })),
          el('td', { text: r.detail }),
        ),
      ),
    ),
  );
}

function evidenceDetails(evidence: Evidence[]): HTMLElement {
  const groups = EVIDENCE_GROUPS.map((g) => ({ ...g, items: evidence.filter((e) => e.kind === g.kind) })).filter(
    (g) => g.items.length,
  );
  const counts = groups.map((g) => count(g.items.length, g.one, g.many)).join(', ');
  return el(
    'details',
    { class: 'evidence' },
    el('summary', { text: `Evidence (${evidence.length})${counts ? `: ${counts}` : ''}` }),
    groups.map((g) => el('div', {}, el('h4', { text: g.heading }), evidenceTable(g.kind, g.items))),
  );
}

function evidenceTable(kind: EvidenceKind, items: Evidence[]): HTMLElement {
  const calls = kind === 'failed_call' || kind === 'successful_call';
  const head = calls
    ? ['When', kind === 'failed_call' ? 'Error' : 'Request', 'Arguments', 'Call']
    : ['When', 'Request', 'How', 'Served by', 'Turn'];
  const row = (e: Evidence): string[] =>
    calls
      ? [when(e.at), e.text, e.arguments.join(', ') || '—', e.call_id || '—']
      : [when(e.at), e.text, e.how || '—', e.served_by || '—', e.turn_id || '—'];
  return el(
    'table',
    {},
    el(
      'tr',
      {},
      head.map((h) => el('th', { text: h })),
    ),
    items.map((e) =>
      el(
        'tr',
        {},
        row(e).map((v) => el('td', { text: v })),
      ),
    ),
  );
}

/** The approver's name, or null after pointing the user at the field (approved_by is required). */
function approver(): string | null {
  const name = session.approvedBy.trim();
  if (name) return name;
  alertError('Type your name in "Approve as" first: it is recorded as approved_by.');
  document.querySelector<HTMLInputElement>('#session input')?.focus();
  return null;
}

function proposedActions(ctx: ViewContext, rev: Revision): HTMLElement {
  const reasonId = uid('reason');
  const reason = el('input', { id: reasonId, type: 'text', maxlength: 1000 });
  const apply = el('button', {
    type: 'button',
    class: 'primary',
    text: 'Apply',
    'aria-label': `Apply revision to ${rev.tool}`,
    onclick: () => {
      const by = approver();
      if (!by) return;
      void act(apply, async () => {
        const done = await api<Revision>('POST', agentPath(ctx.agent, 'revisions', rev.revision_id, 'apply'), {
          approved_by: by,
        });
        const withdrawn = done.queries_withdrawn.length
          ? ` (${done.queries_withdrawn.length} example requests withdrawn: they displaced another tool)`
          : '';
        await ctx.reload();
        announce(`Applied the revision of ${rev.tool}${withdrawn}.`);
      });
    },
  });
  const dismiss = el('button', {
    type: 'button',
    class: 'danger',
    text: 'Dismiss',
    'aria-label': `Dismiss revision of ${rev.tool}`,
    onclick: () => {
      const by = approver();
      if (!by) return;
      void act(dismiss, async () => {
        const why = reason.value.trim();
        const body = why ? { approved_by: by, reason: why } : { approved_by: by };
        await api('POST', agentPath(ctx.agent, 'revisions', rev.revision_id, 'dismiss'), body);
        await ctx.reload();
        announce(`Dismissed the revision of ${rev.tool}.`);
      });
    },
  });
  return el(
    'div',
    { class: 'actions' },
    apply,
    el('div', { class: 'field' }, el('label', { for: reasonId, text: 'Reason for dismissing (optional)' }), reason),
    dismiss,
  );
}

function undoAction(ctx: ViewContext, rev: Revision): HTMLElement {
  const undo = el('button', {
    type: 'button',
    text: 'Undo',
    'aria-label': `Undo the last revision of ${rev.tool}`,
    onclick: () => {
      const by = approver();
      if (!by) return;
      void act(undo, async () => {
        await api('POST', agentPath(ctx.agent, 'tools', rev.tool, 'undo'), { approved_by: by });
        await ctx.reload();
        announce(`Undid the revision of ${rev.tool}: its model view is restored.`);
      });
    },
  });
  return el(
    'div',
    { class: 'actions' },
    undo,
    el('span', { class: 'meta', text: 'Undo takes back the newest applied revision of this tool.' }),
  );
}
