/**
 * How much of the prompt stays cacheable across a 20-turn conversation (docs/tool-delivery.md), on
 * ToolE's tools, for three ways of delivering tools:
 *   all      — every tool, every turn (OpenAI Chat shape);
 *   swapped  — `/route`'s top 5 as the `tools` array, swapped each turn;
 *   deferred — the stable deferred list (sorted by name, `defer_loading`) plus a search tool whose
 *              answers (5 tools) land in the conversation, after the cached prefix. Two variants:
 *              Anthropic (deferred tools stay out of the prompt until referenced) and OpenAI
 *              Responses (a deferred function still shows its name and description).
 * Tokens are estimated as characters / 4 of the JSON sent (no provider tokenizer offline). A turn's
 * cacheable part is the byte prefix it shares with the previous turn's prompt; the first turn has none.
 * The top 5 come from BM25 over name and description (src/core/lexical.ts), a stand-in for /route.
 */
import { buildLexicalIndex } from '../src/core/lexical.ts';
import { inFormat, stableList } from '../src/core/render.ts';
import type { ModelTool } from '../src/schemas.ts';
import { loadToolE, mulberry32 } from './eval-data.ts';

const TURNS = 20;
const K = 5;
const SYSTEM = 'You are a helpful assistant. Use the tools you are given to answer the user.';
const RESULT = 'x'.repeat(400);

const data = loadToolE();
const views: ModelTool[] = data.tools.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description, parameters: { type: 'object', properties: {} } },
}));
const byName = new Map(views.map((v) => [v.function.name, v]));
const index = buildLexicalIndex(
  data.tools.map((t) => ({ id: t.name, text: `${t.name.replace(/_/g, ' ')} ${t.description}` })),
);
const rand = mulberry32(16);
const queries = [...data.queries].sort(() => rand() - 0.5).slice(0, TURNS);
const topK = (q: string) => index.top(q, K).map((h) => h.id);

const SEARCH_ANTHROPIC = {
  name: 'tool_search',
  description: 'Search the tools for the ones that can serve a request.',
  input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};
const SEARCH_OPENAI = {
  type: 'tool_search',
  execution: 'client',
  description: SEARCH_ANTHROPIC.description,
  parameters: SEARCH_ANTHROPIC.input_schema,
};

type Strategy = 'all' | 'swapped' | 'deferred_anthropic' | 'deferred_openai';

/** The prompt of each turn as [tools part, messages part] strings. */
function prompts(strategy: Strategy): { tools: string; messages: string }[] {
  const history: unknown[] = [];
  const out: { tools: string; messages: string }[] = [];
  const stable = {
    all: JSON.stringify(views),
    deferred_anthropic: JSON.stringify([SEARCH_ANTHROPIC]),
    // A deferred Responses function still shows its name and description; its schema is deferred.
    deferred_openai: JSON.stringify([
      SEARCH_OPENAI,
      ...stableList(views, 'openai', true, new Set()).map((t) => ({
        type: 'function',
        name: (t as ModelTool).function.name,
        description: (t as ModelTool).function.description,
        defer_loading: true,
      })),
    ]),
  };
  for (const q of queries) {
    const picked = topK(q.text);
    history.push({ role: 'user', content: q.text });
    let tools: string;
    if (strategy === 'swapped') tools = JSON.stringify(picked.map((n) => byName.get(n)));
    else tools = stable[strategy];
    if (strategy === 'deferred_anthropic' || strategy === 'deferred_openai') {
      history.push({
        role: 'assistant',
        content: [{ type: 'tool_use', name: 'tool_search', input: { query: q.text } }],
      });
      // The search answer references the 5 tools; their definitions load after the cached prefix.
      history.push({ role: 'user', content: picked.map((n) => inFormat(byName.get(n)!, 'anthropic')) });
    }
    out.push({ tools, messages: JSON.stringify([{ role: 'system', content: SYSTEM }, ...history]) });
    history.push({ role: 'assistant', content: [{ type: 'tool_use', name: picked[0] ?? 'none', input: {} }] });
    history.push({ role: 'user', content: [{ type: 'tool_result', content: RESULT }] });
  }
  return out;
}

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const tokens = (chars: number) => Math.ceil(chars / 4);

console.log(`ToolE: ${data.tools.length} tools, ${TURNS}-turn conversation, top ${K}; tokens ≈ characters / 4`);
console.log(
  '| delivery | tool-list tokens per turn | prompt tokens, turn 20 | cacheable share (turns 2–20, of all prompt tokens) | cacheable share at turn 20 | uncached tokens, 20 turns | prompt tokens, 20 turns |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const strategy of ['all', 'swapped', 'deferred_anthropic', 'deferred_openai'] as const) {
  const turns = prompts(strategy);
  let cached = 0;
  let total = 0;
  let toolTokens = 0;
  let last = 0;
  let uncached = 0;
  let sent = 0;
  turns.forEach((t, i) => {
    const prompt = t.tools + t.messages;
    const prev = i === 0 ? '' : turns[i - 1]!.tools + turns[i - 1]!.messages;
    const c = sharedPrefix(prompt, prev);
    uncached += prompt.length - c;
    sent += prompt.length;
    if (i > 0) {
      cached += c;
      total += prompt.length;
    }
    toolTokens += tokens(t.tools.length);
    if (i === turns.length - 1) last = c / prompt.length;
  });
  const final = turns[turns.length - 1]!;
  console.log(
    `| ${strategy} | ${Math.round(toolTokens / turns.length)} | ${tokens(final.tools.length + final.messages.length)} | ${((100 * cached) / total).toFixed(1)}% | ${(100 * last).toFixed(1)}% | ${tokens(uncached)} | ${tokens(sent)} |`,
  );
}
