/**
 * Exporting an agent and importing it into a new id (docs/api.md "Export and import"), through HTTP
 * against real local D1, the real per-agent Durable Object and the exact in-process index.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.ts';
import { count, logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { CLAIM_TOOLS, tool } from '../helpers/tools.ts';

const TOOLS = [
  CLAIM_TOOLS.upload_file,
  tool('lookup_claim', 'Look up an insurance claim by its claim reference.', { claim_ref: { type: 'string' } }),
];
const failed = (id: string, ref: string) => ({
  id,
  tool: 'upload_file',
  arguments: { claim_ref: ref, file_mb: 1 },
  success: false,
  error: `claim_ref "${ref}" not found; references start with CW-`,
});

/**
 * An agent with a row in every table: tools, an applied revision (a second tool version), a review,
 * a routed turn with its outcome and offer counts, calls, a trace's tool definition, a pin and a key.
 */
async function busyAgent(prefix: string): Promise<{ agent: string; key: string; revisionId: string }> {
  const agent = agentId(prefix);
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
  const routed = await api('POST', `/v1/agents/${agent}/route`, { body: { request: 'attach the photo of the dent' } });
  const turnId = routed.body.turn_id as string;
  await eventually(async () => ((await tableCounts(agent)).turns === 1 ? true : undefined));
  expect((await api('POST', `/v1/agents/${agent}/outcomes`, { body: { turn_id: turnId, ok: true } })).status).toBe(204);
  const calls = [
    failed(`${agent}-1`, '123456'),
    failed(`${agent}-2`, '654321'),
    { id: `${agent}-3`, tool: 'upload_file', arguments: { claim_ref: 'CW-123456', file_mb: 3 }, success: true },
  ];
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
  const trace = await api('POST', `/v1/agents/${agent}/traces`, {
    body: {
      messages: [{ role: 'user', content: 'hello' }],
      tools: [tool('draft_tool', 'Seen in a trace.')],
      turn_id: turnId,
    },
  });
  expect(trace.status).toBe(200);
  const review = await api('POST', `/v1/agents/${agent}/reviews`, { body: {} });
  const revisionId = review.body.revisions[0].revision_id as string;
  const applied = await api('POST', `/v1/agents/${agent}/revisions/${revisionId}/apply`, {
    body: { approved_by: 'operator-7' },
  });
  expect(applied.status).toBe(200);
  expect((await api('PUT', `/v1/agents/${agent}/tools/lookup_claim/pin`)).status).toBe(200);
  const key = await api('POST', `/v1/agents/${agent}/keys`, { body: { role: 'operator' } });
  expect(key.status).toBe(200);
  return { agent, key: key.body.key as string, revisionId };
}

/**
 * Every table of the schema with an `agent` column, read from the database itself (D1 does not allow
 * pragma_table_info, so the column is found in each table's CREATE statement, which SQLite keeps
 * up to date through ALTER TABLE).
 */
async function agentTables(): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").raw<
    [string, string | null]
  >();
  return rows.filter(([, sql]) => /[(,]\s*"?agent"?\s+TEXT\b/i.test(sql ?? '')).map(([name]) => name);
}

/** The agent's row count in every table that has an `agent` column (the log's in its Durable Object). */
async function tableCounts(agent: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await agentTables()) counts[table] = await count(table, agent);
  return counts;
}

const ndjson = { 'content-type': 'application/x-ndjson' };

/** `value` with every id of `renamed` replaced (the import renames ids another agent here holds). */
function withIds<T>(value: T, renamed: Record<string, string>): T {
  let text = JSON.stringify(value);
  for (const [from, to] of Object.entries(renamed)) text = text.replaceAll(from, to);
  return JSON.parse(text) as T;
}

describe('GET /v1/agents/:agent/export and POST /v1/agents/:agent/import', () => {
  it('exports NDJSON that, imported into a new agent, gives it the same tools, versions, revisions and settings', async () => {
    const a = await busyAgent('source');
    expect(
      (await api('PUT', `/v1/agents/${a.agent}/config`, { body: { top_k: 3, log_retention_days: 90 } })).status,
    ).toBe(200);
    const exported = await api<string>('GET', `/v1/agents/${a.agent}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson');
    const text = typeof exported.body === 'string' ? exported.body : '';
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]).toMatchObject({
      type: 'agent',
      format: 1,
      agent: a.agent,
      settings: { top_k: 3, log_retention_days: 90 },
    });
    const types = lines.map((l) => l.type);
    expect(new Set(types)).toEqual(
      new Set(['agent', 'tool', 'tool_version', 'revision', 'review', 'pin', 'trace_tool', 'turn', 'call', 'outcome']),
    );
    expect(types.filter((t) => t === 'call')).toHaveLength(3);
    // The secret is everything after `wsk_<key_id>_` (16 hex digits): it may itself contain `_`.
    const secret = a.key.slice('wsk_'.length + 16 + 1);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(text).not.toContain(secret);
    expect(text).not.toMatch(/"salt"|"hash"/);
    expect(lines.filter((l) => l.type === 'tool').every((l) => !('vector' in l) && !('embedder' in l))).toBe(true);

    const b = agentId('copy');
    const imported = await api('POST', `/v1/agents/${b}/import`, { raw: text, headers: ndjson });
    expect(imported.status).toBe(200);
    const renamed = imported.body.renamed as Record<string, string>;
    expect(Object.keys(renamed).sort()).toEqual(
      lines
        .flatMap((l) =>
          l.type === 'revision'
            ? [(l as unknown as { revision_id: string }).revision_id]
            : l.type === 'review'
              ? [(l as unknown as { review_id: string }).review_id]
              : [],
        )
        .sort(),
    );
    expect(imported.body).toEqual({
      agent: b,
      imported: {
        tools: 2,
        tool_versions: 3,
        revisions: 1,
        reviews: 1,
        pins: 1,
        trace_tools: 1,
        turns: 1,
        calls: 3,
        outcomes: 1,
      },
      renamed,
    });

    const same = async (path: string) => {
      const [from, to] = [
        await api('GET', `/v1/agents/${a.agent}/${path}`),
        await api('GET', `/v1/agents/${b}/${path}`),
      ];
      expect([path, to.status]).toEqual([path, 200]);
      expect([path, to.body]).toEqual([path, withIds(from.body, renamed)]);
    };
    for (const path of [
      'config',
      'tools',
      'tools/upload_file',
      'tools/upload_file/versions',
      'tools/lookup_claim/versions',
      'tools/upload_file/examples',
      'revisions',
      'pins',
    ])
      await same(path);
    const revision = await api('GET', `/v1/agents/${b}/revisions/${renamed[a.revisionId]}`);
    expect(revision.body).toEqual(
      withIds((await api('GET', `/v1/agents/${a.agent}/revisions/${a.revisionId}`)).body, renamed),
    );
    expect(revision.body.status).toBe('applied');
    // The log and the rest come back as they were: only seqs (and marks on them), the agent and renamed ids differ.
    const logOf = async (agent: string) =>
      (await api<string>('GET', `/v1/agents/${agent}/export`)).body
        .trimEnd()
        .split('\n')
        .map((l) => {
          const { seq: _seq, reviewed_seq: _reviewed, ...line } = JSON.parse(l) as Record<string, unknown>;
          return line;
        })
        .filter((l) => l.type !== 'agent');
    expect(await logOf(b)).toEqual(withIds(await logOf(a.agent), renamed));
    // Routed alike (after the log is compared: each route adds a turn of its own to the export).
    const route = (agent: string) =>
      api('POST', `/v1/agents/${agent}/route`, { body: { request: 'attach the photo of the dent' } });
    expect((await route(b)).body.tools).toEqual((await route(a.agent)).body.tools);
    expect((await tableCounts(b)).keys).toBe(0);
    const listed = (await api('GET', '/v1/agents')).body.agents as { agent: string; calls: number }[];
    expect(listed.find((x) => x.agent === b)?.calls).toBe((await tableCounts(a.agent)).calls);
    // The imported calls were read by A's review: B's marks cover them, so B has nothing new to review.
    const marks = await env.DB.prepare('SELECT last_review_seq, last_call_seq FROM agents WHERE agent = ?1')
      .bind(b)
      .first<{ last_review_seq: number; last_call_seq: number }>();
    const last = await logDb(b)
      .prepare('SELECT MAX(seq) AS seq FROM calls WHERE agent = ?1')
      .bind(b)
      .first<{ seq: number }>();
    expect(marks).toEqual({ last_review_seq: last?.seq, last_call_seq: last?.seq });
  });

  it('refuses an agent that exists (409), a malformed line (400 naming it) and agent keys (403), writing nothing', async () => {
    const a = await busyAgent('refuse');
    const text = (await api<string>('GET', `/v1/agents/${a.agent}/export`)).body;
    const exists = await api('POST', `/v1/agents/${a.agent}/import`, { raw: text, headers: ndjson });
    expect(exists).toMatchObject({
      status: 409,
      body: {
        error: {
          code: 'conflict',
          message: `agent ${a.agent} exists; import into a new agent id, or delete this one first`,
          details: [],
        },
      },
    });
    const target = agentId('target');
    const [first, second, ...rest] = text.trimEnd().split('\n');
    const broken = [first, second, '{"type": "tool", "name": ', ...rest].join('\n');
    const bad = await api('POST', `/v1/agents/${target}/import`, { raw: broken, headers: ndjson });
    expect(bad).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request', message: 'line 3: not valid JSON', details: [] } },
    });
    const wrong = [first, JSON.stringify({ ...JSON.parse(second ?? '{}'), version: 'two' }), ...rest].join('\n');
    const mismatch = await api('POST', `/v1/agents/${target}/import`, { raw: wrong, headers: ndjson });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.message).toBe('line 2: does not match its line type');
    expect(mismatch.body.error.details).toEqual([expect.objectContaining({ path: ['version'] })]);
    const headless = await api('POST', `/v1/agents/${target}/import`, { raw: rest.join('\n'), headers: ndjson });
    expect(headless.body.error.message).toBe('line 1: the first line must be the agent line ({"type": "agent", …})');
    const twice = await api('POST', `/v1/agents/${target}/import`, {
      raw: [first, second, second].join('\n'),
      headers: ndjson,
    });
    expect(twice.body.error.message).toMatch(/^line 3: tool "(upload_file|lookup_claim)" appears twice$/);
    const needAdmin = { error: { code: 'forbidden', message: 'this route needs the admin token', details: [] } };
    const byKey = await api('POST', `/v1/agents/${target}/import`, { raw: text, headers: ndjson, token: a.key });
    expect([byKey.status, byKey.body]).toEqual([403, needAdmin]);
    const exportByKey = await api('GET', `/v1/agents/${a.agent}/export`, { token: a.key });
    expect([exportByKey.status, exportByKey.body]).toEqual([403, needAdmin]);
    expect(Object.values(await tableCounts(target)).every((n) => n === 0)).toBe(true);
    expect((await api('GET', `/v1/agents/${target}/config`)).status).toBe(404);
    expect((await api('GET', `/v1/agents/${target}/export`)).body).toEqual({
      error: { code: 'not_found', message: `agent ${target} not found`, details: [] },
    });
  });

  it('takes an export bigger than the 1 MiB request limit, up to 16 MiB', async () => {
    const agent = agentId('big');
    const head = {
      type: 'agent',
      format: 1,
      agent,
      created_at: new Date().toISOString(),
      settings: {},
      last_review_at: null,
      last_review_seq: 0,
    };
    const calls = Array.from({ length: 4000 }, (_, i) => ({
      type: 'call',
      seq: i + 1,
      call_id: `c${i}`,
      tool: 'lookup_claim',
      arguments: { note: 'x'.repeat(400) },
      success: true,
      error: null,
      request: null,
      turn_id: null,
      conversation_id: null,
      at: new Date().toISOString(),
    }));
    const text = [head, ...calls].map((l) => JSON.stringify(l)).join('\n');
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const res = await api('POST', `/v1/agents/${agent}/import`, { raw: text, headers: ndjson });
    expect(res.status).toBe(200);
    expect(res.body.imported.calls).toBe(4000);
    expect((await tableCounts(agent)).calls).toBe(4000);
    const tooBig = await api('POST', `/v1/agents/${agentId('huge')}/import`, {
      raw: ' '.repeat(16 * 1024 * 1024 + 1),
      headers: ndjson,
    });
    expect(tooBig).toMatchObject({
      status: 413,
      body: {
        error: { code: 'payload_too_large', message: `the request body is larger than ${16 * 1024 * 1024} bytes` },
      },
    });
  });
});
