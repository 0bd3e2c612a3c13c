/**
 * A complete agent loop against a local Whetstone, offline: no LLM, no key, no network beyond
 * localhost. Run `npm start` in one terminal, then `npm run example` (or `npx tsx examples/agent-loop.ts`).
 *
 * It registers a small shop toolbox, serves six user requests with `withWhetstone` (each turn is
 * routed; each tool call is run by a local handler and reported with its success), then asks for a
 * review, applies what it proposes and prints the tool as the model now sees it.
 *
 * The "model" is a scripted stand-in with the OpenAI client's shape: it calls the top-routed tool
 * with arguments read from the request, retries once when the tool's error says what was wrong,
 * and then answers. Swap it for `new OpenAI()` and a real model name to run the same loop for real.
 *
 * Settings: WHETSTONE_URL (default http://localhost:8787), WHETSTONE_TOKEN (default: ADMIN_TOKEN
 * from the .dev.vars that `npm start` wrote), WHETSTONE_AGENT (default: a fresh example agent).
 */
import { readFileSync } from 'node:fs';
import {
  createClient,
  withWhetstone,
  type ChatClient,
  type ChatRequest,
  type ToolDef,
  type ToolHandler,
} from 'whetstone/client';

const url = process.env.WHETSTONE_URL ?? 'http://localhost:8787';
const token = process.env.WHETSTONE_TOKEN ?? tokenFromDevVars();
const agent = process.env.WHETSTONE_AGENT ?? `example-${Date.now().toString(36)}`;

const object = (properties: Record<string, { type: string }>) => ({ type: 'object', properties });
const tools: ToolDef[] = [
  {
    name: 'get_order',
    description: 'Look up an order by its id: status, items and delivery date.',
    parameters: object({ order_id: { type: 'string' } }),
  },
  {
    name: 'refund_order',
    description: 'Refund money on an order, fully or in part.',
    parameters: object({ order_id: { type: 'string' }, amount: { type: 'number' } }),
  },
  {
    name: 'get_weather',
    description: 'Weather for a city: will it rain, temperature and wind, today or tomorrow.',
    parameters: object({ city: { type: 'string' } }),
  },
  {
    name: 'send_email',
    description: 'Send an email message to a recipient.',
    parameters: object({ to: { type: 'string' }, body: { type: 'string' } }),
  },
];

/** The agent's own tool code. A throw, or a result with `error`, is a failed call. */
const handlers: Record<string, ToolHandler> = {
  get_order: ({ order_id }) => {
    if (!/^ORD-\d+$/.test(String(order_id))) throw new Error('order_id must start with the ORD- prefix');
    return { order_id, status: 'shipped', items: 2 };
  },
  refund_order: ({ order_id, amount }) =>
    /^ORD-\d+$/.test(String(order_id)) ? { refunded: amount } : { error: 'order_id must start with the ORD- prefix' },
  get_weather: ({ city }) => ({ city, forecast: 'light rain', high_c: 17 }),
  send_email: ({ to }) => ({ sent: true, to }),
};

const requests = [
  'where is my order 1234?',
  'has order 5678 shipped yet?',
  'status of order ORD-12345 please',
  'will it rain in Lisbon tomorrow?',
  'refund 20 euros on order ORD-777',
  'email ana@example.com that the parcel is late',
];

async function main(): Promise<void> {
  const ws = createClient({ url, token, agent });
  await ws.registerTools(tools);
  console.log(`agent ${agent}: ${tools.length} tools registered at ${url}\n`);

  const loop = withWhetstone(standInModel(), ws, { model: 'stand-in', handlers, k: 3 });
  for (const [i, request] of requests.entries()) {
    const run = await loop.run(request, { conversation_id: `conversation-${i + 1}` });
    console.log(`> ${request}`);
    console.log(`  offered: ${run.route.tools.map((t) => t.name).join(', ')}`);
    for (const c of run.calls)
      console.log(
        `  ${c.success ? 'ok  ' : 'FAIL'} ${c.tool}(${JSON.stringify(c.arguments)})${c.error ? `: ${c.error}` : ''}`,
      );
    console.log(`  reply: ${run.reply ?? '(none)'}\n`);
  }

  const review = await ws.review();
  console.log(
    `review ${review.review_id}: ${review.revisions.length} revision(s) proposed, ${review.refused.length} refused`,
  );
  for (const revision of review.revisions) {
    console.log(
      `  ${revision.revision_id} ${revision.tool}: ${[...revision.notes_added, ...revision.queries_added, ...revision.avoid_added].join(' | ')}`,
    );
    const applied = await ws.apply(revision.revision_id, { approved_by: 'example' });
    console.log(`  applied (${applied.status}); ${revision.tool} as the model now sees it:\n`);
    console.log(indent((await ws.tool(revision.tool)).model_view.function.description));
  }
  console.log(
    `\nNext: npx whetstone revisions --agent ${agent}   (or undo: npx whetstone undo <tool> --by you --agent ${agent})`,
  );
}

/**
 * The stand-in model: calls the first offered tool with arguments read from the user's words;
 * after a tool error that names a prefix, retries once with the prefix; then answers in text.
 */
function standInModel(): ChatClient {
  return {
    chat: {
      completions: {
        async create(body: ChatRequest) {
          const last = body.messages.at(-1);
          const request = String(body.messages.findLast((m) => m.role === 'user')?.content ?? '');
          const offered = (
            body.tools?.[0] as
              | { function: { name: string; parameters: { properties?: Record<string, unknown> } } }
              | undefined
          )?.function;
          if (last?.role === 'user' && offered)
            return toolCall('1', offered.name, argumentsFor(offered.parameters.properties ?? {}, request));
          if (
            last?.role === 'tool' &&
            String(last.content).includes('ORD- prefix') &&
            body.messages.filter((m) => m.role === 'tool').length === 1
          ) {
            const previous = body.messages.findLast((m) => m.role === 'assistant')?.tool_calls?.[0]?.function;
            const args = JSON.parse(previous?.arguments ?? '{}') as Record<string, unknown>;
            return toolCall('2', previous?.name ?? '', { ...args, order_id: `ORD-${String(args.order_id)}` });
          }
          return { choices: [{ message: { role: 'assistant', content: `Done: ${String(last?.content ?? '')}` } }] };
        },
      },
    },
  };
}

function toolCall(id: string, name: string, args: Record<string, unknown>) {
  return {
    choices: [
      {
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
        },
      },
    ],
  };
}

/** Reads each parameter the tool declares from the request, as a model would. */
function argumentsFor(properties: Record<string, unknown>, request: string): Record<string, unknown> {
  const readers: Record<string, () => unknown> = {
    order_id: () => /\b(?:ORD-)?\d{3,}\b/.exec(request)?.[0],
    amount: () => Number(/\b(\d+(?:\.\d+)?)\s*(?:euros?|dollars?|\$|€)/.exec(request)?.[1] ?? 0),
    city: () => /\bin ([A-Z][a-z]+)/.exec(request)?.[1],
    to: () => /[\w.+-]+@[\w-]+\.[\w.]+/.exec(request)?.[0],
    body: () => request,
  };
  return Object.fromEntries(
    Object.keys(properties).flatMap((name) => {
      const value = readers[name]?.();
      return value === undefined ? [] : [[name, value]];
    }),
  );
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

function tokenFromDevVars(): string {
  try {
    const vars = readFileSync(new URL('../.dev.vars', import.meta.url), 'utf8');
    const token = /^ADMIN_TOKEN=(.+)$/m.exec(vars)?.[1]?.trim();
    if (token) return token;
  } catch {
    // no .dev.vars: fall through to the message below
  }
  console.error('Set WHETSTONE_TOKEN, or run `npm start` once so .dev.vars has an ADMIN_TOKEN.');
  process.exit(2);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  process.exit(1);
});
