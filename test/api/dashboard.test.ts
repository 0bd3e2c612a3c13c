import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.ts';
import { logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

describe('GET / (the dashboard)', () => {
  it('serves the page without a token, under a strict Content-Security-Policy', async () => {
    const res = await api('GET', '/', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=UTF-8');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.body).toContain('<script type="module" src="/dashboard/main.js"></script>');
    expect(res.body).not.toMatch(/<script>|<style>| style=|https?:\/\/(?!www\.w3\.org)/);
  });

  it('serves its scripts and stylesheet from this Worker, with no network address in them', async () => {
    const files = [
      ['main.js', 'text/javascript; charset=utf-8'],
      ['app.css', 'text/css; charset=utf-8'],
      ['icon.svg', 'image/svg+xml'],
    ] as const;
    for (const [file, type] of files) {
      const res = await api('GET', `/dashboard/${file}`, { token: null });
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      // Only the SVG namespace URI, which names a namespace and is never fetched.
      expect(String(res.body).replace('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:\/\//);
      expect(String(res.body)).not.toContain('innerHTML');
    }
  });

  it('serves the browser code as one bundled module, every view in it', async () => {
    const js = String((await api('GET', '/dashboard/main.js', { token: null })).body);
    // Bundled: no module of its own imported at run time; each view's entry point is inside.
    expect(js).not.toMatch(/^\s*import\s/m);
    for (const view of ['renderOverview', 'renderInbox', 'renderTools', 'renderUsage', 'renderSettings'])
      expect(js, view).toContain(`function ${view}(`);
    // TypeScript, compiled: no type annotation is left for the browser to choke on.
    expect(js).not.toMatch(/\): Promise<void>|as HTMLElement/);
    expect((await api('GET', '/dashboard/core.js', { token: null })).status).toBe(404);
  });

  it('answers 404 in the API error shape for an unknown file', async () => {
    const res = await api('GET', '/dashboard/nope.js', { token: null });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: 'no route GET /dashboard/nope.js', details: [] } });
  });
});

const orders = tool('get_order', 'Look up an order by its id.', { order_id: { type: 'string' } });

describe('GET /v1/agents/:agent/tools/:tool/activity', () => {
  it('counts calls, failed calls and routing offers per UTC day, zero-filled, oldest first', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [orders, tool('send_email', 'Send an email.')] } });
    const now = Date.now();
    const yesterday = new Date(now - 86_400_000).toISOString();
    const calls = [
      { tool: 'get_order', arguments: { order_id: '1' }, success: false, error: 'not found', at: yesterday },
      { tool: 'get_order', arguments: { order_id: '2' }, success: false, error: 'not found', at: yesterday },
      { tool: 'get_order', arguments: { order_id: 'ORD-3' }, success: true },
      { tool: 'send_email', arguments: {}, success: true },
    ];
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
    await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'where is my order?' } });
    await eventually(() =>
      logDb(agent)
        .prepare('SELECT 1 AS x FROM turns WHERE agent = ?1')
        .bind(agent)
        .first()
        .then((r) => r ?? undefined),
    );

    const res = await api('GET', `/v1/agents/${agent}/tools/get_order/activity?bucket=day&span=3`);
    expect(res.status).toBe(200);
    const day = (offset: number) => `${new Date(now - offset * 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z`;
    expect(res.body.buckets).toEqual([
      { start: day(2), calls: 0, failures: 0, offers: 0 },
      { start: day(1), calls: 2, failures: 2, offers: 0 },
      { start: day(0), calls: 1, failures: 0, offers: 1 },
    ]);
    expect(res.body).toMatchObject({ tool: 'get_order', bucket: 'day', from: day(2) });
  });

  it('answers hourly buckets, and 400 past the longest window', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [orders] } });
    const res = await api('GET', `/v1/agents/${agent}/tools/get_order/activity?bucket=hour&span=5`);
    expect(res.status).toBe(200);
    expect(res.body.buckets).toHaveLength(5);
    expect(res.body.buckets[4].start.slice(0, 13)).toBe(new Date().toISOString().slice(0, 13));
    const tooLong = await api('GET', `/v1/agents/${agent}/tools/get_order/activity?bucket=day&span=91`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details).toEqual([
      { code: 'too_big', path: ['span'], message: 'span is at most 90 for bucket=day' },
    ]);
    expect((await api('GET', `/v1/agents/${agent}/tools/get_order/activity?bucket=week`)).status).toBe(400);
  });

  it('is 404 for an agent that does not exist, and for a key of another agent', async () => {
    expect((await api('GET', `/v1/agents/${agentId()}/tools/x/activity`)).body.error.code).toBe('not_found');
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [orders] } });
    const other = agentId();
    const key = (await api('POST', `/v1/agents/${other}/keys`, { body: { role: 'agent' } })).body.key;
    expect((await api('GET', `/v1/agents/${agent}/tools/get_order/activity`, { token: key })).status).toBe(404);
  });
});

describe('POST /v1/agents/:agent/tools/:tool/preview', () => {
  it('renders the model view before and after a revision with the one renderer, writing nothing', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [orders] } });
    const revision = {
      revision_id: 'rev-1',
      status: 'proposed',
      evidence: [],
      notes_added: ['Order ids start with ORD-.'],
      avoid_added: ['Not for refunds; use refund_order'],
      queries_added: ['where is my parcel'],
      call_example: 'Example call: {"order_id": "ORD-#"}',
    };
    const res = await api('POST', `/v1/agents/${agent}/tools/get_order/preview`, { body: revision });
    expect(res.status).toBe(200);
    const view = (description: string) => ({
      type: 'function',
      function: { name: 'get_order', description, parameters: orders.parameters },
    });
    expect(res.body).toEqual({
      before: view('Look up an order by its id.'),
      after: view(
        'Look up an order by its id.\n\nLearned from use:\n- Order ids start with ORD-.\n- Not for refunds; use refund_order\n- Example call: {"order_id": "ORD-#"}',
      ),
    });
    expect((await api('GET', `/v1/agents/${agent}/tools/get_order`)).body.version).toBe(1);
  });

  it('shows learned example requests only with show_learned_examples, and never repeats a line', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [orders] } });
    await api('PUT', `/v1/agents/${agent}/config`, { body: { show_learned_examples: true } });
    const res = await api('POST', `/v1/agents/${agent}/tools/get_order/preview`, {
      body: { queries_added: ['where is my parcel'], notes_added: ['A.', 'A.'] },
    });
    expect(res.body.after.function.description).toBe(
      'Look up an order by its id.\n\nLearned from use:\n- A.\n- Also asked for as: "where is my parcel"',
    );
  });

  it('is 404 for an unknown tool and 400 for a malformed body', async () => {
    const agent = agentId();
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [orders] } });
    expect((await api('POST', `/v1/agents/${agent}/tools/nope/preview`, { body: {} })).body).toEqual({
      error: { code: 'not_found', message: 'tool nope not found', details: [] },
    });
    const bad = await api('POST', `/v1/agents/${agent}/tools/get_order/preview`, { body: { notes_added: 'one line' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toEqual(['notes_added']);
  });
});
