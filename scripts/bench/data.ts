/**
 * What the bench sends: the ToolE tools (names made valid), generated variants of them to reach
 * 2,000 and 10,000 tools, ToolE requests for `/route`, and a synthetic call log for ingestion and
 * the review. Everything is seeded, so every run sends the same bytes.
 */
import { wordingKey } from '../../src/core/routing-memory.ts';
import { loadToolE, mulberry32, type EvalQuery } from '../eval-data.ts';

/** A plain ToolDef (docs/api.md) as the bench registers it. */
export interface BenchTool {
  name: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, { type: string; description: string }> };
}

/** A call as `POST …/calls` takes it. */
export interface BenchCall {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
  success: boolean;
  error?: string;
  request: string;
  turn_id: string;
  conversation_id: string;
}

const ARGUMENTS = [
  'query',
  'city',
  'date',
  'limit',
  'language',
  'currency',
  'amount',
  'topic',
  'url',
  'user_id',
  'category',
  'format',
];
const QUALIFIERS = [
  'for teams',
  'for travellers',
  'in real time',
  'for students',
  'for small businesses',
  'with history',
  'offline',
  'in bulk',
  'for developers',
  'on mobile',
];
const ERRORS = [
  'missing required argument',
  'invalid date format, use YYYY-MM-DD',
  'rate limit exceeded, retry later',
  'unknown city name',
  'upstream timeout',
];

function pick<T>(items: readonly T[], random: () => number): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function parametersFor(random: () => number): BenchTool['parameters'] {
  const properties: BenchTool['parameters']['properties'] = {};
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i++) {
    const name = pick(ARGUMENTS, random);
    properties[name] = {
      type: name === 'limit' || name === 'amount' ? 'number' : 'string',
      description: `the ${name.replace('_', ' ')}`,
    };
  }
  return { type: 'object', properties };
}

/** The words of a description worth borrowing (so variants differ in content, not only in name). */
function contentWords(text: string): string[] {
  return text.split(/[^A-Za-z]+/).filter((w) => w.length > 4);
}

/**
 * A toolbox of `size` tools: the 199 ToolE tools first, then variants. Variant `v` of ToolE tool `t`
 * keeps t's description, adds a qualifier and a few words of another tool, so the toolbox grows the
 * way a real one does: many near neighbours, each text distinct.
 */
export function toolbox(size: number): BenchTool[] {
  const base = loadToolE().tools;
  const random = mulberry32(size);
  const tools: BenchTool[] = base
    .slice(0, size)
    .map((t) => ({ name: t.name, description: t.description, parameters: parametersFor(random) }));
  for (let i = tools.length; i < size; i++) {
    const t = base[i % base.length];
    const other = base[(i * 7 + 3) % base.length];
    if (t === undefined || other === undefined) throw new Error('ToolE has no tools');
    const borrowed = contentWords(other.description).slice(0, 3).join(', ').toLowerCase();
    tools.push({
      name: `${t.name}_v${Math.floor(i / base.length)}`,
      description: `${t.description} Variant ${pick(QUALIFIERS, random)}; also covers ${borrowed}.`,
      parameters: parametersFor(random),
    });
  }
  return tools;
}

/** `count` ToolE requests spread over every tool (every n-th row of queries.csv), for `/route`. */
export function routeRequests(count: number): EvalQuery[] {
  const queries = loadToolE().queries;
  const step = Math.max(1, Math.floor(queries.length / count));
  return queries.filter((_, i) => i % step === 0).slice(0, count);
}

/**
 * A call log of `count` calls in the shape agents report them: one call per turn, three turns per
 * conversation, requests and tools from ToolE's labelled rows, one call in eight failing with a
 * recurring error. The calls go to the first `toolCount` ToolE tools, so a small log already fills
 * a review's per-tool bounds (docs/learning.md max_calls_per_tool) and a large one differs only in size.
 * `prefix` keeps ids unique per agent.
 */
export function callLog(count: number, prefix: string, toolCount: number): BenchCall[] {
  const { tools, queries: all } = loadToolE();
  const chosen = new Set(tools.slice(0, toolCount).map((t) => t.name));
  const queries = all.filter((q) => chosen.has(q.tool));
  const random = mulberry32(count);
  const calls: BenchCall[] = [];
  for (let i = 0; i < count; i++) {
    const q = queries[Math.floor(random() * queries.length)];
    if (q === undefined) throw new Error('ToolE has no queries');
    const success = random() >= 0.125;
    calls.push({
      id: `${prefix}-c${i}`,
      tool: q.tool,
      arguments: { query: q.text.slice(0, 60), limit: 1 + (i % 10) },
      success,
      ...(success ? {} : { error: pick(ERRORS, random) }),
      request: q.text.slice(0, 4000),
      turn_id: `${prefix}-t${i}`,
      conversation_id: `${prefix}-conv${Math.floor(i / 3)}`,
    });
  }
  return calls;
}

/**
 * Every tool's routing memory filled to `budgetBytes` (src/core/routing-memory.ts), as a busy agent's
 * would be: wordings taken from ToolE's requests for the tool's own ToolE original, cycling through
 * them from an offset that moves with each variant, so neighbouring variants remember different
 * requests. The original's requests are too few for fifty variants of ~9 wordings each, so a
 * variant's wording carries its qualifier ("… for teams") and, once those run out too, one of its
 * borrowed words: every wording is distinct across the whole toolbox (as retrieval sees it), so no
 * two tools look like companions by construction. Wordings are added while the next still fits the
 * budget (UTF-8 bytes), skipping one that does not fit for a shorter one, newest first.
 */
/** Bytes left under which no ToolE request (with a tail) fits: the memory is full. */
const SHORTEST_WORDING = 24;

export function fullMemory(
  tools: readonly BenchTool[],
  budgetBytes: number,
  at: number,
): { text: string; at: number }[][] {
  const { tools: base, queries } = loadToolE();
  const byTool = new Map<string, string[]>();
  for (const q of queries) {
    const list = byTool.get(q.tool) ?? [];
    list.push(q.text.replace(/[?.!\s]+$/, ''));
    byTool.set(q.tool, list);
  }
  const encoder = new TextEncoder();
  const seen = new Set<string>();
  return tools.map((tool, i) => {
    const original = base[i % base.length];
    const asked = (original && byTool.get(original.name)) || [];
    const variant = Math.floor(i / base.length);
    const tails = variant === 0 ? [''] : [...QUALIFIERS, ...contentWords(tool.description)].map((t) => ` ${t}`);
    const memory: { text: string; at: number }[] = [];
    let bytes = 0;
    for (let j = 0; j < asked.length * tails.length && asked.length > 0; j++) {
      const request = asked[(variant * 23 + j) % asked.length] ?? '';
      const text = `${request}${tails[(variant + Math.floor(j / asked.length)) % tails.length] ?? ''}`;
      const size = encoder.encode(text).length;
      if (bytes + size > budgetBytes) continue;
      const key = wordingKey(text);
      if (seen.has(key)) continue;
      seen.add(key);
      memory.push({ text, at: at - memory.length * 60_000 });
      bytes += size;
      if (budgetBytes - bytes < SHORTEST_WORDING) break;
    }
    return memory;
  });
}
