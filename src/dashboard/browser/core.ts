/**
 * What every view of the dashboard shares: the session (token for the tab only), the API client,
 * the DOM builder, status messages, the model-view diff and the activity chart.
 *
 * Its one rule: stored text becomes DOM text (`textContent`, text nodes), never markup, so a
 * `<script>` in a tool description shows as text. Exercised end to end in Chromium by
 * test/node/dashboard.test.ts and test/node/dashboard-hostile.test.ts.
 */
import type { Activity, QualityAnswer, ViewContext, WhoAmI } from './api-types.ts';

/**
 * Session: the token lives in sessionStorage (this tab only, gone when it closes); the approver's
 * name is a convenience, so it is remembered across tabs in localStorage.
 */
export const session = {
  get token(): string {
    return sessionStorage.getItem('ws.token') ?? '';
  },
  set token(v: string) {
    if (v) sessionStorage.setItem('ws.token', v);
    else sessionStorage.removeItem('ws.token');
  },
  get agent(): string {
    return sessionStorage.getItem('ws.agent') ?? '';
  },
  set agent(v: string) {
    if (v) sessionStorage.setItem('ws.agent', v);
    else sessionStorage.removeItem('ws.agent');
  },
  get approvedBy(): string {
    return localStorage.getItem('ws.approved_by') ?? '';
  },
  set approvedBy(v: string) {
    localStorage.setItem('ws.approved_by', v);
  },
};

/** One zod issue of a 400 answer (docs/api.md error shape). */
export interface IssueDetail {
  message?: string;
  path?: (string | number)[];
}

/** An API error answer (docs/api.md error shape), with the HTTP status. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: IssueDetail[];

  constructor(status: number, body: unknown) {
    const e = (body as { error?: { message?: string; code?: string; details?: unknown } } | null)?.error ?? {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || `http_${status}`;
    this.details = Array.isArray(e.details) ? (e.details as IssueDetail[]) : [];
  }
}

/** One JSON request to the API with the session's token; the answer is typed by the caller. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${session.token}`, accept: 'application/json' };
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiFailure(res.status, data);
  return data as T;
}

/** Whether the token holds a right on the view's agent (`GET …/whoami`): a view shows an action only then. */
export function can(ctx: ViewContext, right: WhoAmI['rights'][number]): boolean {
  return ctx.who.rights.includes(right);
}

/** The path of an agent's resource; every id is URL-encoded (tool names may hold '/'). */
export function agentPath(agent: string, ...parts: string[]): string {
  return `/v1/agents/${[agent, ...parts].map(encodeURIComponent).join('/')}`;
}

/** An attribute value: false, null and undefined leave the attribute out; `on<event>` takes a listener. */
export type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);
export type Attrs = Record<string, AttrValue>;
/** A child: nodes as they are, strings and numbers as text nodes, nested arrays flattened. */
export type Child = Node | string | number | null | undefined | false | Child[];

/**
 * Builds an element. Strings and numbers among the children become text nodes, so data is never
 * parsed as HTML. attrs: 'text' sets textContent, 'on<event>' adds a listener, false/null skip.
 */
/** A table row of header cells. */
export function headRow(labels: readonly string[]): HTMLTableRowElement {
  return el(
    'tr',
    {},
    labels.map((h) => el('th', { text: h })),
  );
}

/** A table row of text cells. */
export function textRow(cells: readonly (string | number)[]): HTMLTableRowElement {
  return el(
    'tr',
    {},
    cells.map((v) => el('td', { text: v })),
  );
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  return build(document.createElement(tag), attrs, children);
}

/** The same for SVG elements. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attrs, children);
}

function build<E extends Element>(node: E, attrs: Attrs | null | undefined, children: Child[]): E {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === false || v === null || v === undefined) continue;
    if (typeof v === 'function') {
      if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    } else if (k === 'text') node.textContent = String(v);
    else if (k === 'value' && node instanceof HTMLInputElement) node.value = String(v);
    else if (k === 'checked' && node instanceof HTMLInputElement) node.checked = v === true;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

function append(node: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces a node's children, flattening arrays like el() does. */
export function fill<E extends Element>(node: E, ...children: Child[]): E {
  node.replaceChildren();
  append(node, children);
  return node;
}

let ids = 0;
/** A unique id for label/aria wiring. */
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** The page shell's element with this id (page.ts PAGE_HTML has status, alert, session and main). */
export function byId(id: string): HTMLElement {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node;
}

/** A polite status message (aria-live); clears any alert. */
export function announce(message: string): void {
  byId('alert').replaceChildren();
  byId('status').replaceChildren(el('p', { text: message }));
}

/** An error message (role=alert), e.g. from an ApiFailure. */
export function alertError(message: string): void {
  byId('status').replaceChildren();
  byId('alert').replaceChildren(el('p', { text: message }));
}

/** The message an API failure shows the user, with the zod issues of a 400 when there are any. */
export function describeFailure(err: unknown): string {
  if (!(err instanceof ApiFailure)) return err instanceof Error ? err.message : String(err);
  const issues = err.details
    .map((d) => (d?.message ? (d.path?.length ? `${d.path.join('.')}: ` : '') + d.message : ''))
    .filter(Boolean);
  return `${err.message} (${err.status} ${err.code})${issues.length ? `: ${issues.join('; ')}` : ''}`;
}

/** Runs an action from a button: disables it meanwhile, reports failure as an alert. */
export async function act<T>(button: HTMLButtonElement, action: () => Promise<T>): Promise<T | undefined> {
  button.disabled = true;
  try {
    return await action();
  } catch (err) {
    alertError(describeFailure(err));
    return undefined;
  } finally {
    button.disabled = false;
  }
}

/** "1 note", "2 notes". */
export function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** An ISO time as "YYYY-MM-DD HH:MM UTC"; a dash when there is none. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** A share as a percentage with one decimal; a dash when there is nothing to divide. */
export function pct(x: number | null): string {
  return x === null ? '–' : `${(100 * x).toFixed(1)}%`;
}

/** "7 of 9 (77.8%)": hits among served requests, with the counts a reader weighs the share by. */
export function hitsOf(part: { served_turns: number; hits: number }): string {
  return `${part.hits} of ${part.served_turns} (${pct(part.served_turns ? part.hits / part.served_turns : null)})`;
}

/** One revision's entry in `GET …/quality`: served requests and hits before its apply and after. */
export type RevisionQuality = QualityAnswer['revisions'][number];

/** The days `GET …/quality` looks back over, and before each revision's apply. */
export const QUALITY_DAYS = 30;

/** The agent's (or one tool's) revisions applied in the last QUALITY_DAYS days, by revision id. */
export async function revisionQuality(agent: string, tool?: string): Promise<Map<string, RevisionQuality>> {
  const query = `?days=${QUALITY_DAYS}${tool === undefined ? '' : `&tool=${encodeURIComponent(tool)}`}`;
  const q = await api<QualityAnswer>('GET', `${agentPath(agent, 'quality')}${query}`);
  return new Map(q.revisions.map((r) => [r.revision_id, r]));
}

interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
}

/** Line diff (longest common subsequence; model views are a few dozen lines). */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const n = a.length;
  const m = b.length;
  // L[i][j]: length of the longest common subsequence of a[i..] and b[j..], flattened.
  const L = new Int32Array((n + 1) * (m + 1));
  const at = (i: number, j: number): number => L[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      L[i * (m + 1) + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ op: ' ', text: a[i] ?? '' });
      i += 1;
      j += 1;
    } else if (j < m && (i === n || at(i, j + 1) >= at(i + 1, j))) {
      out.push({ op: '+', text: b[j] ?? '' });
      j += 1;
    } else {
      out.push({ op: '-', text: a[i] ?? '' });
      i += 1;
    }
  }
  return out;
}

/** A unified diff as a <pre>: added lines in <ins>, removed in <del>, each also marked +/-. */
export function diffView(before: string, after: string, label: string): HTMLPreElement {
  const lines = lineDiff(before, after).map((d) => {
    const text = `${d.op} ${d.text}`;
    if (d.op === '+') return el('ins', { class: 'ln add' }, text);
    if (d.op === '-') return el('del', { class: 'ln del' }, text);
    return el('span', { class: 'ln' }, text);
  });
  return el('pre', { class: 'diff', 'aria-label': label }, lines);
}

/**
 * Activity chart: calls (bars), failed calls (red bars over them) and routing offers (a line),
 * one column per bucket. The numbers are also in a visually hidden table for screen readers.
 */
export function activityChart(activity: Activity, title: string): HTMLElement {
  const W = 560;
  const H = 140;
  const PAD = 24;
  const buckets = activity.buckets;
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.calls, b.offers)));
  const step = (W - PAD * 2) / Math.max(1, buckets.length);
  const y = (v: number): number => H - PAD - (v / max) * (H - PAD * 2);
  const bars = buckets.map((b, i) => {
    const x = PAD + i * step + step * 0.15;
    const w = Math.max(1, step * 0.7);
    const tip = `${b.start.slice(0, 13)}: ${b.calls} calls, ${b.failures} failed, ${b.offers} offers`;
    return [
      svg(
        'rect',
        { x, y: y(b.calls), width: w, height: H - PAD - y(b.calls), class: 'bar-calls' },
        svg('title', { text: tip }),
      ),
      b.failures > 0
        ? svg('rect', { x, y: y(b.failures), width: w, height: H - PAD - y(b.failures), class: 'bar-failed' })
        : null,
    ];
  });
  const points = buckets.map((b, i) => `${(PAD + (i + 0.5) * step).toFixed(1)},${y(b.offers).toFixed(1)}`).join(' ');
  const first = buckets[0]?.start.slice(0, 10) ?? '';
  const last = buckets[buckets.length - 1]?.start.slice(0, 10) ?? '';
  const chart = svg(
    'svg',
    { class: 'chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': title },
    svg('line', { x1: PAD, y1: H - PAD, x2: W - PAD, y2: H - PAD, class: 'axis-line' }),
    bars,
    svg('polyline', { points, class: 'line-offers' }),
    svg('text', { x: PAD, y: 12, class: 'axis', text: `max ${max}` }),
    svg('text', { x: PAD, y: H - 6, class: 'axis', text: first }),
    svg('text', { x: W - PAD, y: H - 6, class: 'axis', 'text-anchor': 'end', text: last }),
  );
  return chartFigure(
    chart,
    [
      ['key-calls', '■ calls'],
      ['key-failures', '■ failed'],
      ['key-offers', '— offered by routing'],
    ],
    title,
    [activity.bucket, 'calls', 'failed', 'offers'],
    buckets.filter((b) => b.calls || b.offers).map((b) => [b.start.slice(0, 13), b.calls, b.failures, b.offers]),
  );
}

/**
 * A chart as a figure: the SVG, its legend (class and text of each key), and the same numbers in a
 * visually hidden table for screen readers.
 */
export function chartFigure(
  chart: SVGSVGElement,
  keys: readonly (readonly [string, string])[],
  title: string,
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): HTMLElement {
  const legend = el(
    'p',
    { class: 'legend' },
    keys.map(([cls, text]) => el('span', { class: cls }, text)),
  );
  const table = el(
    'table',
    { class: 'visually-hidden' },
    el('caption', { text: title }),
    headRow(header),
    rows.map(textRow),
  );
  return el('figure', {}, chart, legend, table);
}
