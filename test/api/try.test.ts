/**
 * Try before apply (docs/api.md "Try before apply"): a proposed revision, or an approver's edit of
 * it, replayed on the requests it rests on and the tool's recent served requests. Ranks before and
 * after; the model's pick from the offered model views when the model can call tools (the fake
 * OpenAI-compatible server, test/fake-openai-server.ts `pick: "words"`, stands for one); the
 * tool's test endpoint (a loopback receiver) is called by the run and by nothing else. The run
 * writes nothing. Real D1 and Durable Object, through the HTTP layer.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import { services } from '../../src/env.ts';
import type { Evidence } from '../../src/schemas.ts';
import { newRevision } from '../helpers/revisions.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';
import { agentState, send } from '../security/fixtures.ts';

const svc = services(env);
const FAKE = inject('fakeOpenAI');
const RECEIVER = inject('webhookReceiver');

const tools = [
  tool('lookup_claim', 'Fetch an insurance claim record by its claim reference.', { claim_ref: { type: 'string' } }),
  tool('open_file', 'Open a file from the document store.', { path: { type: 'string' } }),
  tool('send_email', 'Send an email to a recipient.', { to: { type: 'string' } }),
];

const MISSED = 'open the third party FNOL file';
const NOTE = 'Third party FNOL files are claim records: look them up by claim_ref.';
const SERVED = 'show me the claim record for the burst pipe';

function missed(id: string, text: string): Evidence {
  return {
    evidence_id: id,
    kind: 'missed_request',
    tool: 'lookup_claim',
    text,
    arguments: ['claim_ref'],
    how: 'not_offered',
    served_by: null,
    turn_id: null,
    call_id: null,
    at: '2026-01-01T00:00:00.000Z',
  };
}

/** An agent with three tools, one served call of lookup_claim in its log and a proposed revision. */
async function setup(): Promise<{ agent: string; id: string }> {
  const agent = agentId('try');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
  const call = { id: 'c1', tool: 'lookup_claim', arguments: { claim_ref: 'CW-1' }, success: true, request: SERVED };
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: [call] } })).status).toBe(200);
  const rev = newRevision('lookup_claim', {
    notes_added: [NOTE],
    queries_added: [MISSED],
    evidence: [missed('missed:lookup_claim:run-1', MISSED), missed('missed:lookup_claim:run-2', MISSED)],
  });
  await svc.revisions.insertRevisions(agent, [rev], null);
  return { agent, id: rev.revision_id };
}

let modelSeq = 0;
/** An env whose LLM is the fake server, under a model name of its own, picking by shared words. */
async function pickingModel() {
  modelSeq += 1;
  const model = `try-${modelSeq}-${Math.random().toString(36).slice(2, 8)}`;
  await fetch(`${FAKE}/_script`, { method: 'POST', body: JSON.stringify({ model, replies: [{ pick: 'words' }] }) });
  return { model, env: { ...env, LLM: `openai:${model}`, OPENAI_BASE_URL: `${FAKE}/v1`, OPENAI_API_KEY: 'test' } };
}

async function modelCalls(model: string): Promise<number> {
  return ((await (await fetch(`${FAKE}/_calls?model=${model}`)).json()) as { calls: number }).calls;
}

const tryIt = (e: typeof env, agent: string, id: string, body: Record<string, unknown> = {}) =>
  send(e, 'POST', `/v1/agents/${agent}/revisions/${id}/try`, { body });

describe('POST …/revisions/:id/try with a model that calls tools', () => {
  it('shows the pick move to the revised tool when its note names the request, and not when the edit drops the note; writes nothing', async () => {
    const { agent, id } = await setup();
    const { model, env: e } = await pickingModel();
    const before = await agentState(agent);

    const res = await tryIt(e, agent, id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ revision_id: id, tool: 'lookup_claim', edited: false, test_calls: 0 });
    expect(res.body.model).toEqual({ id: `openai:${model}`, picks: true, note: null });
    const [fromEvidence, served] = res.body.requests;
    expect(res.body.requests).toHaveLength(2);
    expect(fromEvidence).toMatchObject({
      request: MISSED,
      source: 'evidence',
      evidence_kind: 'missed_request',
      expected: 'lookup_claim',
      pick: {
        // Before: only open_file shares words with the request ("open", "file").
        before: { tool: 'open_file', arguments: { path: MISSED }, test: null },
        // After: the note puts "third party FNOL" in lookup_claim's model view.
        after: { tool: 'lookup_claim', arguments: { claim_ref: MISSED }, test: null },
      },
    });
    // The example request joins lookup_claim's routing text: it ranks first after.
    expect(fromEvidence.rank.after).toBe(1);
    expect(fromEvidence.rank.before).toBeGreaterThan(1);
    expect(served).toMatchObject({
      request: SERVED,
      source: 'served',
      evidence_kind: null,
      expected: 'lookup_claim',
      rank: { before: 1, after: 1 },
      pick: { before: { tool: 'lookup_claim' }, after: { tool: 'lookup_claim' } },
    });
    expect(fromEvidence.offered.after).toContain('lookup_claim');
    expect(await modelCalls(model)).toBe(4);

    // The approver drops the note: the model's choice no longer moves.
    const edited = await tryIt(e, agent, id, { edit: { notes_added: [] } });
    expect(edited.status).toBe(200);
    expect(edited.body.edited).toBe(true);
    expect(edited.body.lines).toEqual({
      notes_added: [],
      queries_added: [MISSED],
      avoid_added: [],
      call_example: null,
    });
    expect(edited.body.requests[0].pick).toMatchObject({ before: { tool: 'open_file' }, after: { tool: 'open_file' } });

    // Nothing written: the tool row, the revision, the call log, everything of the agent.
    expect(await agentState(agent)).toEqual(before);
    expect((await api('GET', `/v1/agents/${agent}/revisions/${id}`)).body.status).toBe('proposed');
  });

  it('calls the tool’s test endpoint with the model’s pick, and /route and call reports never do', async () => {
    const { agent, id } = await setup();
    const { env: e } = await pickingModel();
    const name = `test-endpoint-${Math.random().toString(36).slice(2, 10)}`;
    await fetch(`${RECEIVER}/_script/${name}`, {
      method: 'POST',
      body: JSON.stringify({ statuses: [], reply: { result: { claim: 'CW-1', status: 'open' } } }),
    });
    const put = await api('PUT', `/v1/agents/${agent}/tools/lookup_claim/test-endpoint`, {
      body: { url: `${RECEIVER}/hook/${name}`, token: 'try-only-token' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ tool: 'lookup_claim', url: `${RECEIVER}/hook/${name}`, token: true });
    const stored = await env.DB.prepare('SELECT test_endpoint FROM tools WHERE agent = ?1 AND name = ?2')
      .bind(agent, 'lookup_claim')
      .first<{ test_endpoint: string }>();
    // The token is stored sealed, never in clear, and never answered.
    expect(stored?.test_endpoint).toContain('"token_sealed":"v1.');
    expect(`${stored?.test_endpoint} ${JSON.stringify(put.body)}`).not.toContain('try-only-token');
    const received = async () =>
      (await (await fetch(`${RECEIVER}/_received/${name}`)).json()) as {
        headers: Record<string, string>;
        body: string;
      }[];

    // Production traffic: routing, call reports, the row read. None reaches the test endpoint.
    const route = await api('POST', `/v1/agents/${agent}/route`, { body: { request: SERVED } });
    expect(route.status).toBe(200);
    expect(route.body.tools.map((t: { name: string }) => t.name)).toContain('lookup_claim');
    const call = { id: 'c2', tool: 'lookup_claim', arguments: { claim_ref: 'CW-2' }, success: true, request: SERVED };
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: [call] } })).status).toBe(200);
    expect((await api('GET', `/v1/agents/${agent}/tools/lookup_claim`)).status).toBe(200);
    expect(await received()).toEqual([]);

    const res = await tryIt(e, agent, id);
    expect(res.status).toBe(200);
    // lookup_claim is picked after for the missed request, and before and after for the served one.
    expect(res.body.test_calls).toBe(3);
    expect(res.body.requests[0].pick.after).toEqual({
      tool: 'lookup_claim',
      arguments: { claim_ref: MISSED },
      test: { result: { claim: 'CW-1', status: 'open' } },
    });
    expect(res.body.requests[0].pick.before.test).toBeNull();
    const got = await received();
    expect(got).toHaveLength(3);
    expect(got.map((r) => JSON.parse(r.body))).toContainEqual({
      tool: 'lookup_claim',
      arguments: { claim_ref: MISSED },
    });
    expect(got.every((r) => r.headers.authorization === 'Bearer try-only-token')).toBe(true);

    expect(await api('GET', `/v1/agents/${agent}/tools/lookup_claim/test-endpoint`)).toMatchObject({
      status: 200,
      body: { tool: 'lookup_claim', token: true },
    });
    // An export carries neither the address nor the token.
    const exported = await api('GET', `/v1/agents/${agent}/export`);
    expect(exported.status).toBe(200);
    expect(JSON.stringify(exported.body)).toContain('lookup_claim');
    expect(JSON.stringify(exported.body)).not.toContain(name);
    expect(JSON.stringify(exported.body)).not.toContain('token_sealed');
    expect((await api('DELETE', `/v1/agents/${agent}/tools/lookup_claim/test-endpoint`)).status).toBe(204);
    expect((await api('GET', `/v1/agents/${agent}/tools/lookup_claim/test-endpoint`)).status).toBe(404);
  });

  it("takes its model calls from the agent's hour: past it, a request is ranked but not shown to the model, and the answer says why", async () => {
    const { agent, id } = await setup();
    const { model, env: e } = await pickingModel();
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: { model_calls_per_hour: 3 } })).status).toBe(200);
    const res = await tryIt(e, agent, id);
    expect(res.status).toBe(200);
    // Three calls: the first request gets its two picks; the second would need two more.
    expect(res.body.requests[0].pick).not.toBeNull();
    expect(res.body.requests[1]).toMatchObject({ request: SERVED, rank: { before: 1, after: 1 }, pick: null });
    expect(res.body.model.picks).toBe(true);
    expect(res.body.model.note).toContain('1 of 2 requests were not shown to the model: model_budget:');
    expect(await modelCalls(model)).toBe(2);
  });

  it('refuses a test endpoint address as it refuses an upstream one, and an unknown tool', async () => {
    const { agent } = await setup();
    const put = (tool: string, url: string) =>
      api('PUT', `/v1/agents/${agent}/tools/${tool}/test-endpoint`, { body: { url } });
    const metadata = await put('lookup_claim', 'http://169.254.169.254/latest');
    expect(metadata.status).toBe(400);
    expect(metadata.body.error.message).toContain('the test endpoint host 169.254.169.254 is a cloud metadata address');
    const creds = await put('lookup_claim', 'https://user:pw@example.com/try');
    expect(creds.status).toBe(400);
    expect(creds.body.error.message).toContain('must not carry credentials');
    expect((await put('lookup_claim', 'not a url')).status).toBe(400);
    expect((await put('no_such_tool', 'https://example.com/try')).status).toBe(404);
    expect((await api('GET', `/v1/agents/${agent}/tools/lookup_claim/test-endpoint`)).status).toBe(404);
  });
});

describe('POST …/revisions/:id/try with the offline model', () => {
  it('ranks before and after and says the model cannot pick tools rather than guess', async () => {
    const { agent, id } = await setup();
    const res = await api('POST', `/v1/agents/${agent}/revisions/${id}/try`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body.model).toMatchObject({ id: 'extractive', picks: false });
    expect(res.body.model.note).toContain('cannot call tools');
    expect(res.body.requests[0]).toMatchObject({ request: MISSED, rank: { after: 1 }, pick: null });
  });

  it('offers what /route offers: the top_k, or every tool under the stable-list rule', async () => {
    const { agent, id } = await setup();
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: { top_k: 1 } })).status).toBe(200);
    const top = await api('POST', `/v1/agents/${agent}/revisions/${id}/try`, { body: {} });
    expect(top.body.requests[0].offered.after).toEqual(['lookup_claim']);
    expect(top.body.requests[0].offered.before).toHaveLength(1);
    const body = { top_k: 1, stable_tool_list_tokens: 100_000 };
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body })).status).toBe(200);
    const stable = await api('POST', `/v1/agents/${agent}/revisions/${id}/try`, { body: {} });
    const all = ['lookup_claim', 'open_file', 'send_email'];
    expect(stable.body.requests[0].offered).toEqual({ before: all, after: all });
    const routed = await api('POST', `/v1/agents/${agent}/route`, { body: { request: MISSED } });
    expect(routed.body.tools.map((t: { name: string }) => t.name)).toEqual(all);
  });
});

describe('a try run refused', () => {
  it('answers 404 for an unknown revision, 409 for an applied one, 400 naming a refused edited line; writes nothing and asks no model', async () => {
    const { agent, id } = await setup();
    const { model, env: e } = await pickingModel();
    const before = await agentState(agent);

    const unknown = await tryIt(e, agent, 'rev-none');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');

    const refused = await tryIt(e, agent, id, { edit: { notes_added: ['Call it with claim_ref CW-778812.'] } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(
      /^notes_added\[0\] "Call it with claim_ref CW-778812\." fails the \w+ check/,
    );

    const empty = await tryIt(e, agent, id, { edit: { notes_added: [], queries_added: [] } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain('keeps no line');

    expect(await agentState(agent)).toEqual(before);
    expect(await modelCalls(model)).toBe(0);

    expect(
      (await api('POST', `/v1/agents/${agent}/revisions/${id}/apply`, { body: { approved_by: 'dana' } })).status,
    ).toBe(200);
    const applied = await agentState(agent);
    const again = await tryIt(e, agent, id);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('is applied, not proposed');
    expect(await agentState(agent)).toEqual(applied);
    expect(await modelCalls(model)).toBe(0);
  });
});
