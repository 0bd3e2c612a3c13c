/**
 * Apply, undo, dismiss (docs/learning.md;) through HTTP against real D1 and the real Durable Object.
 * Revisions are stored through the revisions adapter (what a review stores) so each case controls
 * exactly what is proposed; test/api/reviews.test.ts covers the review that writes them.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { NewRevision } from '../../src/adapters/d1-revisions.ts';
import { services } from '../../src/env.ts';
import { agentId, api } from '../helpers/requests.ts';
import { newRevision } from '../helpers/revisions.ts';
import { APPLY_TOOLS } from '../helpers/tools.ts';

const svc = services(env);

const tools = APPLY_TOOLS;

const revision = newRevision;

async function setup(config: Record<string, unknown> = {}) {
  const agent = agentId('apply');
  await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } });
  if (Object.keys(config).length > 0) await api('PUT', `/v1/agents/${agent}/config`, { body: config });
  return agent;
}

async function propose(agent: string, rev: NewRevision): Promise<string> {
  await svc.revisions.insertRevisions(agent, [rev], null);
  return rev.revision_id;
}

async function rawRow(agent: string, name: string) {
  return env.DB.prepare(
    'SELECT examples, notes, avoid, call_example, vector, embedder, version FROM tools WHERE agent = ?1 AND name = ?2',
  )
    .bind(agent, name)
    .first<Record<string, unknown>>();
}

const apply = (agent: string, id: string, by = 'operator-7') =>
  api('POST', `/v1/agents/${agent}/revisions/${id}/apply`, { body: { approved_by: by } });
const undo = (agent: string, name: string) =>
  api('POST', `/v1/agents/${agent}/tools/${name}/undo`, { body: { approved_by: 'operator-7' } });
const topFor = async (agent: string, request: string, k = 1) =>
  (await api('POST', `/v1/agents/${agent}/route`, { body: { request, k } })).body.tools.map(
    (t: { name: string }) => t.name,
  );

describe('apply', () => {
  it('puts notes, "Not for" lines and the example call under Learned from use, and a missed wording now reaches the tool', async () => {
    const agent = await setup();
    const wording = 'open the third party FNOL';
    expect(await topFor(agent, wording)).not.toEqual(['lookup_claim']);
    const id = await propose(
      agent,
      revision('lookup_claim', {
        notes_added: ['Pass claim_ref with its CW- prefix.'],
        avoid_added: ['Not for large loss referrals; use refer_llu.'],
        queries_added: [wording],
        call_example: 'Example call: {"claim_ref": "CW-######"}',
      }),
    );
    const res = await apply(agent, id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      revision_id: id,
      status: 'applied',
      approved_by: 'operator-7',
      queries_added: [wording],
      queries_withdrawn: [],
      displaced: [],
      applied_version: 2,
    });
    const row = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body;
    expect(row.version).toBe(2);
    expect(row.model_view.function.description).toBe(
      'Fetch an insurance claim record by its claim reference.\n\nLearned from use:\n- Pass claim_ref with its CW- prefix.\n- Not for large loss referrals; use refer_llu.\n- Example call: {"claim_ref": "CW-######"}',
    );
    expect(row.examples).toEqual([{ text: wording, source: 'learned', revision_id: id }]);
    expect(await topFor(agent, wording)).toEqual(['lookup_claim']);
    const versions = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim/versions`)).body.versions;
    expect(versions.map((v: { version: number; source: string }) => [v.version, v.source])).toEqual([
      [2, `revision:${id}`],
      [1, 'registered'],
    ]);
  });

  it('shows learned examples to the model only with show_learned_examples', async () => {
    const agent = await setup({ show_learned_examples: true });
    const id = await propose(agent, revision('lookup_claim', { queries_added: ['where is my FNOL'] }));
    await apply(agent, id);
    const row = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body;
    expect(row.model_view.function.description).toBe(
      'Fetch an insurance claim record by its claim reference.\n\nLearned from use:\n- Also asked for as: "where is my FNOL"',
    );
  });

  it('refuses a "Not for" line whose named tool was deleted since the review (unknown_tool)', async () => {
    const agent = await setup();
    const id = await propose(
      agent,
      revision('lookup_claim', { notes_added: ['A note.'], avoid_added: ['Not for large losses; use refer_llu.'] }),
    );
    expect((await api('DELETE', `/v1/agents/${agent}/tools/refer_llu`)).status).toBe(204);
    const res = await apply(agent, id);
    expect(res.status).toBe(200);
    expect(res.body.refused).toContainEqual(
      expect.objectContaining({ kind: 'avoid', reason: 'unknown_tool', text: 'Not for large losses; use refer_llu.' }),
    );
    const row = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body;
    expect(row.avoid).toEqual([]);
    expect(row.notes).toEqual(['A note.']);
  });

  it('shows a displaced request with its argument values scrubbed', async () => {
    const agent = await setup({ top_k: 1 });
    const served = 'send the weekly summary email to the team';
    expect(await topFor(agent, served)).toEqual(['send_email']);
    await api('POST', `/v1/agents/${agent}/calls`, {
      body: {
        calls: [{ tool: 'send_email', arguments: { to: 'the team' }, success: true, request: served }],
      },
    });
    const added = ['send the weekly summary email to the team now', 'email the weekly team summary'];
    const id = await propose(agent, revision('lookup_claim', { queries_added: added }));
    const res = await apply(agent, id);
    expect(res.body.displaced).toEqual([{ request: 'send the weekly summary email to <value>', tool: 'send_email' }]);
  });

  it('withdraws only the examples that would push a neighbour out of the offered tools, and keeps the notes', async () => {
    const agent = await setup({ top_k: 1 });
    const served = 'send the weekly summary email to the team';
    expect(await topFor(agent, served)).toEqual(['send_email']);
    await api('POST', `/v1/agents/${agent}/calls`, {
      body: { calls: [{ tool: 'send_email', arguments: { to: 'x' }, success: true, request: served }] },
    });
    // Two examples: a row's examples weigh a quarter of its head in its vector (src/core/routing.ts EXAMPLE_WEIGHT).
    const added = ['send the weekly summary email to the team now', 'email the weekly team summary'];
    const id = await propose(
      agent,
      revision('lookup_claim', { notes_added: ['Pass claim_ref with its prefix.'], queries_added: added }),
    );
    const res = await apply(agent, id);
    expect(res.status).toBe(200);
    // Only the example that pushes send_email out is withdrawn; the first alone displaces nothing.
    expect(res.body).toMatchObject({
      status: 'applied',
      queries_added: [added[0]],
      queries_withdrawn: [added[1]],
      displaced: [{ request: served, tool: 'send_email' }],
    });
    const row = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body;
    expect(row.examples).toEqual([{ text: added[0], source: 'learned', revision_id: id }]);
    expect(row.notes).toEqual(['Pass claim_ref with its prefix.']);
    expect(await topFor(agent, served)).toEqual(['send_email']);
  });

  it('refuses a second apply, and applying a dismissed revision, with 409 and no write', async () => {
    const agent = await setup();
    const id = await propose(agent, revision('lookup_claim', { notes_added: ['A note.'] }));
    expect((await apply(agent, id)).status).toBe(200);
    expect(await apply(agent, id)).toMatchObject({
      status: 409,
      body: { error: { code: 'conflict', message: `revision ${id} is applied, not proposed` } },
    });
    const other = await propose(agent, revision('start_recovery', { notes_added: ['Another note.'] }));
    const dismissed = await api('POST', `/v1/agents/${agent}/revisions/${other}/dismiss`, {
      body: { approved_by: 'op', reason: 'not useful' },
    });
    expect(dismissed.body).toMatchObject({ status: 'dismissed', approved_by: 'op', dismiss_reason: 'not useful' });
    expect((await apply(agent, other)).status).toBe(409);
    expect((await rawRow(agent, 'start_recovery'))?.version).toBe(1);
    expect((await api('POST', `/v1/agents/${agent}/revisions/nope/apply`, { body: { approved_by: 'x' } })).status).toBe(
      404,
    );
  });

  it('lets one of two concurrent applies win; the other gets 409 and the row is written once', async () => {
    const agent = await setup();
    const id = await propose(agent, revision('lookup_claim', { notes_added: ['Only once.'] }));
    const [a, b] = await Promise.all([apply(agent, id, 'alice'), apply(agent, id, 'bob')]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const row = await rawRow(agent, 'lookup_claim');
    expect(row).toMatchObject({ version: 2, notes: '["Only once."]' });
    const versions = await env.DB.prepare('SELECT COUNT(*) AS n FROM tool_versions WHERE agent = ?1 AND name = ?2')
      .bind(agent, 'lookup_claim')
      .first<{ n: number }>();
    expect(versions?.n).toBe(2);
  });

  it('records the key that applied it', async () => {
    const agent = await setup();
    const key = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'operator' } })).body;
    const id = await propose(agent, revision('lookup_claim', { notes_added: ['By key.'] }));
    expect(
      (
        await api('POST', `/v1/agents/${agent}/revisions/${id}/apply`, {
          token: key.key,
          body: { approved_by: 'dana' },
        })
      ).status,
    ).toBe(200);
    const stored = await env.DB.prepare('SELECT approved_by, approved_key FROM revisions WHERE revision_id = ?1')
      .bind(id)
      .first();
    expect(stored).toEqual({ approved_by: 'dana', approved_key: key.key_id });
  });
});

describe('undo', () => {
  it('steps back through applied revisions while only undos changed the row, back to the registered view', async () => {
    const agent = await setup();
    const registered = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body.model_view;
    const first = await propose(agent, revision('lookup_claim', { notes_added: ['First note.'] }));
    const second = await propose(
      agent,
      revision('lookup_claim', {
        notes_added: ['Second note.'],
        call_example: 'Example call: {"claim_ref": "<text>"}',
      }),
    );
    expect((await apply(agent, first)).status).toBe(200);
    expect((await apply(agent, second)).status).toBe(200);
    expect((await undo(agent, 'lookup_claim')).body).toMatchObject({ revision_id: second, status: 'undone' });
    expect((await undo(agent, 'lookup_claim')).body).toMatchObject({ revision_id: first, status: 'undone' });
    const view = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body.model_view;
    expect(JSON.stringify(view)).toBe(JSON.stringify(registered));
    expect((await undo(agent, 'lookup_claim')).status).toBe(409);
  });

  it('still refuses (409) once something other than an undo changed the row', async () => {
    const agent = await setup();
    const first = await propose(agent, revision('lookup_claim', { notes_added: ['First note.'] }));
    const second = await propose(agent, revision('lookup_claim', { notes_added: ['Second note.'] }));
    expect((await apply(agent, first)).status).toBe(200);
    expect((await apply(agent, second)).status).toBe(200);
    expect((await undo(agent, 'lookup_claim')).status).toBe(200);
    const edited = tools.map((t) =>
      t.name === 'lookup_claim' ? { ...t, description: 'Fetch a claim by reference.' } : t,
    );
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: edited } })).status).toBe(200);
    expect(await undo(agent, 'lookup_claim')).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
  });

  it('keeps who applied a revision and records apart who undid it', async () => {
    const agent = await setup();
    const key = (await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'operator' } })).body;
    const id = await propose(agent, revision('lookup_claim', { notes_added: ['A note.'] }));
    await api('POST', `/v1/agents/${agent}/revisions/${id}/apply`, { token: key.key, body: { approved_by: 'alice' } });
    const undone = await api('POST', `/v1/agents/${agent}/tools/lookup_claim/undo`, { body: { approved_by: 'bob' } });
    expect(undone.body).toMatchObject({
      status: 'undone',
      approved_by: 'alice',
      undone_by: 'bob',
      undone_at: expect.any(String),
    });
    const stored = await env.DB.prepare(
      'SELECT approved_by, approved_key, undone_by, undone_key FROM revisions WHERE revision_id = ?1',
    )
      .bind(id)
      .first();
    expect(stored).toEqual({ approved_by: 'alice', approved_key: key.key_id, undone_by: 'bob', undone_key: 'admin' });
  });

  it('restores the row byte for byte: model view, examples with sources, vector', async () => {
    const agent = await setup({ max_queries: 2 });
    // A row with two synthetic examples at the cap, so the learned one displaces the oldest.
    await env.DB.prepare('UPDATE tools SET examples = ?3 WHERE agent = ?1 AND name = ?2')
      .bind(
        agent,
        'lookup_claim',
        JSON.stringify([
          { text: 'find a claim', source: 'synthetic', revision_id: null },
          { text: 'claim lookup', source: 'synthetic', revision_id: null },
        ]),
      )
      .run();
    const before = await rawRow(agent, 'lookup_claim');
    const viewBefore = (await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body.model_view;
    const id = await propose(
      agent,
      revision('lookup_claim', { notes_added: ['Use the CW- prefix.'], queries_added: ['open the FNOL'] }),
    );
    const applied = await apply(agent, id);
    expect(applied.body.queries_displaced).toEqual([{ text: 'find a claim', source: 'synthetic', revision_id: null }]);
    expect((await rawRow(agent, 'lookup_claim'))?.vector).not.toEqual(before?.vector);
    const undone = await undo(agent, 'lookup_claim');
    expect(undone).toMatchObject({ status: 200, body: { revision_id: id, status: 'undone' } });
    const after = await rawRow(agent, 'lookup_claim');
    expect({ ...after, version: undefined }).toEqual({ ...before, version: undefined });
    expect(after?.version).toBe(3);
    expect((await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).body.model_view).toEqual(viewBefore);
    expect((await api('GET', `/v1/agents/${agent}/tools/lookup_claim/examples`)).body.examples).toEqual([
      { text: 'find a claim', source: 'synthetic', revision_id: null },
      { text: 'claim lookup', source: 'synthetic', revision_id: null },
    ]);
  });

  it('refuses with 409 when the row was edited since the revision was applied', async () => {
    const agent = await setup();
    const id = await propose(agent, revision('lookup_claim', { notes_added: ['A note.'] }));
    await apply(agent, id);
    await api('PUT', `/v1/agents/${agent}/tools`, {
      body: { tools: [{ ...tools[0], description: 'Fetch a claim by reference (v2).' }] },
    });
    const res = await undo(agent, 'lookup_claim');
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/edited since revision/);
    expect((await rawRow(agent, 'lookup_claim'))?.version).toBe(3);
  });

  it('answers 409 when there is nothing to undo', async () => {
    const agent = await setup();
    expect((await undo(agent, 'lookup_claim')).status).toBe(409);
    expect((await undo(agent, 'no_such_tool')).status).toBe(404);
  });
});

describe('history', () => {
  it('lists revisions newest first with their statuses', async () => {
    const agent = await setup();
    const first = await propose(agent, revision('lookup_claim', { notes_added: ['First.'] }));
    const second = await propose(agent, revision('lookup_claim', { notes_added: ['Second.'] }));
    await apply(agent, first);
    await api('POST', `/v1/agents/${agent}/revisions/${second}/dismiss`, { body: { approved_by: 'op' } });
    await undo(agent, 'lookup_claim');
    const res = await api('GET', `/v1/agents/${agent}/revisions?tool=lookup_claim`);
    expect(res.status).toBe(200);
    expect(res.body.revisions.map((r: { revision_id: string; status: string }) => [r.revision_id, r.status])).toEqual([
      [second, 'dismissed'],
      [first, 'undone'],
    ]);
  });
});
