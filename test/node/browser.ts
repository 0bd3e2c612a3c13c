/**
 * Headless Chromium for the browser tests: Debian's `chromium` package, never a downloaded build.
 * The binary comes from `CHROMIUM_PATH`, else the Debian path; when neither exists the tests stop with
 * one message naming the package to install. Screenshots go to an ignored folder unless
 * `UPDATE_SCREENSHOTS=1` asks for the tracked ones in docs/screenshots/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

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
