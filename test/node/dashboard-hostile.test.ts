/**
 * HTML in every kind of stored text the dashboard shows, in headless Chromium against
 * `wrangler dev`: a tool description, call errors (evidence, and a usage note built from them that
 * reaches the model view and the diff), requests, argument names of an unregistered tool's
 * inferred draft. Each must show as text: no element is created from it and no script runs.
 * (test/node/dashboard.test.ts covers the dashboard itself; this file only feeds it markup.)
 */
import type { Browser, Page } from 'playwright-core';
import { callOk, openTab, signIn } from './browser.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const token = inject('adminToken');

/** Each sets `window.__pwned` if it ever runs. */
const IMG = '<img src=x onerror="window.__pwned = 1">';
const SCRIPT = '<script>window.__pwned = 2</script>';
const SVG = '<svg onload="window.__pwned = 3"></svg>';

/**
 * get_order failed in two conversations, then succeeded in both, asked with markup in the
 * requests: the review proposes a usage note and an example call, resting on those requests. An
 * error carrying markup is refused as a note (markup is never learned), so markup reaches the page
 * through the tool description, the requests the revision rests on, and an unregistered draft.
 */
async function seed(agent: string): Promise<void> {
  const parameters = { type: 'object', properties: { order_id: { type: 'string' } } };
  await callOk('PUT', `/v1/agents/${agent}/tools`, {
    tools: [
      { name: 'get_order', description: `Look up an order by its id. ${SCRIPT}`, parameters },
      { name: 'refund_order', description: `Refund an order. ${SVG}`, parameters },
    ],
  });
  const error = 'order_id must start with ORD-';
  const asked = (k: string) => `where is my order ${IMG} (${k})`;
  const calls = ['one', 'two'].flatMap((k, i) => [
    {
      id: `f${i}`,
      tool: 'get_order',
      arguments: { order_id: `${i}` },
      success: false,
      error,
      request: asked(k),
      conversation_id: k,
    },
    {
      id: `s${i}`,
      tool: 'get_order',
      arguments: { order_id: `ORD-${i}` },
      success: true,
      request: asked(k),
      conversation_id: k,
    },
  ]);
  await callOk('POST', `/v1/agents/${agent}/calls`, {
    calls: [
      ...calls,
      { id: 'u1', tool: 'render_html', arguments: { [IMG]: 'x', [SCRIPT]: 1 }, success: false, error: SVG },
    ],
  });
  const review = await callOk('POST', `/v1/agents/${agent}/reviews`, {});
  expect(review.revisions.map((r: { tool: string; notes_added: string[] }) => [r.tool, r.notes_added])).toEqual([
    ['get_order', [NOTE]],
  ]);
}

const NOTE = 'Calls fail with "order_id must start with ORD-"; pass order_id with its prefix.';
/** The markup as the evidence shows it: its digit is masked as a value, its tags are text. */
const SHOWN_IMG = '<img src=x onerror="window.__pwned = <value>">';

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  ({ browser, page } = await openTab(problems));
  page.setDefaultTimeout(10_000);
});

afterAll(async () => {
  await browser?.close();
});

async function noMarkupRan(p: Page): Promise<void> {
  expect(await p.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await p.locator('main script, main img, main svg:not(.chart)').count()).toBe(0);
}

describe('the dashboard fed markup', () => {
  it('shows markup in descriptions, errors, requests, notes, diffs and drafts as text, and runs none of it', async () => {
    const agent = `browser-hostile-${Date.now().toString(36)}`;
    await seed(agent);
    await signIn(page, token);
    await page.getByLabel('Approve as').fill(`Ada ${IMG}`);
    await page.getByRole('button', { name: agent, exact: true }).click();

    const card = page.locator('article.revision[data-tool="get_order"]');
    await card.waitFor();
    await card.locator('details.evidence > summary').click();
    const shown = await card.innerText();
    // The proposed note is the value of its text box, where the approver may edit it.
    const box = card.getByLabel('Usage note 1', { exact: true });
    expect(await box.inputValue()).toBe(NOTE);
    expect(shown).toContain(`where is my order ${SHOWN_IMG}`);
    expect(await card.locator('pre.diff ins').allTextContents()).toContain(`+ - ${NOTE}`);
    await noMarkupRan(page);
    // Markup typed into a line is previewed as text too, then taken back.
    await box.fill(`${NOTE} ${IMG}`);
    await expect.poll(() => card.locator('pre.diff ins').allTextContents()).toContain(`+ - ${NOTE} ${IMG}`);
    await noMarkupRan(page);
    await box.fill(NOTE);
    await expect.poll(() => card.locator('pre.diff ins').allTextContents()).toContain(`+ - ${NOTE}`);

    await card.getByRole('button', { name: 'Apply revision to get_order' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Applied the revision of get_order.');
    // The approver's name is stored text too.
    expect(await page.locator('article.revision[data-tool="get_order"]').innerText()).toContain(`Ada ${IMG}`);
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    for (const tool of ['get_order', 'refund_order'])
      await page.locator(`details.tool[data-tool="${tool}"] > summary`).click();
    expect(await page.locator('details.tool[data-tool="get_order"] pre.model-view').textContent()).toMatch(
      new RegExp(`^${escapeRegex(`Look up an order by its id. ${SCRIPT}\n\nLearned from use:\n- ${NOTE}`)}`),
    );
    expect(await page.locator('details.tool[data-tool="refund_order"] pre.model-view').textContent()).toBe(
      `Refund an order. ${SVG}`,
    );
    await noMarkupRan(page);

    await page.getByRole('button', { name: 'Usage and unregistered', exact: true }).click();
    const draft = page.locator('article[data-unregistered="render_html"]');
    await draft.waitFor();
    const text = await draft.innerText();
    // The draft is shown as JSON: the markup sits in it as an escaped JSON string.
    expect(text).toContain(JSON.stringify(IMG).slice(1, -1));
    expect(text).toContain(SCRIPT);
    await noMarkupRan(page);
    expect(problems).toEqual([]);
  });
});
