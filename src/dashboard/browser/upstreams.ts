/**
 * The Upstreams tab: the agent's upstream MCP servers (docs/integrations.md "Whetstone as an MCP
 * gateway") with their sync status, the last error of a failing one, when the next sync is due, the
 * names of their stored headers (values are write-only and never reach the page), and per tool
 * whether it is available and how many calls reached it through the gateway in the last 7 days.
 * "Sync now" reads an upstream's tools at once (an operator's right; another key sees the API's
 * refusal).
 */
import type { Activity, UpstreamsAnswer, UpstreamView, ViewContext } from './api-types.ts';
import { act, agentPath, announce, api, count, el, fill, when } from './core.ts';

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
    sync,
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
