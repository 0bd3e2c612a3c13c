/**
 * Headless Chromium for the browser tests: Debian's `chromium` package, never a downloaded build.
 * The binary comes from `CHROMIUM_PATH`, else the Debian path; when neither exists the tests stop with
 * one message naming the package to install. Screenshots go to an ignored folder unless
 * `UPDATE_SCREENSHOTS=1` asks for the tracked ones in docs/screenshots/. The dashboard tests share
 * their tab and sign-in from here, and `callOk` for the admin requests that seed what the page shows.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The Chromium binary to drive, or an error that says how to get one. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH || DEBIAN_CHROMIUM;
  if (!existsSync(path)) {
    throw new Error(
      `Chromium not found at ${path}: the browser tests need Debian's chromium package ` +
        '(apt-get install chromium), or CHROMIUM_PATH set to a Chromium binary.',
    );
  }
  return path;
}

/** Launches headless Chromium with the flags these machines need. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
}

/** Where screenshots go: docs/screenshots/ with UPDATE_SCREENSHOTS=1, else the ignored test-output/. */
export function screenshotDir(): string {
  const target = process.env.UPDATE_SCREENSHOTS === '1' ? '../../docs/screenshots/' : '../../test-output/screenshots/';
  const dir = fileURLToPath(new URL(target, import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Chromium with one dashboard-sized tab; every console error and uncaught page error is pushed to
 * `problems` (a CSP violation or a script error shows up there; the page must produce none).
 */
export async function openTab(problems: string[]): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { browser, page };
}

/** Signs in to the dashboard with `secret` in a fresh tab session (a token left by an earlier test is forgotten first). */
export async function signIn(page: Page, secret: string): Promise<void> {
  const url = inject('workerUrl');
  if (page.url().startsWith(url)) await page.evaluate(() => (globalThis as any).sessionStorage.clear());
  await page.goto(`${url}/`);
  await page.getByLabel('Token').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** An admin request the test's setup needs to succeed: its parsed answer; any other status throws with the answer. */
export async function callOk(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(inject('workerUrl') + path, {
    method,
    headers: { authorization: `Bearer ${inject('adminToken')}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
