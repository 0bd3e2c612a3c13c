/**
 * The verification snippet of docs/integrations.md "Verifying a delivery", run as written: the
 * block is cut from the doc into a module of its own and imported. It must accept a real delivery —
 * a review's `revisions.waiting` message, sent by the Worker under `wrangler dev` through its local
 * queue to a receiver on loopback — and refuse a changed body, another secret and an old timestamp.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { signatureHeader } from '../../src/core/webhook-events.ts';
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from '../webhook-receiver.ts';

type Verify = (
  secret: string,
  header: string | undefined,
  rawBody: string | Buffer,
  toleranceSeconds?: number,
  nowMs?: number,
) => boolean;

const MARKER = '<!-- webhook-verification-snippet';
const SECRET = 'whsec_node_snippet_0123456789';

/** The first ```js block after the marker, exactly as the doc shows it. */
function snippet(): string {
  const doc = readFileSync(fileURLToPath(new URL('../../docs/integrations.md', import.meta.url)), 'utf8');
  const at = doc.indexOf(MARKER);
  expect(at, 'docs/integrations.md has lost the snippet marker').toBeGreaterThan(-1);
  const m = /```js\n([\s\S]*?)```/.exec(doc.slice(at));
  if (!m?.[1]) throw new Error('no js block after the marker');
  return m[1];
}

let dir: string;
let verify: Verify;
let receiver: WebhookReceiver;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'whetstone-snippet-'));
  const file = join(dir, 'verify.mjs');
  writeFileSync(file, snippet());
  ({ verifyWhetstoneSignature: verify } = (await import(pathToFileURL(file).href)) as {
    verifyWhetstoneSignature: Verify;
  });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await receiver.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${inject('workerUrl')}${path}`, {
    method,
    headers: { authorization: `Bearer ${inject('adminToken')}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

it('accepts a delivery the Worker sent through its queue, and refuses it changed, with another secret or late', async () => {
  const agent = `snippet-${Date.now().toString(36)}`;
  const tool = {
    name: 'upload_file',
    description: 'Attach an uploaded document to a claim.',
    parameters: { type: 'object', properties: { claim_ref: { type: 'string' } } },
  };
  expect((await call('PUT', `/v1/agents/${agent}/tools`, { tools: [tool] })).status).toBe(200);
  const hook = await call('PUT', `/v1/agents/${agent}/webhooks`, {
    webhooks: [{ url: `${receiver.url}/hook/${agent}`, kind: 'json', secret: SECRET }],
  });
  expect(hook.status).toBe(200);
  const error = (ref: string) => `claim_ref "${ref}" not found; references start with CW-`;
  const calls = [
    { id: 'c1', tool: 'upload_file', arguments: { claim_ref: '123456' }, success: false, error: error('123456') },
    { id: 'c2', tool: 'upload_file', arguments: { claim_ref: '654321' }, success: false, error: error('654321') },
    { id: 'c3', tool: 'upload_file', arguments: { claim_ref: 'CW-123456' }, success: true },
    { id: 'c4', tool: 'upload_file', arguments: { claim_ref: 'CW-654321' }, success: true },
  ];
  expect((await call('POST', `/v1/agents/${agent}/calls`, { calls })).status).toBe(200);
  const review = await call('POST', `/v1/agents/${agent}/reviews`, {});
  expect(review.status).toBe(200);
  expect(review.body.revisions).toHaveLength(1);

  let delivery: ReceivedHook | undefined;
  for (const deadline = Date.now() + 30_000; !delivery && Date.now() < deadline; ) {
    const got = (await (await fetch(`${receiver.url}/_received/${agent}`)).json()) as ReceivedHook[];
    delivery = got[0];
    if (!delivery) await new Promise((r) => setTimeout(r, 200));
  }
  if (!delivery) throw new Error('no delivery reached the receiver in 30 s');
  expect(JSON.parse(delivery.body)).toMatchObject({ type: 'revisions.waiting', agent });
  const header = delivery.headers['whetstone-signature'];
  expect(verify(SECRET, header, delivery.body)).toBe(true);
  expect(verify(SECRET, header, Buffer.from(delivery.body))).toBe(true);
  expect(verify(SECRET, header, delivery.body.replace('revisions.waiting', 'revisions.applied'))).toBe(false);
  expect(verify(`${SECRET}x`, header, delivery.body)).toBe(false);
  expect(verify(SECRET, header, delivery.body, 300, Date.now() + 301_000)).toBe(false);
  expect(verify(SECRET, undefined, delivery.body)).toBe(false);
});

it('agrees with the signer of src/core/webhook-events.ts at the edge of the tolerance', async () => {
  const body = '{"id":"evt_1","type":"review.failed"}';
  const t = 1_767_225_600;
  const header = await signatureHeader(SECRET, t, body);
  expect(verify(SECRET, header, body, 300, (t + 300) * 1000)).toBe(true);
  expect(verify(SECRET, header, body, 300, (t + 301) * 1000)).toBe(false);
  expect(verify(SECRET, header.replace(/v1=[0-9a-f]{2}/, 'v1=zz'), body, 300, t * 1000)).toBe(false);
});
