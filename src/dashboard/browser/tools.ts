/**
 * The Tools tab (each tool's model view, examples with their sources, notes, "Not for" lines,
 * example call, versions, full revision history, activity chart), the Usage tab (docs/learning.md
 * flags, unregistered tools with their drafts and a Register button) and the Settings tab
 * (docs/configuration.md, with the API's 400 details shown next to the fields they name).
 */
import type {
  Activity,
  FlagsAnswer,
  RevisionsAnswer,
  Settings,
  ToolRow,
  ToolVersion,
  UnregisteredAnswer,
  UnregisteredTool,
  ViewContext,
} from './api-types.ts';
import {
  act,
  activityChart,
  agentPath,
  alertError,
  ApiFailure,
  announce,
  api,
  can,
  count,
  describeFailure,
  el,
  fill,
  hitsOf,
  type RevisionQuality,
  revisionQuality,
  uid,
  when,
} from './core.ts';

type Flag = FlagsAnswer['flags'][number];
type RevisionRow = RevisionsAnswer['revisions'][number];

export async function renderTools(ctx: ViewContext, panel: HTMLElement): Promise<void> {
  const { tools } = await api<{ tools: ToolRow[] }>('GET', agentPath(ctx.agent, 'tools'));
  fill(
    panel,
    el('h2', { text: `Tools (${tools.length})` }),
    tools.length ? tools.map((t) => toolCard(ctx, t)) : el('p', { class: 'empty', text: 'No tools registered.' }),
  );
}

function toolCard(ctx: ViewContext, t: ToolRow): HTMLElement {
  const routed = t.memory?.length
    ? `; learned ${count(t.memory.length, 'wording', 'wordings')} for routing (e.g. "${t.memory[0]}")`
    : '';
  // Pending wordings are kept, not routed: they wait for requests from more conversations.
  const waiting = t.memory_pending
    ? `; ${count(t.memory_pending, 'wording', 'wordings')} waiting for more conversations`
    : '';
  const learned = `${count(t.notes.length, 'note', 'notes')}, ${count(t.avoid.length, '"Not for" line', '"Not for" lines')}, ${count(t.examples.length, 'example', 'examples')}${routed}${waiting}`;
  const lazy = el('div', {}, el('p', { class: 'empty', text: 'Loading activity, versions and history…' }));
  const card = el(
    'details',
    { class: 'card tool', 'data-tool': t.name },
    el('summary', {}, `${t.name} `, el('span', { class: 'meta', text: `v${t.version} · ${learned}` })),
    el('h4', { text: 'Model view (what the model is shown)' }),
    el('pre', { class: 'model-view' }, t.model_view.function.description),
    t.description !== null
      ? [
          el('h4', { text: "Author's docstring (the description above was augmented)" }),
          el('pre', { text: t.docstring }),
        ]
      : null,
    el(
      'div',
      { class: 'cols' },
      el(
        'div',
        {},
        el('h4', { text: 'Usage notes' }),
        lines(t.notes, 'No usage notes.'),
        el('h4', { text: '"Not for" lines' }),
        lines(t.avoid, 'No "Not for" lines.'),
        el('h4', { text: 'Example call' }),
        t.call_example ? el('pre', { text: t.call_example }) : el('p', { class: 'empty', text: 'None yet.' }),
      ),
      el('div', {}, el('h4', { text: 'Example requests' }), examplesTable(t.examples)),
    ),
    el(
      'details',
      {},
      el('summary', { text: 'Parameters (JSON Schema, as the author wrote it)' }),
      el('pre', { text: JSON.stringify(t.parameters, null, 2) }),
    ),
    lazy,
  );
  let loaded = false;
  card.addEventListener('toggle', () => {
    if (card.open && !loaded) {
      loaded = true;
      void loadToolDetails(ctx, t.name, lazy);
    }
  });
  return card;
}

function lines(items: string[], empty: string): HTMLElement {
  return items.length
    ? el(
        'ul',
        { class: 'lines' },
        items.map((x) => el('li', { text: x })),
      )
    : el('p', { class: 'empty', text: empty });
}

function examplesTable(examples: ToolRow['examples']): HTMLElement {
  if (!examples.length) return el('p', { class: 'empty', text: 'No example requests.' });
  return el(
    'table',
    {},
    el('tr', {}, el('th', { text: 'Request' }), el('th', { text: 'Source' }), el('th', { text: 'Revision' })),
    examples.map((e) =>
      el(
        'tr',
        {},
        el('td', { text: e.text }),
        el('td', {}, el('span', { class: 'badge', text: e.source })),
        el('td', { text: e.revision_id || '—' }),
      ),
    ),
  );
}

async function loadToolDetails(ctx: ViewContext, name: string, slot: HTMLElement): Promise<void> {
  const [activity, versions, history, quality] = await Promise.allSettled([
    api<Activity>('GET', `${agentPath(ctx.agent, 'tools', name, 'activity')}?bucket=day&span=30`),
    api<{ versions: ToolVersion[] }>('GET', agentPath(ctx.agent, 'tools', name, 'versions')),
    api<RevisionsAnswer>('GET', `${agentPath(ctx.agent, 'revisions')}?tool=${encodeURIComponent(name)}`),
    revisionQuality(ctx.agent, name),
  ]);
  const failed = (r: PromiseRejectedResult): HTMLElement =>
    el('p', { class: 'empty', text: `Could not load: ${describeFailure(r.reason)}` });
  fill(
    slot,
    el('h4', { text: 'Activity, last 30 days (UTC)' }),
    activity.status === 'fulfilled'
      ? activityChart(activity.value, `Calls, failed calls and routing offers of ${name} per day`)
      : failed(activity),
    el('h4', { text: 'Revision history' }),
    history.status === 'fulfilled'
      ? historyTable(history.value.revisions, quality.status === 'fulfilled' ? quality.value : new Map())
      : failed(history),
    el('h4', { text: 'Versions' }),
    versions.status === 'fulfilled' ? versionsTable(versions.value.versions) : failed(versions),
  );
}

/**
 * Every revision of the tool; one applied in the last 30 days also shows its hits before the apply
 * and after it (until its undo), from GET …/quality.
 */
function historyTable(revisions: RevisionRow[], quality: Map<string, RevisionQuality>): HTMLElement {
  if (!revisions.length) return el('p', { class: 'empty', text: 'No revisions.' });
  const change = (r: RevisionRow): string =>
    [
      r.notes_added.length && count(r.notes_added.length, 'note', 'notes'),
      r.avoid_added.length && count(r.avoid_added.length, '"Not for" line', '"Not for" lines'),
      r.call_example && 'example call',
      r.queries_added.length && count(r.queries_added.length, 'example request', 'example requests'),
      r.memory?.added.length && `remembered ${count(r.memory.added.length, 'wording', 'wordings')}`,
    ]
      .filter(Boolean)
      .join(', ') || '—';
  return el(
    'table',
    { class: 'history' },
    el(
      'tr',
      {},
      ['Proposed', 'Status', 'Changes', 'Decided', 'By', 'Reason', 'Hits before', 'Hits after', 'Id'].map((h) =>
        el('th', { text: h }),
      ),
    ),
    revisions.map((r) =>
      el(
        'tr',
        { 'data-revision': r.revision_id },
        el('td', { text: when(r.created_at) }),
        el('td', {}, el('span', { class: `badge ${r.status}`, text: r.status })),
        el('td', { text: change(r) }),
        el('td', { text: when(r.applied_at) }),
        el('td', { text: r.approved_by || '—' }),
        el('td', { text: r.dismiss_reason || '—' }),
        hitsCell(quality.get(r.revision_id), 'before'),
        hitsCell(quality.get(r.revision_id), 'after'),
        el('td', {}, el('code', { text: r.revision_id })),
      ),
    ),
  );
}

function hitsCell(q: RevisionQuality | undefined, side: 'before' | 'after'): HTMLElement {
  return el('td', { 'data-hits': side, text: q ? hitsOf(q[side]) : '—' });
}

function versionsTable(versions: ToolVersion[]): HTMLElement {
  return el(
    'table',
    { class: 'versions' },
    el(
      'tr',
      {},
      ['Version', 'Source', 'Written', 'Definition'].map((h) => el('th', { text: h })),
    ),
    versions.map((v) =>
      el(
        'tr',
        {},
        el('td', { text: `v${v.version}` }),
        el('td', {}, el('code', { text: v.source })),
        el('td', { text: when(v.created_at) }),
        el(
          'td',
          {},
          el(
            'details',
            {},
            el('summary', { text: 'show' }),
            el('pre', { text: JSON.stringify(v.definition, null, 2) }),
          ),
        ),
      ),
    ),
  );
}

const FLAG_TEXT: Record<Flag['flag'], (f: Flag) => string> = {
  retrieved_never_called: (f) => `offered in ${f.offered_turns} routed turns, never called`,
  never_retrieved: (f) => `never offered and never called over ${f.routed_turns} routed turns`,
};

export async function renderUsage(ctx: ViewContext, panel: HTMLElement): Promise<void> {
  const [flags, unregistered] = await Promise.all([
    api<FlagsAnswer>('GET', agentPath(ctx.agent, 'flags')),
    api<UnregisteredAnswer>('GET', agentPath(ctx.agent, 'unregistered')),
  ]);
  fill(
    panel,
    el('h2', { text: `Usage flags (${flags.flags.length})` }),
    el('p', { class: 'meta', text: 'For a person to look at: nothing is proposed from a flag.' }),
    flags.flags.length
      ? el(
          'table',
          {},
          el(
            'tr',
            {},
            ['Tool', 'Flag', 'Offered turns', 'Calls', 'Routed turns'].map((h) => el('th', { text: h })),
          ),
          flags.flags.map((f) =>
            el(
              'tr',
              {},
              el('td', { text: f.tool }),
              el('td', { text: FLAG_TEXT[f.flag](f) }),
              el('td', { text: f.offered_turns }),
              el('td', { text: f.calls }),
              el('td', { text: f.routed_turns }),
            ),
          ),
        )
      : el('p', { class: 'empty', text: 'No flags.' }),
    el('h2', { text: `Unregistered tools (${unregistered.tools.length})` }),
    unregistered.tools.length
      ? unregistered.tools.map((u) => unregisteredCard(ctx, u))
      : el('p', { class: 'empty', text: 'Every called tool is registered.' }),
  );
}

/**
 * A draft the learned-line check flagged (docs/security.md "Trace drafts"): its reasons, the draft in
 * an editor, and a Register button that stays disabled until the operator has changed the draft.
 */
function untrustedDraft(ctx: ViewContext, u: UnregisteredTool): HTMLElement[] {
  const original = JSON.stringify(u.draft, null, 2);
  const id = uid('draft');
  const editor = el('textarea', { id, rows: 12, spellcheck: 'false', text: original });
  const note = el('p', { class: 'meta', role: 'status', text: 'Edit the draft to register it.' });
  const register = el('button', {
    type: 'button',
    class: 'primary',
    text: 'Register edited draft',
    disabled: true,
    'aria-label': `Register ${u.name} with the edited draft`,
    onclick: () =>
      void act(register, async () => {
        await api('PUT', agentPath(ctx.agent, 'tools'), { tools: [JSON.parse(editor.value)] });
        await ctx.reload();
        announce(`Registered ${u.name} with the edited draft.`);
      }),
  });
  editor.addEventListener('input', () => {
    let parsed = false;
    try {
      parsed = typeof JSON.parse(editor.value) === 'object';
    } catch {
      parsed = false;
    }
    const edited = editor.value.trim() !== original.trim();
    register.disabled = !(edited && parsed);
    note.textContent = !edited
      ? 'Edit the draft to register it.'
      : parsed
        ? 'Edited: ready to register.'
        : 'The draft is not valid JSON.';
  });
  return [
    el(
      'div',
      { class: 'held', 'data-untrusted': u.name },
      el('h4', { text: 'Untrusted: the check flagged this draft from a trace' }),
      el(
        'ul',
        { class: 'lines' },
        u.untrusted_reasons.map((r) => el('li', { text: r })),
      ),
    ),
    el('label', { for: id, text: `Draft definition of ${u.name} (edit before registering)` }),
    editor,
    note,
    el('div', { class: 'actions' }, register),
  ];
}

function unregisteredCard(ctx: ViewContext, u: UnregisteredTool): HTMLElement {
  const register = el('button', {
    type: 'button',
    class: 'primary',
    text: 'Register',
    'aria-label': `Register ${u.name} with this draft`,
    onclick: () =>
      void act(register, async () => {
        await api('PUT', agentPath(ctx.agent, 'tools'), { tools: [u.draft] });
        await ctx.reload();
        announce(`Registered ${u.name}: its past failures are evidence for the next review.`);
      }),
  });
  return el(
    'article',
    { class: 'card', 'data-unregistered': u.name },
    el(
      'header',
      {},
      el('h3', { text: u.name }),
      el('span', {
        class: 'meta',
        text: `${count(u.call_count, 'call', 'calls')}, ${u.failure_count} failed · last seen ${when(u.last_seen_at)}`,
      }),
    ),
    el(
      'h4',
      {},
      'Draft definition ',
      el('span', {
        class: 'badge',
        text: u.definition_source === 'metadata' ? 'from a trace' : 'inferred from the calls',
      }),
    ),
    u.untrusted && can(ctx, 'operator')
      ? untrustedDraft(ctx, u)
      : [
          el('pre', { text: JSON.stringify(u.draft, null, 2) }),
          can(ctx, 'operator') ? el('div', { class: 'actions' }, register) : null,
        ],
  );
}

const SETTING_HINTS: Partial<Record<keyof Settings, string>> = {
  min_calls: 'calls before a tool is reviewed',
  min_failures: 'failed calls a usage note rests on',
  min_misses: 'missed requests an example request rests on',
  min_confusions: 'confused requests a "Not for" line rests on',
  max_notes: 'usage notes per tool',
  max_avoid: '"Not for" lines per tool',
  max_queries: 'example requests per tool',
  max_new_queries: 'example requests one review adds',
  max_calls_per_tool: 'recent calls a review reads per tool',
  max_tools: 'tools per review pass',
  min_offers: 'routed offers before "retrieved, never called"',
  min_turns: 'routed turns before "never retrieved"',
  show_learned_examples: 'show learned example requests to the model',
  top_k: 'tools /route offers',
  stable_tool_list_tokens: 'send every tool when the toolbox is smaller (0 = always route)',
  review_schedule: '"off" or "*/N" minutes',
  auto_apply: 'apply revisions without approval',
  max_registered_tools: 'tools this agent may hold',
  model_calls_per_hour: 'model calls an hour: reviews, dry runs and augmentation together',
  memory_bytes: 'bytes of served wordings routing remembers per tool, at most its share of 10,000 KiB (0 = off)',
  memory_auto_apply: 'apply routing memory without approval',
  hit_rate_drop_share:
    'a day whose hit rate fell by more than this share of the day before notifies quality.dropped webhooks (1 = never)',
  definition_changes:
    '"hold" a changed upstream definition for a person, or "apply_optional_additions" to serve one that only adds optional parameters',
};

type SettingValue = string | number | boolean | null;

interface SettingField {
  node: HTMLElement;
  input: HTMLInputElement;
  error: HTMLElement;
  read: () => SettingValue;
}

export async function renderSettings(ctx: ViewContext, panel: HTMLElement): Promise<void> {
  const settings = await api<Record<string, SettingValue>>('GET', agentPath(ctx.agent, 'config'));
  const fields = new Map<string, SettingField>();
  const form = el('form', { class: 'settings', novalidate: true, 'aria-labelledby': 'settings-h' });
  for (const [key, value] of Object.entries(settings)) fields.set(key, settingField(key, value));
  const save = el('button', { type: 'submit', class: 'primary', text: 'Save settings' });
  if (!can(ctx, 'operator')) {
    // An approver or read-only key reads the settings; only an operator key changes them.
    for (const f of fields.values()) f.input.disabled = true;
    form.append(
      el('h2', { id: 'settings-h', text: 'Tool-learning settings' }),
      el('p', { class: 'meta', text: 'This key reads the settings; changing them needs an operator key.' }),
      ...[...fields.values()].map((f) => f.node),
    );
    panel.replaceChildren(form);
    return;
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void act(save, () => saveSettings(ctx, settings, fields));
  });
  form.append(
    el('h2', { id: 'settings-h', text: 'Tool-learning settings' }),
    ...[...fields.values()].map((f) => f.node),
    save,
  );
  panel.replaceChildren(form);
}

function settingField(key: string, value: SettingValue): SettingField {
  const id = uid(`set-${key}`);
  const error = el('span', { class: 'error', id: `${id}-error` });
  const hint = el('span', { class: 'hint', id: `${id}-hint`, text: SETTING_HINTS[key as keyof Settings] ?? '' });
  const describedBy = `${id}-hint ${id}-error`;
  if (typeof value === 'boolean') {
    const input = el('input', { id, type: 'checkbox', checked: value, 'aria-describedby': describedBy });
    const node = el(
      'div',
      { class: 'field' },
      el('span', { class: 'inline' }, input, el('label', { for: id, text: key })),
      hint,
      error,
    );
    return { node, input, error, read: () => input.checked };
  }
  const numeric = typeof value === 'number';
  const input = el('input', {
    id,
    type: numeric ? 'number' : 'text',
    value: String(value),
    'aria-describedby': describedBy,
  });
  const node = el('div', { class: 'field' }, el('label', { for: id, text: key }), hint, input, error);
  const read = (): SettingValue => (numeric ? (input.value === '' ? null : Number(input.value)) : input.value);
  return { node, input, error, read };
}

async function saveSettings(
  ctx: ViewContext,
  settings: Record<string, SettingValue>,
  fields: Map<string, SettingField>,
): Promise<void> {
  const patch: Record<string, SettingValue> = {};
  for (const [key, f] of fields) {
    f.error.textContent = '';
    f.node.classList.remove('invalid');
    f.input.removeAttribute('aria-invalid');
    const v = f.read();
    if (v !== settings[key]) patch[key] = v;
  }
  if (!Object.keys(patch).length) return announce('No setting changed.');
  try {
    await api('PUT', agentPath(ctx.agent, 'config'), patch);
  } catch (err) {
    for (const d of err instanceof ApiFailure ? err.details : []) {
      const f = d?.path ? fields.get(String(d.path[0])) : undefined;
      if (!f) continue;
      f.error.textContent = d.message ?? '';
      f.node.classList.add('invalid');
      f.input.setAttribute('aria-invalid', 'true');
    }
    alertError(`Settings not saved: ${describeFailure(err)}`);
    [...fields.values()].find((f) => f.input.getAttribute('aria-invalid'))?.input.focus();
    return;
  }
  await ctx.reload();
  announce(`Settings saved: ${Object.keys(patch).join(', ')}.`);
}
