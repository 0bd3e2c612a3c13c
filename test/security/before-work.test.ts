/**
 * Limits before work: a deployment with a weak ADMIN_TOKEN refuses to serve, saying why; a caller
 * without a route's right is refused before its body is read (an agent key's 14 MiB import is a
 * 403 with at most the first chunk of its body pulled, not buffered and depth-scanned first).
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { app } from '../../src/app.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

async function fetchWith(e: typeof env, request: Request): Promise<{ status: number; body: unknown }> {
  const ctx = createExecutionContext();
  const res = await app.fetch(request, e, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const hint = 'Set a random one (`openssl rand -base64 32`; `npm start` generates one into .dev.vars)';

describe('the ADMIN_TOKEN must be strong, or the deployment refuses to serve', () => {
  it.each([
    ['test-admin-token', 'it is 16 characters long; at least 32 are needed'],
    ['changeme', 'it is 8 characters long; at least 32 are needed'],
    ['a'.repeat(48), 'it uses 1 different characters; at least 10 are needed'],
    ['abcabcabcabcabcabcabcabcabcabcabcabc', 'it uses 3 different characters; at least 10 are needed'],
  ])('%s: every route, /healthz too, answers 500 with the reason', async (token, why) => {
    const weak = { ...env, ADMIN_TOKEN: token };
    for (const path of ['/healthz', '/v1/agents', '/']) {
      const res = await fetchWith(
        weak,
        new Request(`http://whetstone.test${path}`, { headers: { authorization: `Bearer ${token}` } }),
      );
      expect(res).toEqual({
        status: 500,
        body: {
          error: { code: 'internal', message: `configuration: ADMIN_TOKEN is too weak: ${why}. ${hint}`, details: [] },
        },
      });
    }
  });

  it('a strong token serves; a deployment with no ADMIN_TOKEN serves too (it has no admin)', async () => {
    const strong = { ...env, ADMIN_TOKEN: 'wst_admin_Jb0yq3kR8v2WnXz5Lp7Tg4Hd6Fs1Mc9Q' };
    expect((await fetchWith(strong, new Request('http://whetstone.test/healthz'))).status).toBe(200);
    const none: Record<string, unknown> = { ...env };
    delete none.ADMIN_TOKEN;
    expect((await fetchWith(none as unknown as typeof env, new Request('http://whetstone.test/healthz'))).status).toBe(
      200,
    );
  });
});

/** A body of `chunks` MiB streamed on demand, counting how many chunks were pulled. */
function countedBody(chunks: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  const mib = new TextEncoder().encode(`${'{"type":"tool","x":"'}${'y'.repeat(1024 * 1024 - 40)}"}\n`);
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= chunks) return controller.close();
      pulled += 1;
      controller.enqueue(mib);
    },
  });
  return { body, pulled: () => pulled };
}

function streamed(
  path: string,
  token: string,
  body: ReadableStream<Uint8Array>,
  type: string,
  method = 'POST',
): Request {
  const init = {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body,
    duplex: 'half',
  };
  return new Request(`http://whetstone.test${path}`, init as RequestInit);
}

async function agentWithKeys() {
  const agent = agentId('before');
  await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('lookup', 'Look up a record.')] } });
  const key = async (role: string) =>
    (await api('POST', `/v1/agents/${agent}/keys`, { body: { role } })).body.key as string;
  return { agent, agentKey: await key('agent'), operatorKey: await key('operator') };
}

describe('authorisation before the body is read', () => {
  it("an agent key's 14 MiB import: 403 with at most one chunk of the body pulled", async () => {
    const { agent, agentKey } = await agentWithKeys();
    const { body, pulled } = countedBody(14);
    const res = await fetchWith(env, streamed(`/v1/agents/${agent}/import`, agentKey, body, 'application/x-ndjson'));
    expect(res).toEqual({
      status: 403,
      body: { error: { code: 'forbidden', message: 'this route needs the admin token', details: [] } },
    });
    expect(pulled()).toBeLessThanOrEqual(1);
  });

  it("an operator route with an agent key, and another agent's key: refused before the body", async () => {
    const { agent, agentKey } = await agentWithKeys();
    const other = await agentWithKeys();
    const put = countedBody(1);
    const refused = await fetchWith(
      env,
      streamed(`/v1/agents/${agent}/tools`, agentKey, put.body, 'application/json', 'PUT'),
    );
    expect(refused).toEqual({
      status: 403,
      body: { error: { code: 'forbidden', message: 'this route needs an operator key', details: [] } },
    });
    expect(put.pulled()).toBeLessThanOrEqual(1);
    const calls = countedBody(1);
    const foreign = await fetchWith(
      env,
      streamed(`/v1/agents/${agent}/calls`, other.operatorKey, calls.body, 'application/json'),
    );
    expect(foreign).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: `agent ${agent} not found`, details: [] } },
    });
    expect(calls.pulled()).toBeLessThanOrEqual(1);
  });

  it('the admin still imports (the import limit applies to those allowed to import)', async () => {
    const res = await api('POST', `/v1/agents/${agentId('before-import')}/import`, {
      raw: '{"type":"nonsense"}\n',
      headers: { 'content-type': 'application/x-ndjson' },
      token: ADMIN,
    });
    expect(res.status).toBe(400);
  });
});
