/**
 * examples/tool-search-loops.ts in Node against the Worker under `wrangler dev`, with the fake
 * Anthropic and OpenAI Responses servers (test/fake-provider-server.ts) as the providers.
 */
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { anthropicLoop, responsesLoop, type Handler } from '../../examples/tool-search-loops.ts';
import { createClient } from '../../src/client/index.ts';
import { startFakeProviders, type FakeProviders } from '../fake-provider-server.ts';

let fake: FakeProviders;
beforeAll(async () => {
  fake = await startFakeProviders();
});
afterAll(async () => {
  await fake.close();
});

const object = (properties: Record<string, { type: string }>) => ({ type: 'object', properties });
const handlers: Record<string, Handler> = {
  get_order: async (args) => {
    const id = String(args.order_id);
    if (!id.startsWith('ORD-')) throw new Error('order_id must start with the ORD- prefix');
    return { id, status: 'shipped' };
  },
};

async function script(model: string, replies: unknown[][]) {
  await fetch(`${fake.url}/_script`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, replies }),
  });
}

for (const provider of ['anthropic', 'responses'] as const) {
  it(`${provider}: a routed search records a turn and the reported calls reach the next review`, async () => {
    const agent = `tool-search-${provider}-${Date.now().toString(36)}`;
    const ws = createClient({ url: inject('workerUrl'), token: inject('adminToken'), agent });
    await ws.registerTools([
      {
        name: 'get_order',
        description: 'Look up an order by its id: status, items and delivery date.',
        parameters: object({ order_id: { type: 'string' } }),
      },
      {
        name: 'get_weather',
        description: 'Weather for a city: will it rain, temperature and wind.',
        parameters: object({ city: { type: 'string' } }),
      },
    ]);
    const model = `m-${agent}`;
    const steps = (n: number) =>
      provider === 'anthropic'
        ? [
            [{ type: 'tool_use', id: `s${n}`, name: 'tool_search', input: { query: 'where is my order' } }],
            [{ type: 'tool_use', id: `${agent}-bad${n}`, name: 'get_order', input: { order_id: `12${n}` } }],
            [{ type: 'tool_use', id: `${agent}-ok${n}`, name: 'get_order', input: { order_id: `ORD-12${n}` } }],
            [{ type: 'text', text: 'shipped' }],
          ]
        : [
            [
              {
                type: 'tool_search_call',
                call_id: `s${n}`,
                execution: 'client',
                arguments: { query: 'where is my order' },
              },
            ],
            [
              {
                type: 'function_call',
                call_id: `${agent}-bad${n}`,
                name: 'get_order',
                arguments: JSON.stringify({ order_id: `12${n}` }),
              },
            ],
            [
              {
                type: 'function_call',
                call_id: `${agent}-ok${n}`,
                name: 'get_order',
                arguments: JSON.stringify({ order_id: `ORD-12${n}` }),
              },
            ],
            [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'shipped' }] }],
          ];
    await script(model, [...steps(1), ...steps(2)]);
    const loop = provider === 'anthropic' ? anthropicLoop : responsesLoop;
    for (const n of [1, 2]) {
      const out = await loop({
        whetstone: ws,
        provider: fake.url,
        model,
        request: `where is order ${n}?`,
        handlers,
        conversationId: `c${n}`,
      });
      expect(out.text).toBe('shipped');
      expect(out.turnId).toMatch(/\S/);
    }
    const seen = (await (await fetch(`${fake.url}/_calls?model=${model}`)).json()) as {
      bodies: unknown[];
      violations: string[];
    };
    expect(seen.violations).toEqual([]);
    expect(seen.bodies).toHaveLength(8);
    const review = await ws.review({ dry_run: true });
    const revision = review.revisions.find((r) => r.tool === 'get_order');
    expect(
      revision?.evidence
        .filter((e) => e.kind === 'failed_call')
        .map((e) => e.call_id)
        .sort(),
    ).toEqual([`${agent}-bad1`, `${agent}-bad2`]);
  });
}
