import { describe, expect, it } from 'vitest';
import { agentId, api } from '../helpers/requests.ts';

describe('error shape (docs/api.md)', () => {
  it('answers unknown routes with a 404 JSON error', async () => {
    expect(await api('GET', '/v1/nothing-here')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', message: 'no route GET /v1/nothing-here', details: [] } },
    });
    expect((await api('GET', '/nope', { token: null })).status).toBe(404);
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await api('PATCH', `/v1/agents/${agentId()}/tools`);
    expect(res.status).toBe(405);
    expect(res.body.error.code).toBe('method_not_allowed');
    expect(res.headers.get('allow')).toBe('PUT, GET');
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const res = await api('PUT', `/v1/agents/${agentId()}/tools`, {
      raw: '{"tools": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it('answers a body over 1 MiB with 413', async () => {
    const res = await api('PUT', `/v1/agents/${agentId()}/tools`, {
      body: { tools: [], pad: 'x'.repeat(1024 * 1024 + 1) },
    });
    expect(res).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
  });

  it('answers a bad agent id with 400', async () => {
    const res = await api('GET', '/v1/agents/bad%20agent!/tools');
    expect(res.status).toBe(400);
  });

  it('serves healthz without auth and an OpenAPI 3.1 document of every route', async () => {
    expect(await api('GET', '/healthz', { token: null })).toMatchObject({ status: 200, body: { ok: true } });
    const doc = await api('GET', '/openapi.json', { token: null });
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/agents/{agent}/tools',
        '/v1/agents/{agent}/route',
        '/v1/agents/{agent}/calls',
        '/v1/agents/{agent}/config',
      ]),
    );
  });
});
