/**
 * /dashboard/core.js: what every view of the dashboard shares — the session (token for the tab
 * only), the API client, the DOM builder, status messages, the model-view diff and the SVG chart.
 *
 * The browser code is plain JavaScript kept in a string (the Worker serves it as is; the Worker's
 * tsconfig has no DOM types) and is exercised end to end by test/node/dashboard.test.ts in Chromium.
 * Its one rule: stored text becomes DOM text (`textContent`, text nodes), never markup, so a
 * `<script>` in a tool description shows as text. No template literals inside: this is one.
 */
export const CORE_JS = String.raw`
// Session: the token lives in sessionStorage (this tab only, gone when it closes); the approver's
// name is a convenience, so it is remembered across tabs in localStorage.
export const session = {
  get token() { return sessionStorage.getItem('ws.token') || ''; },
  set token(v) { v ? sessionStorage.setItem('ws.token', v) : sessionStorage.removeItem('ws.token'); },
  get agent() { return sessionStorage.getItem('ws.agent') || ''; },
  set agent(v) { v ? sessionStorage.setItem('ws.agent', v) : sessionStorage.removeItem('ws.agent'); },
  get approvedBy() { return localStorage.getItem('ws.approved_by') || ''; },
  set approvedBy(v) { localStorage.setItem('ws.approved_by', v); },
};

/** An API error answer (docs/api.md error shape), with the HTTP status. */
export class ApiFailure extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || ('HTTP ' + status));
    this.status = status;
    this.code = e.code || 'http_' + status;
    this.details = Array.isArray(e.details) ? e.details : [];
  }
}

/** One JSON request to the API with the session's token. */
export async function api(method, path, body) {
  const headers = { authorization: 'Bearer ' + session.token, accept: 'application/json' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) throw new ApiFailure(res.status, data);
  return data;
}

/** The path of an agent's resource; every id is URL-encoded (tool names may hold '/'). */
export function agentPath(agent, ...parts) {
  return '/v1/agents/' + [agent, ...parts].map(encodeURIComponent).join('/');
}

/**
 * Builds an element. Strings and numbers among the children become text nodes, so data is never
 * parsed as HTML. attrs: 'text' sets textContent, 'on<event>' adds a listener, false/null skip.
 */
export function el(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** The same for SVG elements. */
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attrs, children);
}

function build(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'text') node.textContent = String(v);
    else if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'value' || k === 'checked') node[k] = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces a node's children, flattening arrays like el() does. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

let ids = 0;
/** A unique id for label/aria wiring. */
export function uid(prefix) { ids += 1; return prefix + '-' + ids; }

/** A polite status message (aria-live); clears any alert. */
export function announce(message) {
  document.getElementById('alert').replaceChildren();
  document.getElementById('status').replaceChildren(el('p', { text: message }));
}

/** An error message (role=alert), e.g. from an ApiFailure. */
export function alertError(message) {
  document.getElementById('status').replaceChildren();
  document.getElementById('alert').replaceChildren(el('p', { text: message }));
}

/** The message an API failure shows the user, with the zod issues of a 400 when there are any. */
export function describeFailure(err) {
  if (!(err instanceof ApiFailure)) return String(err && err.message ? err.message : err);
  const issues = err.details.map((d) => (d && d.message ? (d.path && d.path.length ? d.path.join('.') + ': ' : '') + d.message : '')).filter(Boolean);
  return err.message + ' (' + err.status + ' ' + err.code + ')' + (issues.length ? ': ' + issues.join('; ') : '');
}

/** Runs an action from a button: disables it meanwhile, reports failure as an alert. */
export async function act(button, action) {
  button.disabled = true;
  try { return await action(); } catch (err) { alertError(describeFailure(err)); return undefined; } finally { button.disabled = false; }
}

/** "1 note", "2 notes". */
export function count(n, one, many) { return n + ' ' + (n === 1 ? one : many); }

export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** Line diff (longest common subsequence; model views are a few dozen lines). */
export function lineDiff(before, after) {
  const a = before.split('\n'), b = after.split('\n');
  const n = a.length, m = b.length;
  const L = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i -= 1) for (let j = m - 1; j >= 0; j -= 1) {
    L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push({ op: ' ', text: a[i] }); i += 1; j += 1; }
    else if (j < m && (i === n || L[i][j + 1] >= L[i + 1][j])) { out.push({ op: '+', text: b[j] }); j += 1; }
    else { out.push({ op: '-', text: a[i] }); i += 1; }
  }
  return out;
}

/** A unified diff as a <pre>: added lines in <ins>, removed in <del>, each also marked +/-. */
export function diffView(before, after, label) {
  const lines = lineDiff(before, after).map((d) => {
    const tag = d.op === '+' ? 'ins' : d.op === '-' ? 'del' : 'span';
    const cls = d.op === '+' ? 'ln add' : d.op === '-' ? 'ln del' : 'ln';
    return el(tag, { class: cls }, d.op + ' ' + d.text);
  });
  return el('pre', { class: 'diff', 'aria-label': label }, lines);
}

/**
 * Activity chart: calls (bars), failed calls (red bars over them) and routing offers (a line),
 * one column per bucket. The numbers are also in a visually hidden table for screen readers.
 */
export function activityChart(activity, title) {
  const W = 560, H = 140, PAD = 24, buckets = activity.buckets;
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.calls, b.offers)));
  const step = (W - PAD * 2) / Math.max(1, buckets.length);
  const y = (v) => H - PAD - (v / max) * (H - PAD * 2);
  const bars = buckets.map((b, i) => {
    const x = PAD + i * step + step * 0.15, w = Math.max(1, step * 0.7);
    return [
      svg('rect', { x, y: y(b.calls), width: w, height: H - PAD - y(b.calls), class: 'bar-calls' }, svg('title', { text: b.start.slice(0, 13) + ': ' + b.calls + ' calls, ' + b.failures + ' failed, ' + b.offers + ' offers' })),
      b.failures > 0 ? svg('rect', { x, y: y(b.failures), width: w, height: H - PAD - y(b.failures), class: 'bar-failed' }) : null,
    ];
  });
  const points = buckets.map((b, i) => (PAD + (i + 0.5) * step).toFixed(1) + ',' + y(b.offers).toFixed(1)).join(' ');
  const chart = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': title },
    svg('line', { x1: PAD, y1: H - PAD, x2: W - PAD, y2: H - PAD, class: 'axis-line' }),
    bars,
    svg('polyline', { points, class: 'line-offers' }),
    svg('text', { x: PAD, y: 12, class: 'axis', text: 'max ' + max }),
    svg('text', { x: PAD, y: H - 6, class: 'axis', text: buckets.length ? buckets[0].start.slice(0, 10) : '' }),
    svg('text', { x: W - PAD, y: H - 6, class: 'axis', 'text-anchor': 'end', text: buckets.length ? buckets[buckets.length - 1].start.slice(0, 10) : '' }));
  const legend = el('p', { class: 'legend' }, el('span', { class: 'key-calls' }, '■ calls'), el('span', { class: 'key-failures' }, '■ failed'), el('span', { class: 'key-offers' }, '— offered by routing'));
  const rows = buckets.filter((b) => b.calls || b.offers).map((b) => el('tr', {}, el('td', { text: b.start.slice(0, 13) }), el('td', { text: b.calls }), el('td', { text: b.failures }), el('td', { text: b.offers })));
  const table = el('table', { class: 'visually-hidden' }, el('caption', { text: title }),
    el('tr', {}, el('th', { text: activity.bucket }), el('th', { text: 'calls' }), el('th', { text: 'failed' }), el('th', { text: 'offers' })), rows);
  return el('figure', {}, chart, legend, table);
}
`;
