/**
 * The Upstreams tab: the agent's upstream MCP servers (docs/integrations.md "Whetstone as an MCP
 * gateway") with their sync status, the last error of a failing one, when the next sync is due, the
 * names of their stored headers (values are write-only and never reach the page), and per tool
 * whether it is available and how many calls reached it through the gateway in the last 7 days.
 * Tools the definition check holds back are listed with the check that fired and the offending
 * text, the part that fired marked, and a Release button for a key that may decide; served tools a
 * person should read are listed with their flags. "Sync now" reads an upstream's tools at once (shown
 * to an operator's key only).
 */
import type { Activity, UpstreamsAnswer, UpstreamView, ViewContext } from './api-types.ts';
import { act, agentPath, alertError, announce, api, can, count, el, fill, session, when } from './core.ts';

/** Days of calls counted per tool. */
const CALL_DAYS = 7;
/** Tools of one upstream whose calls are counted; a bigger upstream links to each tool instead. */
const COUNTED_TOOLS = 100;

export async function renderUpstreams(ctx: ViewContext, panel: HTMLElement): Promise<void> {
  const { upstreams } = await api<UpstreamsAnswer>('GET', agentPath(ctx.agent, 'upstreams'));
  if (upstreams.length === 0) {
    fill(
      panel,
      el('h2', { text: 'Upstream MCP servers' }),
      el('p', {
        class: 'empty',
        text: 'No upstreams: register one with PUT /v1/agents/:agent/upstreams/:name, then POST …/sync.',
      }),
    );
    return;
  }
  const cards = await Promise.all(upstreams.map((u) => upstreamCard(ctx, u)));
  fill(
    panel,
    el('h2', { text: 'Upstream MCP servers' }),
    el('p', {
      class: 'meta',
      text: `${count(upstreams.length, 'upstream', 'upstreams')}; calls counted over the last ${CALL_DAYS} days.`,
    }),
    cards,
  );
}

async function upstreamCard(ctx: ViewContext, u: UpstreamView): Promise<HTMLElement> {
  const calls = await callCounts(ctx.agent, u);
  const sync = el('button', { type: 'button', text: 'Sync now' });
  sync.onclick = () =>
    void act(sync, async () => {
      const report = await api<{ status: string; error: string | null; registered: string[] }>(
        'POST',
        agentPath(ctx.agent, 'upstreams', u.name, 'sync'),
      );
      announce(
        report.status === 'ok'
          ? `Synced ${u.name}: ${count(report.registered.length, 'tool', 'tools')} registered.`
          : `Sync of ${u.name} failed: ${report.error ?? 'no error text'}.`,
      );
      await ctx.reload();
    });
  const available = u.tools.filter((t) => t.available).length;
  return el(
    'article',
    { class: 'card upstream', 'data-upstream': u.name, 'aria-label': `Upstream ${u.name}` },
    el(
      'h3',
      {},
      u.name,
      ' ',
      el('span', { class: `badge status-${u.status}`, 'data-status': u.status, text: u.status }),
    ),
    el('p', { class: 'meta', text: u.url }),
    u.status === 'failing'
      ? el('p', {
          class: 'error',
          'data-last-error': '',
          text: `Last sync failed (${count(u.failures, 'time', 'times')} in a row): ${u.last_error ?? 'no error text'}`,
        })
      : null,
    el(
      'dl',
      { class: 'facts' },
      el('dt', { text: 'Last sync' }),
      el('dd', { text: when(u.last_sync_at) }),
      el('dt', { text: 'Next sync' }),
      el('dd', { text: when(u.next_sync_at) }),
      el('dt', { text: 'Headers' }),
      el('dd', { text: u.header_names.length ? `${u.header_names.join(', ')} (values hidden)` : 'none' }),
      el('dt', { text: 'Timeout' }),
      el('dd', { text: `${u.timeout_ms} ms` }),
    ),
    u.tools.length === 0
      ? el('p', { class: 'empty', text: 'No tools yet: sync to read them.' })
      : el(
          'table',
          { 'data-list': 'upstream-tools' },
          el(
            'caption',
            {},
            `${count(u.tools.length, 'tool', 'tools')}, ${available} available; calls in the last ${CALL_DAYS} days`,
          ),
          el(
            'tr',
            {},
            ['Tool', 'Upstream name', 'Available', 'Calls', 'Failed'].map((h) => el('th', { text: h })),
          ),
          u.tools.map((t) => {
            const c = calls.get(t.name);
            return el(
              'tr',
              { 'data-tool': t.name },
              el('td', { text: t.name }),
              el('td', { text: t.remote_name }),
              el('td', { text: t.available ? 'yes' : 'no: the upstream no longer lists it' }),
              el('td', { 'data-calls': '', text: c ? c.calls : '–' }),
              el('td', { 'data-failures': '', text: c ? c.failures : '–' }),
            );
          }),
        ),
    heldList(ctx, u),
    flaggedList(u),
    can(ctx, 'operator') ? el('div', { class: 'actions' }, sync) : null,
  );
}

/** `text` with each occurrence of `match` in a <mark>: the part of a held definition that fired. */
function marked(text: string, match: string): (string | HTMLElement)[] {
  if (match === '' || !text.includes(match)) return [text];
  const parts = text.split(match);
  return parts.flatMap((part, i) => (i === 0 ? [part] : [el('mark', { text: match }), part]));
}

function heldList(ctx: ViewContext, u: UpstreamView): HTMLElement | null {
  if (u.quarantined.length === 0) return null;
  return el(
    'section',
    { class: 'held', 'aria-label': `Held tools of ${u.name}` },
    el('h4', { text: `Held back: ${count(u.quarantined.length, 'tool', 'tools')}` }),
    el('p', {
      class: 'meta',
      text: 'Not listed, routed or callable until a person releases them, for this definition only.',
    }),
    u.quarantined.map((q) => {
      const release = el('button', { type: 'button', text: `Release ${q.name}` });
      release.onclick = () =>
        void act(release, async () => {
          if (!session.approvedBy) return alertError('Type your name in "Approve as" to release a tool.');
          await api('POST', agentPath(ctx.agent, 'upstreams', u.name, 'tools', q.name, 'release'), {
            released_by: session.approvedBy,
          });
          announce(`Released ${q.name}: it is served as ${q.tool}.`);
          await ctx.reload();
        });
      return el(
        'article',
        { 'data-held': q.name },
        el('h5', { text: `${q.name} (would be served as ${q.tool}), held ${when(q.quarantined_at)}` }),
        el(
          'ul',
          { class: 'lines' },
          q.findings.map((f) =>
            el(
              'li',
              { 'data-check': f.check },
              el('strong', { text: `${f.check} in ${f.field}` }),
              `: ${f.why}`,
              el('pre', {}, marked(f.text, f.match)),
            ),
          ),
        ),
        can(ctx, 'decide') ? release : null,
      );
    }),
  );
}

function flaggedList(u: UpstreamView): HTMLElement | null {
  if (u.flagged.length === 0) return null;
  return el(
    'section',
    { 'aria-label': `Flagged tools of ${u.name}` },
    el('h4', { text: `Served, to read: ${count(u.flagged.length, 'flagged tool', 'flagged tools')}` }),
    el(
      'ul',
      { class: 'lines' },
      u.flagged.map((f) =>
        el(
          'li',
          { 'data-flagged': f.name },
          el('strong', { text: f.name }),
          ': ',
          f.flags.map((x) => `${x.kind} in ${x.field} (${x.why})`).join('; '),
        ),
      ),
    ),
  );
}

/** Calls and failed calls of each (counted) tool of an upstream over the last CALL_DAYS days. */
async function callCounts(agent: string, u: UpstreamView): Promise<Map<string, { calls: number; failures: number }>> {
  const tools = u.tools.slice(0, COUNTED_TOOLS);
  const answers = await Promise.allSettled(
    tools.map((t) =>
      api<Activity>('GET', `${agentPath(agent, 'tools', t.name, 'activity')}?bucket=day&span=${CALL_DAYS}`),
    ),
  );
  const out = new Map<string, { calls: number; failures: number }>();
  answers.forEach((a, i) => {
    const name = tools[i]?.name;
    if (a.status !== 'fulfilled' || name === undefined) return;
    out.set(name, {
      calls: a.value.buckets.reduce((n, b) => n + b.calls, 0),
      failures: a.value.buckets.reduce((n, b) => n + b.failures, 0),
    });
  });
  return out;
}
