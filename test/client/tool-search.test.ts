/**
 * The tool-search helpers end to end: the example loops (examples/tool-search-loops.ts) talk to the
 * local fake Anthropic and OpenAI Responses servers (test/fake-provider-server.ts), which check each
 * request's documented shape and that the tools prefix is byte-identical across turns, while the
 * helpers route through the Worker. A routed search records a turn; the reported calls reach the
 * next review as evidence.
 */
import { exports } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import { createClient } from 'whetstone/client';
import { anthropicLoop, type Handler, type LoopInput, responsesLoop } from '../../examples/tool-search-loops.ts';
import { logDb, storedTurn } from '../helpers/log.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { CLAIM_TOOLS, tool } from '../helpers/tools.ts';

const TOOLS = [
  CLAIM_TOOLS.lookup_claim,
  CLAIM_TOOLS.upload_file,
  tool('get_weather', 'Current weather for a city.', { city: { type: 'string' } }),
];
const handlers: Record<string, Handler> = {
  upload_file: async (args) => {
    const ref = String(args.claim_ref);
    if (!ref.startsWith('CW-')) throw new Error(`claim_ref "${ref}" not found; references start with CW-`);
    return { attached: ref };
  },
};

async function setup(prefix: string) {
  const agent = agentId(prefix);
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
  const whetstone = createClient({
    url: 'http://whetstone.test',
    token: ADMIN,
    agent,
    fetch: (req) => exports.default.fetch(req),
  });
  return { agent, whetstone, provider: inject('fakeProviders'), model: `m-${agent}` };
}

async function script(provider: string, model: string, replies: unknown[][]) {
  const res = await fetch(`${provider}/_script`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, replies }),
  });
  expect(res.status).toBe(200);
}

async function received(
  provider: string,
  model: string,
): Promise<{ bodies: { tools: unknown }[]; violations: string[] }> {
  return (await fetch(`${provider}/_calls?model=${encodeURIComponent(model)}`)).json();
}

async function turnOf(agent: string, turnId: string) {
  return storedTurn(agent, turnId, 'request, conversation_id');
}

/** Runs `loop` for two claims (conversations c1 and c2) as scripted, each ending "attached <n>": their turns. */
async function twoClaims(
  loop: (input: LoopInput) => Promise<{ text: string; turnId: string | null }>,
  ctx: Pick<LoopInput, 'whetstone' | 'provider' | 'model'>,
): Promise<string[]> {
  const turns: string[] = [];
  for (const n of [1, 2]) {
    const out = await loop({ ...ctx, request: `upload for claim ${n}`, handlers, conversationId: `c${n}` });
    expect(out.text).toBe(`attached ${n}`);
    expect(out.turnId).not.toBeNull();
    turns.push(out.turnId!);
  }
  return turns;
}

/** Each claim's failed then good upload is logged in its turn, and the failed ones are a review's evidence. */
async function expectCallsAndEvidence(agent: string, turns: string[]) {
  const calls = await logDb(agent)
    .prepare('SELECT call_id, success, turn_id FROM calls WHERE agent = ?1 ORDER BY seq')
    .bind(agent)
    .all();
  expect(calls.results).toEqual([
    { call_id: `${agent}-bad1`, success: 0, turn_id: turns[0] },
    { call_id: `${agent}-ok1`, success: 1, turn_id: turns[0] },
    { call_id: `${agent}-bad2`, success: 0, turn_id: turns[1] },
    { call_id: `${agent}-ok2`, success: 1, turn_id: turns[1] },
  ]);
  await expectReviewEvidence(agent, [`${agent}-bad1`, `${agent}-bad2`]);
}

/** Two failed upload calls then a good one, each after a routed search, reach a review as failed_call evidence. */
async function expectReviewEvidence(agent: string, failedIds: string[]) {
  const review = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } });
  expect(review.status).toBe(200);
  const upload = review.body.revisions.find((r: { tool: string }) => r.tool === 'upload_file');
  expect(upload).toBeDefined();
  const failed = upload.evidence
    .filter((e: { kind: string }) => e.kind === 'failed_call')
    .map((e: { call_id: string }) => e.call_id);
  expect(failed.sort()).toEqual([...failedIds].sort());
}

describe('Anthropic Messages with Whetstone as the custom tool search', () => {
  it('keeps the tools prefix byte-identical, answers searches with tool_reference blocks, records turns and calls', async () => {
    const { agent, whetstone, provider, model } = await setup('anth');
    const convo = (n: number) => [
      [{ type: 'tool_use', id: `${agent}-s${n}`, name: 'tool_search', input: { query: 'attach a photo to my claim' } }],
      [
        {
          type: 'tool_use',
          id: `${agent}-bad${n}`,
          name: 'upload_file',
          input: { claim_ref: `12345${n}`, file_mb: 2 },
        },
      ],
      [
        {
          type: 'tool_use',
          id: `${agent}-ok${n}`,
          name: 'upload_file',
          input: { claim_ref: `CW-12345${n}`, file_mb: 2 },
        },
      ],
      [{ type: 'text', text: `attached ${n}` }],
    ];
    await script(provider, model, [...convo(1), ...convo(2)]);
    const turns = await twoClaims(anthropicLoop, { whetstone, provider, model });
    const seen = await received(provider, model);
    expect(seen.violations).toEqual([]);
    expect(seen.bodies).toHaveLength(8);
    const tools = seen.bodies[0]!.tools as { name: string; defer_loading?: boolean }[];
    expect(tools.map((t) => t.name)).toEqual(['get_weather', 'lookup_claim', 'upload_file', 'tool_search']);
    expect(tools.slice(0, 3).every((t) => t.defer_loading === true)).toBe(true);
    expect(tools[3]).not.toHaveProperty('defer_loading');
    for (const body of seen.bodies) expect(JSON.stringify(body.tools)).toBe(JSON.stringify(tools));
    const second = seen.bodies[1] as unknown as {
      messages: { content: { type: string; content?: { type: string; tool_name: string }[] }[] }[];
    };
    const refs = second.messages[2]!.content[0]!.content!;
    expect(refs[0]).toEqual({ type: 'tool_reference', tool_name: 'upload_file' });
    expect(await turnOf(agent, turns[0]!)).toEqual({ request: 'attach a photo to my claim', conversation_id: 'c1' });
    await expectCallsAndEvidence(agent, turns);
  });

  it('the fake refuses a tools array that changed between turns', async () => {
    const { provider, model } = await setup('anthfake');
    const body = (description: string) => ({
      model,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 'tool_search', description, input_schema: { type: 'object' } }],
    });
    const send = (b: unknown) =>
      fetch(`${provider}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(b),
      });
    expect((await send(body('a'))).status).toBe(200);
    expect((await send(body('b'))).status).toBe(400);
    expect((await received(provider, model)).violations).toEqual([
      'tools differ from the first request: the cached prefix is broken',
    ]);
  });
});

describe('OpenAI Responses with Whetstone as the client-executed tool_search', () => {
  it('keeps the tools prefix byte-identical, answers tool_search_call with tool_search_output, records turns and calls', async () => {
    const { agent, whetstone, provider, model } = await setup('resp');
    const convo = (n: number) => [
      [
        {
          type: 'tool_search_call',
          call_id: `${agent}-s${n}`,
          execution: 'client',
          arguments: { query: 'attach a photo to my claim' },
        },
      ],
      [
        {
          type: 'function_call',
          call_id: `${agent}-bad${n}`,
          name: 'upload_file',
          arguments: JSON.stringify({ claim_ref: `12345${n}`, file_mb: 2 }),
        },
      ],
      [
        {
          type: 'function_call',
          call_id: `${agent}-ok${n}`,
          name: 'upload_file',
          arguments: JSON.stringify({ claim_ref: `CW-12345${n}`, file_mb: 2 }),
        },
      ],
      [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `attached ${n}` }] }],
    ];
    await script(provider, model, [...convo(1), ...convo(2)]);
    const turns = await twoClaims(responsesLoop, { whetstone, provider, model });
    const seen = await received(provider, model);
    expect(seen.violations).toEqual([]);
    expect(seen.bodies).toHaveLength(8);
    const tools = seen.bodies[0]!.tools as {
      type: string;
      name?: string;
      defer_loading?: boolean;
      execution?: string;
    }[];
    expect(tools[0]).toMatchObject({ type: 'tool_search', execution: 'client' });
    expect(tools.slice(1).map((t) => [t.name, t.defer_loading])).toEqual([
      ['get_weather', true],
      ['lookup_claim', true],
      ['upload_file', true],
    ]);
    for (const body of seen.bodies) expect(JSON.stringify(body.tools)).toBe(JSON.stringify(tools));
    const second = seen.bodies[1] as unknown as {
      input: { type?: string; tools?: { name: string; parameters: unknown }[] }[];
    };
    const answer = second.input.find((i) => i.type === 'tool_search_output')!;
    expect(answer.tools![0]).toEqual({
      type: 'function',
      name: 'upload_file',
      description: TOOLS[1]!.description,
      parameters: TOOLS[1]!.parameters,
      defer_loading: true,
    });
    expect(await turnOf(agent, turns[1]!)).toEqual({ request: 'attach a photo to my claim', conversation_id: 'c2' });
    await expectCallsAndEvidence(agent, turns);
  });
});
