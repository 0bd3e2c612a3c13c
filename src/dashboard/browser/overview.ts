/**
 * The Overview tab: routing hit rate per UTC day over 30 days with a marker per applied or undone
 * revision, the tools routing missed most and the pairs most confused, each linking to its tool,
 * and each revision's before and after (GET …/quality, docs/api.md "Quality"). Drawn in the page as
 * SVG; nothing is loaded from elsewhere.
 */
import type { QualityAnswer, ViewContext } from './api-types.ts';
import { agentPath, api, chartFigure, el, fill, hitsOf, pct, QUALITY_DAYS, svg } from './core.ts';

const minute = (iso: string): string => iso.slice(0, 16).replace('T', ' ');

export async function renderOverview(ctx: ViewContext, panel: HTMLElement): Promise<void> {
  const q = await api<QualityAnswer>('GET', `${agentPath(ctx.agent, 'quality')}?days=${QUALITY_DAYS}`);
  const served = q.days.reduce((n, d) => n + d.served_turns, 0);
  const hits = q.days.reduce((n, d) => n + d.hits, 0);
  fill(
    panel,
    el('h2', { text: 'Routing quality, last 30 days' }),
    el('p', {
      class: 'meta',
      'data-summary': '',
      text: served
        ? `Routing offered the tool that finally served the request in ${hits} of ${served} served requests (${pct(hits / served)}).`
        : 'No served requests in the last 30 days yet.',
    }),
    hitRateChart(q),
    q.truncated
      ? el('p', { class: 'meta', text: 'The window holds more than one report reads: the oldest rows are left out.' })
      : null,
    el(
      'div',
      { class: 'columns' },
      el(
        'section',
        { 'aria-label': 'Tools routing missed most' },
        el('h3', { text: 'Missed most' }),
        q.top_missed.length
          ? el(
              'ol',
              { 'data-list': 'missed' },
              q.top_missed.map((m) => el('li', {}, toolLink(ctx, m.tool), ` — ${m.misses} missed`)),
            )
          : el('p', { class: 'empty', text: 'No missed requests.' }),
      ),
      el(
        'section',
        { 'aria-label': 'Pairs most confused' },
        el('h3', { text: 'Confused most' }),
        q.top_confused.length
          ? el(
              'ol',
              { 'data-list': 'confused' },
              q.top_confused.map((c) =>
                el('li', {}, toolLink(ctx, c.tool), ' → ', toolLink(ctx, c.served_by), ` — ${c.count}`),
              ),
            )
          : el('p', { class: 'empty', text: 'No confused requests.' }),
      ),
    ),
    el('h3', { text: 'What each revision changed' }),
    q.revisions.length
      ? el(
          'table',
          { 'data-list': 'revisions' },
          el(
            'tr',
            {},
            ['Revision', 'Tool', 'Applied', 'Undone', 'Hits before', 'Hits after'].map((h) => el('th', { text: h })),
          ),
          q.revisions.map((r) =>
            el(
              'tr',
              {},
              el('td', { text: r.revision_id }),
              el('td', {}, toolLink(ctx, r.tool)),
              el('td', { text: minute(r.applied_at) }),
              el('td', { text: r.undone_at ? minute(r.undone_at) : '–' }),
              el('td', { text: hitsOf(r.before) }),
              el('td', { text: hitsOf(r.after) }),
            ),
          ),
        )
      : el('p', { class: 'empty', text: 'No revision applied in the last 30 days.' }),
    el('h3', { text: 'What approvers did' }),
    el('p', { class: 'meta', 'data-summary': 'approvals', text: approvalsText(q.approvals) }),
  );
}

const LINE_NAMES = {
  notes_added: 'usage notes',
  queries_added: 'example requests',
  avoid_added: '"Not for" lines',
  call_example: 'example calls',
} as const;

/** One sentence on the window's decisions, and the kind of line approvers took out most. */
export function approvalsText(a: QualityAnswer['approvals']): string {
  if (a.decided === 0) return 'No revision of lines was decided in the last 30 days.';
  const applied = a.applied_as_proposed + a.applied_edited;
  const parts = [
    `${a.decided} ${a.decided === 1 ? 'revision' : 'revisions'} decided: ${applied} applied`,
    a.auto_applied ? ` (${a.auto_applied} by the auto-apply policy)` : '',
    `, ${a.applied_edited} of them edited first${a.edit_rate === null ? '' : ` (${pct(a.edit_rate)})`}`,
    `, ${a.dismissed} dismissed.`,
  ];
  const worst = (Object.keys(LINE_NAMES) as (keyof typeof LINE_NAMES)[])
    .filter((k) => a.lines[k].taken_out > 0)
    .sort((x, y) => a.lines[y].taken_out / a.lines[y].proposed - a.lines[x].taken_out / a.lines[x].proposed)[0];
  if (worst) {
    const l = a.lines[worst];
    parts.push(` Approvers took out ${l.taken_out} of ${l.proposed} proposed ${LINE_NAMES[worst]}.`);
  }
  return parts.join('');
}

function toolLink(ctx: ViewContext, name: string): HTMLButtonElement {
  return el('button', {
    type: 'button',
    class: 'link',
    'data-tool-link': name,
    text: name,
    onclick: () => void ctx.open('tools'),
  });
}

/** Hit rate per day as a line (gaps on days nothing was served), a marker per applied or undone revision. */
function hitRateChart(q: QualityAnswer): HTMLElement {
  const W = 560;
  const H = 160;
  const PAD = 28;
  const days = q.days;
  const step = (W - PAD * 2) / Math.max(1, days.length - 1);
  const x = (i: number): number => PAD + i * step;
  const y = (v: number): number => H - PAD - v * (H - PAD * 2);
  const index = new Map(days.map((d, i) => [d.date, i]));
  const segments: string[][] = [];
  let current: string[] = [];
  days.forEach((d, i) => {
    if (d.hit_rate === null) {
      if (current.length) segments.push(current);
      current = [];
      return;
    }
    current.push(`${x(i).toFixed(1)},${y(d.hit_rate).toFixed(1)}`);
  });
  if (current.length) segments.push(current);
  const dots = days.flatMap((d, i) =>
    d.hit_rate === null
      ? []
      : [
          svg(
            'circle',
            { cx: x(i), cy: y(d.hit_rate), r: 2.5, class: 'dot-hit' },
            svg('title', { text: `${d.date}: ${pct(d.hit_rate)} (${d.hits} of ${d.served_turns} served)` }),
          ),
        ],
  );
  const markers = q.revisions.flatMap((r) =>
    (
      [
        [r.applied_at, 'applied'],
        [r.undone_at, 'undone'],
      ] as const
    ).flatMap(([at, kind]) => {
      const i = at ? index.get(at.slice(0, 10)) : undefined;
      if (!at || i === undefined) return [];
      return [
        svg(
          'line',
          { x1: x(i), x2: x(i), y1: PAD - 8, y2: H - PAD, class: `marker-${kind}`, 'data-marker': kind },
          svg('title', { text: `${r.tool}: revision ${r.revision_id} ${kind} ${at.slice(0, 10)}` }),
        ),
      ];
    }),
  );
  const title = 'Routing hit rate per day: the share of served requests whose serving tool routing offered';
  const chart = svg(
    'svg',
    {
      class: 'chart',
      viewBox: `0 0 ${W} ${H}`,
      width: W,
      height: H,
      role: 'img',
      'aria-label': title,
      'data-chart': 'hit-rate',
    },
    svg('line', { x1: PAD, y1: y(0), x2: W - PAD, y2: y(0), class: 'axis-line' }),
    svg('line', { x1: PAD, y1: y(1), x2: W - PAD, y2: y(1), class: 'axis-line' }),
    svg('text', { x: 2, y: y(1) + 4, class: 'axis', text: '100%' }),
    svg('text', { x: 2, y: y(0) + 4, class: 'axis', text: '0%' }),
    markers,
    segments.map((points) => svg('polyline', { points: points.join(' '), class: 'line-hits' })),
    dots,
    svg('text', { x: PAD, y: H - 6, class: 'axis', text: days[0]?.date ?? '' }),
    svg('text', { x: W - PAD, y: H - 6, class: 'axis', 'text-anchor': 'end', text: days[days.length - 1]?.date ?? '' }),
  );
  return chartFigure(
    chart,
    [
      ['key-hits', '— hit rate'],
      ['key-applied', '| revision applied'],
      ['key-undone', '| revision undone'],
    ],
    title,
    ['day', 'routed', 'served', 'hits', 'hit rate', 'misses', 'confusions'],
    days
      .filter((d) => d.routed_turns || d.served_turns)
      .map((d) => [d.date, d.routed_turns, d.served_turns, d.hits, pct(d.hit_rate), d.misses, d.confusions]),
  );
}
