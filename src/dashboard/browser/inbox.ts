/**
 * The agent's inbox. Proposed revisions with their evidence, ranks before/after, what the code
 * refused and why, and the model view before → after as a diff (rendered by the server's own
 * renderer through `POST …/tools/:tool/preview`). An approver edits each proposed line in place
 * (reword it, or untick Keep to drop it) and the diff follows the edit as they type; a refused edit's
 * reason shows under the line it names. Apply and Dismiss with `approved_by`, one revision or the
 * selected ones at once (each revision's outcome listed); filters by tool and kind of line; applied
 * revisions with Undo; "Run review now" with a dry-run toggle. Try replays the revision, with the
 * lines as the approver edited them, on the requests it rests on and the tool's recent served ones
 * (`POST …/revisions/:id/try`, which writes nothing): ranks and the model's picks before → after.
 * Buttons follow the token's rights
 * (`GET …/whoami`): a read-only key sees no action (docs/api.md, docs/dashboard.md).
 */
import type { BulkAnswer, Preview, Review, Revision, RevisionsAnswer, TryAnswer, ViewContext } from './api-types.ts';
import {
  act,
  agentPath,
  alertError,
  announce,
  ApiFailure,
  api,
  can,
  count,
  describeFailure,
  diffView,
  el,
  fill,
  headRow,
  hitsOf,
  QUALITY_DAYS,
  type Attrs,
  type RevisionQuality,
  revisionQuality,
  session,
  textRow,
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
  // The outcome of the last bulk decision, shown once after the reload it caused.
  const bulk = lastBulk?.agent === ctx.agent ? lastBulk : null;
  lastBulk = null;
  fill(
    panel,
    can(ctx, 'operator') ? reviewControls(ctx) : null,
    autoAppliedSection(applied.revisions.filter((r) => r.approved_by === AUTO_APPLY_BY)),
    el(
      'section',
      { 'aria-labelledby': 'inbox-proposed' },
      el('h2', { id: 'inbox-proposed', text: `Proposed revisions (${proposed.revisions.length})` }),
      cards.length ? filters(proposed.revisions, cards) : null,
      cards.length && can(ctx, 'decide') ? bulkControls(ctx, cards) : null,
      bulk ? bulkResults(bulk) : null,
      cards.length
        ? cards
        : el('p', { class: 'empty', text: 'Nothing waiting for approval. Run a review, or wait for the cron review.' }),
    ),
    el(
      'section',
      { 'aria-labelledby': 'inbox-applied' },
      el('h2', { id: 'inbox-applied', text: `Applied revisions (${lines.length})` }),
      lines.length
        ? lines.map((r) =>
            revisionCard(ctx, r, false, can(ctx, 'decide') && undoable.has(r.revision_id), quality.get(r.revision_id)),
          )
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
  const deciding = isProposed && can(ctx, 'decide');
  // An approver edits the lines of a proposed revision of learned lines in place; routing memory is taken whole.
  const editor = deciding && rev.kind !== 'memory' ? lineEditor(rev, () => schedulePreview()) : null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let shown = 0;
  const refresh = (): void => {
    shown += 1;
    const mine = shown;
    void loadPreview(ctx, rev, editor ? editor.lines() : rev, preview, () => mine === shown);
  };
  // Debounced: the diff follows the typing without a request per key.
  const schedulePreview = (): void => {
    clearTimeout(timer);
    timer = setTimeout(refresh, PREVIEW_DELAY_MS);
  };
  const card = el(
    'article',
    {
      class: 'card revision',
      'aria-labelledby': heading,
      'data-revision': rev.revision_id,
      'data-tool': rev.tool,
      'data-kinds': kindsOf(rev).join(' '),
    },
    el(
      'header',
      {},
      deciding
        ? el('input', {
            type: 'checkbox',
            class: 'select',
            'data-select': rev.revision_id,
            'aria-label': `Select the revision of ${rev.tool} (${rev.revision_id})`,
          })
        : null,
      el('h3', { id: heading }, `${rev.tool} `, el('span', { class: `badge ${rev.status}`, text: rev.status })),
      el('span', { class: 'meta', text: `${stamp} · ${rev.revision_id}` }),
    ),
    el('h4', { text: editor ? 'What it changes (edit a line, or untick Keep to drop it)' : 'What it changes' }),
    editor ? editor.node : changeList(rev),
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
    deciding ? tryPanel(ctx, rev, editor) : null,
    deciding ? proposedActions(ctx, rev, editor) : canUndo ? undoAction(ctx, rev) : null,
  );
  if (isProposed) refresh();
  return card;
}

/** How long the preview waits after the last keystroke before asking for the model view. */
const PREVIEW_DELAY_MS = 300;

type LineField = 'notes_added' | 'avoid_added' | 'queries_added' | 'call_example';

/** The kinds of line, as the filter and the editor name them. */
const LINE_KINDS: { kind: string; field: LineField | null; label: string }[] = [
  { kind: 'note', field: 'notes_added', label: 'Usage note' },
  { kind: 'avoid', field: 'avoid_added', label: '"Not for" line' },
  { kind: 'request', field: 'queries_added', label: 'Example request' },
  { kind: 'call_example', field: 'call_example', label: 'Example call' },
  { kind: 'memory', field: null, label: 'Routing memory' },
];

/** The kinds of line a revision proposes. */
function kindsOf(rev: Revision): string[] {
  return LINE_KINDS.filter(({ field }) =>
    field === null
      ? rev.kind === 'memory'
      : field === 'call_example'
        ? rev.call_example !== null
        : rev[field].length > 0,
  ).map((k) => k.kind);
}

interface EditableLines {
  notes_added: string[];
  avoid_added: string[];
  queries_added: string[];
  call_example: string | null;
}

interface LineRow {
  field: LineField;
  box: HTMLTextAreaElement;
  keep: HTMLInputElement;
  error: HTMLElement;
  node: HTMLElement;
}

interface LineEditor {
  node: HTMLElement;
  /** The lines as the approver has them now: kept lines, as typed. */
  lines(): EditableLines;
  /** The edit to send with the apply, or null when every line is kept as proposed. */
  edit(): Partial<EditableLines> | null;
  /** Shows a refusal under the line it names (field and place among the kept lines); false when none matches. */
  refuse(field: string, index: number, message: string): boolean;
  clear(): void;
}

/** Each proposed line in a text box with a Keep box; `changed` runs on every edit. */
function lineEditor(rev: Revision, changed: () => void): LineEditor {
  const rows: LineRow[] = [];
  for (const { field, label } of LINE_KINDS) {
    if (field === null) continue;
    const texts = field === 'call_example' ? (rev.call_example === null ? [] : [rev.call_example]) : rev[field];
    texts.forEach((text, i) => {
      const id = uid('line');
      const name = field === 'call_example' ? label : `${label} ${i + 1}`;
      const error = el('p', { class: 'line-error', id: `${id}-error`, 'data-line-error': `${field}.${i}` });
      const box = el('textarea', {
        id,
        rows: 2,
        spellcheck: 'true',
        'data-line': `${field}.${i}`,
        'aria-describedby': `${id}-error`,
        text,
      });
      const keep = el('input', { type: 'checkbox', checked: true, id: `${id}-keep` });
      const node = el(
        'div',
        { class: 'line-edit' },
        el('label', { for: id, text: name }),
        el('span', { class: 'inline' }, keep, el('label', { for: `${id}-keep`, text: `Keep ${name.toLowerCase()}` })),
        box,
        el('span', {}),
        error,
      );
      const row = { field, box, keep, error, node };
      box.addEventListener('input', () => {
        clearRow(row);
        changed();
      });
      keep.addEventListener('change', () => {
        clearRow(row);
        node.classList.toggle('dropped', !keep.checked);
        box.disabled = !keep.checked;
        changed();
      });
      rows.push(row);
    });
  }
  const clearRow = (row: LineRow): void => {
    row.error.textContent = '';
    row.box.removeAttribute('aria-invalid');
  };
  const kept = (field: LineField): LineRow[] => rows.filter((r) => r.field === field && r.keep.checked);
  const lines = (): EditableLines => ({
    notes_added: kept('notes_added').map((r) => r.box.value),
    avoid_added: kept('avoid_added').map((r) => r.box.value),
    queries_added: kept('queries_added').map((r) => r.box.value),
    call_example: kept('call_example')[0]?.box.value ?? null,
  });
  return {
    node: rows.length
      ? el(
          'div',
          { class: 'lines-editor' },
          rows.map((r) => r.node),
        )
      : el('p', { class: 'empty', text: 'No change left after the checks.' }),
    lines,
    edit: () => {
      const now = lines();
      const edit: Partial<EditableLines> = {};
      for (const field of ['notes_added', 'avoid_added', 'queries_added'] as const) {
        if (JSON.stringify(now[field]) !== JSON.stringify(rev[field])) edit[field] = now[field];
      }
      if (now.call_example !== rev.call_example) edit.call_example = now.call_example;
      return Object.keys(edit).length ? edit : null;
    },
    refuse: (field, index, message) => {
      const row = kept(field as LineField)[index];
      if (!row) return false;
      row.error.textContent = message;
      row.box.setAttribute('aria-invalid', 'true');
      row.box.focus();
      return true;
    },
    clear: () => {
      for (const r of rows) clearRow(r);
    },
  };
}

/** Filters the proposed cards by tool and by kind of line (the cards stay; unmatched ones are hidden). */
function filters(revisions: readonly Revision[], cards: HTMLElement[]): HTMLElement {
  const toolId = uid('filter-tool');
  const kindId = uid('filter-kind');
  const tools = [...new Set(revisions.map((r) => r.tool))].sort();
  const kinds = LINE_KINDS.filter((k) => revisions.some((r) => kindsOf(r).includes(k.kind)));
  const tool = el(
    'select',
    { id: toolId },
    el('option', { value: '', text: 'All tools' }),
    tools.map((t) => el('option', { value: t, text: t })),
  );
  const kind = el(
    'select',
    { id: kindId },
    el('option', { value: '', text: 'All kinds' }),
    kinds.map((k) => el('option', { value: k.kind, text: k.label })),
  );
  const shown = el('span', { class: 'meta', 'aria-live': 'polite' });
  const apply = (): void => {
    let n = 0;
    for (const card of cards) {
      const match =
        (!tool.value || card.dataset.tool === tool.value) &&
        (!kind.value || (card.dataset.kinds ?? '').split(' ').includes(kind.value));
      card.hidden = !match;
      // A hidden revision is never decided by a bulk action.
      if (!match) for (const box of card.querySelectorAll<HTMLInputElement>('input[data-select]')) box.checked = false;
      if (match) n += 1;
    }
    shown.textContent = n === cards.length ? '' : `Showing ${n} of ${cards.length}.`;
  };
  tool.addEventListener('change', apply);
  kind.addEventListener('change', apply);
  return el(
    'div',
    { class: 'filters', role: 'group', 'aria-label': 'Filter proposed revisions' },
    el('div', { class: 'field' }, el('label', { for: toolId, text: 'Tool' }), tool),
    el('div', { class: 'field' }, el('label', { for: kindId, text: 'Kind of line' }), kind),
    shown,
  );
}

/** The last bulk decision of an agent, shown after the reload it caused. */
let lastBulk: { agent: string; action: 'apply' | 'dismiss'; answer: BulkAnswer; tools: Map<string, string> } | null =
  null;

/** Apply or dismiss the selected revisions in one request; each is decided on its own. */
function bulkControls(ctx: ViewContext, cards: HTMLElement[]): HTMLElement {
  const selected = (): HTMLElement[] =>
    cards.filter((c) => !c.hidden && c.querySelector<HTMLInputElement>('input[data-select]')?.checked);
  const decide = (action: 'apply' | 'dismiss', button: HTMLButtonElement): void => {
    const chosen = selected();
    if (!chosen.length) {
      alertError('Select the revisions to decide first.');
      return;
    }
    const by = approver();
    if (!by) return;
    void act(button, async () => {
      const answer = await api<BulkAnswer>('POST', agentPath(ctx.agent, 'revisions', 'bulk'), {
        action,
        approved_by: by,
        revision_ids: chosen.map((c) => c.dataset.revision ?? ''),
      });
      lastBulk = {
        agent: ctx.agent,
        action,
        answer,
        tools: new Map(chosen.map((c) => [c.dataset.revision ?? '', c.dataset.tool ?? ''])),
      };
      await ctx.reload();
      const verb = action === 'apply' ? 'applied' : 'dismissed';
      announce(`${count(answer.decided, 'revision', 'revisions')} ${verb}, ${answer.failed} not.`);
    });
  };
  const apply = el('button', {
    type: 'button',
    class: 'primary',
    text: 'Apply selected',
    onclick: () => decide('apply', apply),
  });
  const dismiss = el('button', {
    type: 'button',
    class: 'danger',
    text: 'Dismiss selected',
    onclick: () => decide('dismiss', dismiss),
  });
  const all = el('button', {
    type: 'button',
    text: 'Select all shown',
    onclick: () => {
      for (const c of cards) {
        const box = c.querySelector<HTMLInputElement>('input[data-select]');
        if (box && !c.hidden) box.checked = true;
      }
    },
  });
  return el(
    'div',
    { class: 'bulk', role: 'group', 'aria-label': 'Decide the selected revisions' },
    all,
    apply,
    dismiss,
    el('span', { class: 'meta', text: 'Each selected revision is applied as proposed or dismissed on its own.' }),
  );
}

/** Each revision of the last bulk decision with its outcome: decided, or why not. */
function bulkResults(bulk: NonNullable<typeof lastBulk>): HTMLElement {
  const verb = bulk.action === 'apply' ? 'applied' : 'dismissed';
  return el(
    'div',
    { class: 'card bulk-results', 'aria-label': 'Outcome of the bulk decision' },
    el('h3', { text: `Last bulk decision: ${bulk.answer.decided} ${verb}, ${bulk.answer.failed} not` }),
    el(
      'ul',
      { class: 'lines' },
      bulk.answer.results.map((r) =>
        el(
          'li',
          { 'data-bulk-result': r.revision_id, class: r.ok ? 'ok' : 'failed' },
          el('strong', { text: `${bulk.tools.get(r.revision_id) || r.revision_id}: ` }),
          r.ok ? (r.status ?? verb) : `not ${verb}: ${r.error?.message ?? 'refused'}`,
          el('span', { class: 'meta', text: ` (${r.revision_id})` }),
        ),
      ),
    ),
  );
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

/** The model view before → after for `lines`; `current` says whether this answer is still the newest asked. */
async function loadPreview(
  ctx: ViewContext,
  rev: Revision,
  lines: EditableLines,
  slot: HTMLElement,
  current: () => boolean = () => true,
): Promise<void> {
  const body = {
    notes_added: lines.notes_added,
    avoid_added: lines.avoid_added,
    queries_added: lines.queries_added,
    call_example: lines.call_example,
  };
  try {
    const p = await api<Preview>('POST', agentPath(ctx.agent, 'tools', rev.tool, 'preview'), body);
    if (!current()) return;
    slot.replaceChildren(
      diffView(
        p.before.function.description,
        p.after.function.description,
        `Model view of ${rev.tool}, before and after`,
      ),
    );
  } catch (err) {
    if (!current()) return;
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
      headRow(['Kind', 'Proposed text', 'Reason', 'Why']),
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
    headRow(head),
    items.map((e) => textRow(row(e))),
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

/** A button of a decision on a revision: it asks for the approver's name, then decides as them. */
function decisionButton(attrs: Attrs, decide: (by: string, button: HTMLButtonElement) => void): HTMLButtonElement {
  const button = el('button', {
    type: 'button',
    ...attrs,
    onclick: () => {
      const by = approver();
      if (by) decide(by, button);
    },
  });
  return button;
}

/** A refused edit (400): its reason under the line it names, from the check's details or the schema's path. */
function showRefusal(editor: LineEditor, err: ApiFailure): boolean {
  const d = err.details[0] as
    | { field?: string; index?: number; check?: string; detail?: string; path?: (string | number)[]; message?: string }
    | undefined;
  if (!d) return false;
  if (typeof d.field === 'string' && typeof d.index === 'number') {
    return editor.refuse(d.field, d.index, `Refused by the ${d.check} check: ${d.detail}`);
  }
  const [root, field, index] = d.path ?? [];
  if (root === 'edit' && typeof field === 'string') {
    return editor.refuse(field, typeof index === 'number' ? index : 0, d.message ?? err.message);
  }
  return false;
}

/**
 * POSTs `action` of the revision with `body` and the approver's edited lines (when any). A 400 that
 * names a line is also shown on that line: the alert says it too, but the line is where it is fixed.
 */
async function postEdited<T>(
  ctx: ViewContext,
  rev: Revision,
  action: 'apply' | 'try',
  body: Record<string, unknown>,
  edit: Partial<EditableLines> | null,
  editor: LineEditor | null,
): Promise<T> {
  try {
    return await api<T>(
      'POST',
      agentPath(ctx.agent, 'revisions', rev.revision_id, action),
      edit ? { ...body, edit } : body,
    );
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 400 && editor) showRefusal(editor, err);
    throw err;
  }
}

function proposedActions(ctx: ViewContext, rev: Revision, editor: LineEditor | null): HTMLElement {
  const reasonId = uid('reason');
  const reason = el('input', { id: reasonId, type: 'text', maxlength: 1000 });
  const apply = decisionButton(
    { class: 'primary', text: 'Apply', 'aria-label': `Apply revision to ${rev.tool}` },
    (by, button) => {
      const edit = editor?.edit() ?? null;
      editor?.clear();
      void act(button, async () => {
        const done = await postEdited<Revision>(ctx, rev, 'apply', { approved_by: by }, edit, editor);
        const withdrawn = done.queries_withdrawn.length
          ? ` (${done.queries_withdrawn.length} example requests withdrawn: they displaced another tool)`
          : '';
        await ctx.reload();
        announce(`Applied the revision of ${rev.tool}${edit ? ' with your edits' : ''}${withdrawn}.`);
      });
    },
  );
  const dismiss = decisionButton(
    { class: 'danger', text: 'Dismiss', 'aria-label': `Dismiss revision of ${rev.tool}` },
    (by, button) => {
      void act(button, async () => {
        const why = reason.value.trim();
        const body = why ? { approved_by: by, reason: why } : { approved_by: by };
        await api('POST', agentPath(ctx.agent, 'revisions', rev.revision_id, 'dismiss'), body);
        await ctx.reload();
        announce(`Dismissed the revision of ${rev.tool}.`);
      });
    },
  );
  return el(
    'div',
    { class: 'actions' },
    apply,
    el('div', { class: 'field' }, el('label', { for: reasonId, text: 'Reason for dismissing (optional)' }), reason),
    dismiss,
  );
}

/**
 * Try: the revision, with the lines as edited now, replayed on real requests (`POST …/try`, which
 * writes nothing). The answer is a table: routing rank of the tool that should serve each request,
 * and the model's pick with its arguments, before → after; what a tool's test endpoint answered.
 */
function tryPanel(ctx: ViewContext, rev: Revision, editor: LineEditor | null): HTMLElement {
  const result = el('div', { class: 'try-result', 'aria-live': 'polite' });
  const button = el('button', {
    type: 'button',
    text: 'Try',
    'aria-label': `Try the revision of ${rev.tool} on recent requests`,
    onclick: () => {
      const edit = editor?.edit() ?? null;
      editor?.clear();
      result.replaceChildren(el('p', { class: 'empty', text: 'Replaying the requests…' }));
      void act(button, async () => {
        let answer: TryAnswer;
        try {
          answer = await postEdited<TryAnswer>(ctx, rev, 'try', {}, edit, editor);
        } catch (err) {
          result.replaceChildren();
          throw err;
        }
        result.replaceChildren(tryTable(answer));
        announce(`Tried the revision of ${rev.tool}${answer.edited ? ' with your edits' : ''}: nothing was written.`);
      });
    },
  });
  return el(
    'div',
    { class: 'try' },
    el(
      'div',
      { class: 'actions' },
      button,
      el('span', {
        class: 'meta',
        text: 'Replays the requests this rests on and recent served ones, with your edits; writes nothing.',
      }),
    ),
    result,
  );
}

function tryTable(answer: TryAnswer): HTMLElement {
  const rank = (r: number | null): string => (r === null ? 'not ranked' : `#${r}`);
  type Pick = NonNullable<TryAnswer['requests'][number]['pick']>['before'];
  const pick = (p: Pick): HTMLElement =>
    el(
      'td',
      {},
      p.tool === null ? el('em', { text: 'no tool' }) : el('code', { text: p.tool }),
      p.tool === null ? null : el('div', { class: 'meta', text: JSON.stringify(p.arguments) }),
      p.test === null
        ? null
        : el('div', {
            class: 'meta',
            text:
              p.test.error === undefined ? `test: ${JSON.stringify(p.test.result)}` : `test failed: ${p.test.error}`,
          }),
    );
  const picks = answer.model.picks;
  return el(
    'div',
    {},
    el('h4', { text: `Tried on ${answer.requests.length} requests${answer.edited ? ' (with your edits)' : ''}` }),
    answer.model.note ? el('p', { class: 'meta', text: answer.model.note }) : null,
    answer.requests.length
      ? el(
          'table',
          { class: 'try-table' },
          el(
            'tr',
            {},
            el('th', { text: 'Request' }),
            el('th', { text: 'Should serve' }),
            el('th', { text: 'Rank before → after' }),
            picks ? el('th', { text: 'Model picks before' }) : null,
            picks ? el('th', { text: 'Model picks after' }) : null,
          ),
          answer.requests.map((r) =>
            el(
              'tr',
              { 'data-request': r.request },
              el(
                'td',
                {},
                r.request,
                el('div', { class: 'meta', text: r.source === 'served' ? 'served recently' : (r.evidence_kind ?? '') }),
              ),
              el('td', {}, el('code', { text: r.expected })),
              el('td', { text: `${rank(r.rank.before)} → ${rank(r.rank.after)}` }),
              picks ? (r.pick ? pick(r.pick.before) : el('td', { text: '—' })) : null,
              picks ? (r.pick ? pick(r.pick.after) : el('td', { text: '—' })) : null,
            ),
          ),
        )
      : null,
  );
}

function undoAction(ctx: ViewContext, rev: Revision): HTMLElement {
  const undo = decisionButton({ text: 'Undo', 'aria-label': `Undo the last revision of ${rev.tool}` }, (by, button) => {
    void act(button, async () => {
      await api('POST', agentPath(ctx.agent, 'tools', rev.tool, 'undo'), { approved_by: by });
      await ctx.reload();
      announce(`Undid the revision of ${rev.tool}: its model view is restored.`);
    });
  });
  return el(
    'div',
    { class: 'actions' },
    undo,
    el('span', { class: 'meta', text: 'Undo takes back the newest applied revision of this tool.' }),
  );
}
