/**
 * Request limits: RATE_LIMIT_PER_MINUTE (per key), RATE_LIMIT_AGENT_PER_MINUTE (all the keys of an
 * agent) and RATE_LIMIT_AUTH_FAILURES_PER_MINUTE (failed authentications per client address), set in
 * a per-test env, through the whole app with the real Durable Objects. 429 `rate_limited` with
 * Retry-After; the admin token is not limited; on by default (the suite turns them off in
 * vitest.config.ts), and 0 turns one off with no Durable Object round trip at all.
 */
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { app } from '../../src/app.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

async function call(
  e: typeof env,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...extra };
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
  return (await bucketRows(agent)).length;
}

async function bucketRows(name: string): Promise<{ principal: string; tokens: number }[]> {
  const stub = env.AGENTS.get(env.AGENTS.idFromName(name));
  return runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ principal: string; tokens: number }>('SELECT principal, tokens FROM rate ORDER BY principal')
      .toArray(),
  );
}

/** The test env without the RATE_LIMIT_* variables vitest.config.ts sets: what a deployment has by default. */
function deploymentDefaults(): typeof env {
  const e: Record<string, unknown> = { ...env };
  delete e.RATE_LIMIT_PER_MINUTE;
  delete e.RATE_LIMIT_AGENT_PER_MINUTE;
  delete e.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE;
  return e as unknown as typeof env;
}

/** The 429 answer of a limit: Retry-After and the message as they must match. */
function rateLimited(retryAfter: RegExp, message: RegExp) {
  return {
    status: 429,
    retryAfter: expect.stringMatching(retryAfter),
    body: { error: { code: 'rate_limited', message: expect.stringMatching(message), details: [] } },
  };
}

describe('RATE_LIMIT_PER_MINUTE', () => {
  it('answers 429 rate_limited with Retry-After once a key has used its minute, per key, and never limits the admin', async () => {
    const { agent, first, second } = await agentWithKeys();
    const limited = { ...env, RATE_LIMIT_PER_MINUTE: '3' };
    const route = (token: string) =>
      call(limited, token, 'POST', `/v1/agents/${agent}/route`, { request: 'rain in Oslo?' });
    for (let i = 0; i < 3; i++) expect((await route(first)).status).toBe(200);
    const refused = await route(first);
    expect(refused).toEqual(
      rateLimited(/^(19|20)$/, /^this key made more than 3 requests a minute; retry in (19|20) s$/),
    );
    // Every route of the key counts, reads too; a refused request is not served.
    expect((await call(limited, first, 'GET', `/v1/agents/${agent}/tools`)).status).toBe(429);
    // Another key of the same agent has its own allowance; the admin token has none.
    expect((await route(second)).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await call(limited, ADMIN, 'POST', `/v1/agents/${agent}/route`, { request: 'rain?' })).status).toBe(200);
    expect(await buckets(agent)).toBe(2);
  });

  it('is on by default: with no RATE_LIMIT_* set, a key has 1,200 requests a minute and its agent 6,000', async () => {
    const { agent, first, firstId } = await agentWithKeys();
    const e = deploymentDefaults();
    expect((await call(e, first, 'GET', `/v1/agents/${agent}/config`)).status).toBe(200);
    expect((await call(e, first, 'GET', `/v1/agents/${agent}/config`)).status).toBe(200);
    // Two tokens taken from each full bucket (refilling a little in between: 100 and 20 a second).
    const rows = await bucketRows(agent);
    expect(rows.map((r) => r.principal)).toEqual(['*agent', firstId]);
    expect(rows[0]?.tokens).toBeGreaterThanOrEqual(5998);
    expect(rows[0]?.tokens).toBeLessThan(5999.5);
    expect(rows[1]?.tokens).toBeGreaterThanOrEqual(1198);
    expect(rows[1]?.tokens).toBeLessThan(1199.5);
  });

  it('is off when 0: many requests pass and the Durable Object keeps no bucket', async () => {
    const { agent, first } = await agentWithKeys();
    const off = { ...env, RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_AGENT_PER_MINUTE: '0' };
    for (const e of [env, off]) {
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

  it('limits all the keys of one agent together: RATE_LIMIT_AGENT_PER_MINUTE', async () => {
    const { agent, first, second } = await agentWithKeys();
    const limited = { ...env, RATE_LIMIT_PER_MINUTE: '100', RATE_LIMIT_AGENT_PER_MINUTE: '4' };
    const read = (token: string) => call(limited, token, 'GET', `/v1/agents/${agent}/config`);
    for (const token of [first, second, first, second]) expect((await read(token)).status).toBe(200);
    const refused = await read(second);
    expect(refused).toEqual(
      rateLimited(
        /^1[45]$/,
        new RegExp(`^the keys of agent ${agent} made more than 4 requests a minute together; retry in 1[45] s$`),
      ),
    );
    expect((await read(first)).status).toBe(429);
    // Another agent's keys have their own allowance; the admin none.
    const other = await agentWithKeys();
    expect((await call(limited, other.first, 'GET', `/v1/agents/${other.agent}/config`)).status).toBe(200);
    expect((await call(limited, ADMIN, 'GET', `/v1/agents/${agent}/config`)).status).toBe(200);
  });

  it('limits failed authentications per client address: 429 past the allowance, even for a good token, from that address only', async () => {
    const { agent, first } = await agentWithKeys();
    const limited = { ...env, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' };
    const from = (address: string, token: string) =>
      call(limited, token, 'GET', `/v1/agents/${agent}/config`, undefined, { 'cf-connecting-ip': address });
    const attacker = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
    const forged = `wsk_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    for (const token of [forged, 'guess', `${first}x`]) expect((await from(attacker, token)).status).toBe(401);
    const refused = await from(attacker, forged);
    expect(refused).toEqual(
      rateLimited(
        /^(19|20)$/,
        /^more than 3 failed authentications a minute came from this address; retry in (19|20) s$/,
      ),
    );
    // The address waits out its allowance whatever it sends; the token is not even read.
    expect((await from(attacker, first)).status).toBe(429);
    expect((await from(attacker, ADMIN)).status).toBe(429);
    // Another address is not affected, and its good tokens pass.
    expect((await from('198.51.100.9', forged)).status).toBe(401);
    expect((await from('198.51.100.9', first)).status).toBe(200);
    // The count lives in the address's own object, never an agent's.
    expect((await bucketRows(`client:${attacker}`)).map((r) => r.principal)).toEqual(['*auth_failures']);
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
