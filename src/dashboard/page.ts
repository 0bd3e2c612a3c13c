/**
 * The dashboard (docs/api.md `GET /`): one HTML page whose ES-module script calls the JSON
 * API with the token the user types, so the API stays the one source of truth and the page needs no
 * auth of its own. Everything is served by this Worker (no CDN: it works offline) under a strict
 * Content-Security-Policy: scripts and styles only from this origin, no inline code, no frames.
 * Stored text reaches the page only through `textContent` (see browser/core.ts `el`).
 */
import { Hono } from 'hono';
import type { AppEnv } from '../api/common.ts';
import { DASHBOARD_JS } from './bundle.gen.ts';
import { STYLES } from './styles.ts';

/** `connect-src 'self'`: the script talks to this Worker's API only. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // The page is small and changes with each deploy; the token never reaches it, so no-cache is enough.
  'cache-control': 'no-cache',
};

/** A whetstone: a grey bar with a blade's edge (the browser asks for an icon; a 404 would be noise). */
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="1" y="6" width="14" height="6" rx="1" fill="#57606a"/><path d="M3 5 13 2v2L3 6z" fill="#0b5cad"/></svg>';

/**
 * The page's static files. main.js is the browser code of src/dashboard/browser/, type-checked
 * TypeScript bundled into one ES module by scripts/build-dashboard.mjs.
 */
const ASSETS: ReadonlyMap<string, { type: string; body: string }> = new Map([
  ['main.js', { type: 'text/javascript; charset=utf-8', body: DASHBOARD_JS }],
  ['app.css', { type: 'text/css; charset=utf-8', body: STYLES }],
  ['icon.svg', { type: 'image/svg+xml', body: ICON_SVG }],
]);

/** The page shell: landmarks and the two live regions; the script fills <main>. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Whetstone</title>
<link rel="icon" href="/dashboard/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/app.css">
<script type="module" src="/dashboard/main.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <h1>Whetstone</h1>
  <nav id="session" aria-label="Session"></nav>
</header>
<div id="status" class="status" role="status" aria-live="polite"></div>
<div id="alert" class="alert" role="alert" aria-live="assertive"></div>
<main id="main" tabindex="-1">
  <noscript><p>The dashboard needs JavaScript; the API works without it (see /openapi.json).</p></noscript>
</main>
</body>
</html>
`;

/** `GET /` and `GET /dashboard/:file`: public, no auth (the page asks for the token). */
export const dashboardApp = new Hono<AppEnv>();

dashboardApp.get('/', (c) => c.html(PAGE_HTML, 200, SECURITY_HEADERS));

dashboardApp.get('/dashboard/:file', (c) => {
  // A Map, not an object: `constructor`, `__proto__` or `toString` are no asset (an object's
  // inherited keys would answer a function, and a 500).
  const asset = ASSETS.get(c.req.param('file'));
  if (!asset) return c.notFound();
  return c.body(asset.body, 200, { ...SECURITY_HEADERS, 'content-type': asset.type });
});
