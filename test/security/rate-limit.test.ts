/**
 * Per-key rate limiting: RATE_LIMIT_PER_MINUTE set in a per-test env, through the whole
 * app with the real agent Durable Object. 429 `rate_limited` with Retry-After; per key; the admin
 * token is not limited; off by default, with no Durable Object round trip at all.
 */
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { app } from '../../src/app.ts';
import { ADMIN, agentId, api, tool } from '../helpers.ts';

async function call(e: typeof env, token: string, method: string, path: string, body?: unknown) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await app.fetch(
    new Request(`http://whetstone.test${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    e,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, retryAfter: res.headers.get('retry-after') };
}

async function agentWithKeys() {
  const agent = agentId('rate');
  await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('get_weather', 'Weather for a city.')] } });
  const a = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } })).body;
  const b = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'agent' } })).body;
  return { agent, first: a.key as string, firstId: a.key_id as string, second: b.key as string };
}

async function buckets(agent: string): Promise<number> {
  const stub = env.AGENTS.get(env.AGENTS.idFromName(agent));
  return runInDurableObject(
    stub,
    (_instance, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM rate').one().n,
  );
}

describe('RATE_LIMIT_PER_MINUTE', () => {
  it('answers 429 rate_limited with Retry-After once a key has used its minute, per key, and never limits the admin', async () => {
    const { agent, first, second } = await agentWithKeys();
    const limited = { ...env, RATE_LIMIT_PER_MINUTE: '3' };
    const route = (token: string) =>
      call(limited, token, 'POST', `/v1/agents/${agent}/route`, { request: 'rain in Oslo?' });
    for (let i = 0; i < 3; i++) expect((await route(first)).status).toBe(200);
    const refused = await route(first);
    expect(refused).toEqual({
      status: 429,
      retryAfter: expect.stringMatching(/^(19|20)$/),
      body: {
        error: {
          code: 'rate_limited',
          message: expect.stringMatching(/^this key made more than 3 requests a minute; retry in (19|20) s$/),
          details: [],
        },
      },
    });
    // Every route of the key counts, reads too; a refused request is not served.
    expect((await call(limited, first, 'GET', `/v1/agents/${agent}/tools`)).status).toBe(429);
    // Another key of the same agent has its own allowance; the admin token has none.
    expect((await route(second)).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await call(limited, ADMIN, 'POST', `/v1/agents/${agent}/route`, { request: 'rain?' })).status).toBe(200);
    expect(await buckets(agent)).toBe(2);
  });

  it('is off when absent or 0: many requests pass and the Durable Object keeps no bucket', async () => {
    const { agent, first } = await agentWithKeys();
    for (const e of [env, { ...env, RATE_LIMIT_PER_MINUTE: '0' }]) {
      const results = await Promise.all(
        Array.from({ length: 25 }, () =>
          call(e, first, 'POST', `/v1/agents/${agent}/route`, { request: 'rain in Oslo?' }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array.from({ length: 25 }, () => 200));
    }
    expect(await buckets(agent)).toBe(0);
  });

  it('is documented on every API route of /openapi.json (the MCP route lists its answers by hand in src/api/mcp.ts)', async () => {
    const doc = (await api('GET', '/openapi.json', { token: null })).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const missing = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        path.endsWith('/mcp') || '429' in op.responses ? [] : [`${method} ${path}`],
      ),
    );
    expect(missing).toEqual([]);
  });

  it('limits exactly under concurrency: of 12 requests at once with a limit of 5, exactly 5 pass', async () => {
    const { agent, first } = await agentWithKeys();
    const limited = { ...env, RATE_LIMIT_PER_MINUTE: '5' };
    const results = await Promise.all(
      Array.from({ length: 12 }, () => call(limited, first, 'GET', `/v1/agents/${agent}/config`)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(7);
  });
});
