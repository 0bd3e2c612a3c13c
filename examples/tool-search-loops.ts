/**
 * Agent loops that keep the prompt prefix cacheable: the tool list is Whetstone's stable deferred
 * list, and Whetstone answers the model's tool search (docs/tool-delivery.md). One loop for the
 * Anthropic Messages API, one for the OpenAI Responses API, both with plain fetch.
 *
 * `provider` is the API base (e.g. https://api.anthropic.com or https://api.openai.com); the tests run
 * these loops against local fakes (test/fake-provider-server.ts) that check every request's shape.
 */
import {
  anthropicToolSearch,
  responsesToolSearch,
  SEARCH_TOOL_NAME,
  type ReportedCall,
  type WhetstoneClient,
} from 'whetstone/client';

/** Runs one tool call: a result, or a thrown error whose message the model sees. */
export type Handler = (args: Record<string, unknown>) => Promise<unknown>;

export interface LoopInput {
  whetstone: WhetstoneClient;
  provider: string;
  model: string;
  request: string;
  handlers: Record<string, Handler>;
  conversationId?: string;
  headers?: Record<string, string>;
  maxSteps?: number;
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function run(
  handlers: Record<string, Handler>,
  id: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ output: string; call: ReportedCall }> {
  const handler = handlers[tool];
  try {
    if (!handler) throw new Error(`no tool ${tool}`);
    const output = JSON.stringify(await handler(args));
    return { output, call: { id, tool, arguments: args, success: true } };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    return { output: error, call: { id, tool, arguments: args, success: false, error } };
  }
}

/** Anthropic Messages: the answer's text, and the turn the last search recorded. */
export async function anthropicLoop(input: LoopInput): Promise<{ text: string; turnId: string | null }> {
  const search = anthropicToolSearch({
    whetstone: input.whetstone,
    ...(input.conversationId ? { conversationId: input.conversationId } : {}),
  });
  const tools = await search.tools();
  const messages: { role: string; content: unknown }[] = [{ role: 'user', content: input.request }];
  const headers = { 'anthropic-version': '2023-06-01', ...input.headers };
  for (let step = 0; step < (input.maxSteps ?? 8); step++) {
    const reply = await post(
      `${input.provider}/v1/messages`,
      { model: input.model, max_tokens: 1024, tools, messages },
      headers,
    );
    const content = reply.content as {
      type: string;
      id?: string;
      name?: string;
      input?: Record<string, unknown>;
      text?: string;
    }[];
    messages.push({ role: 'assistant', content });
    const uses = content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0)
      return {
        text: content.flatMap((b) => (b.type === 'text' ? [b.text ?? ''] : [])).join(''),
        turnId: search.turnId,
      };
    const results: unknown[] = [];
    const calls: ReportedCall[] = [];
    for (const use of uses) {
      if (use.name === SEARCH_TOOL_NAME) {
        results.push(await search.answer({ id: use.id ?? '', input: use.input }));
        continue;
      }
      const { output, call } = await run(input.handlers, use.id ?? '', use.name ?? '', use.input ?? {});
      calls.push(call);
      results.push({
        type: 'tool_result',
        tool_use_id: use.id,
        content: output,
        ...(call.success ? {} : { is_error: true }),
      });
    }
    await search.report(calls);
    messages.push({ role: 'user', content: results });
  }
  throw new Error('anthropicLoop: too many steps');
}

/** OpenAI Responses with a client-executed tool_search: the answer's text, and the turn the last search recorded. */
export async function responsesLoop(input: LoopInput): Promise<{ text: string; turnId: string | null }> {
  const search = responsesToolSearch({
    whetstone: input.whetstone,
    ...(input.conversationId ? { conversationId: input.conversationId } : {}),
  });
  const tools = await search.tools();
  const items: unknown[] = [{ role: 'user', content: input.request }];
  for (let step = 0; step < (input.maxSteps ?? 8); step++) {
    const reply = await post(
      `${input.provider}/v1/responses`,
      { model: input.model, tools, input: items },
      input.headers ?? {},
    );
    const output = reply.output as {
      type: string;
      call_id?: string;
      name?: string;
      arguments?: string;
      content?: { type: string; text?: string }[];
    }[];
    items.push(...output);
    const pending = output.filter((o) => o.type === 'tool_search_call' || o.type === 'function_call');
    if (pending.length === 0) {
      const text = output
        .flatMap((o) => (o.type === 'message' ? (o.content ?? []).map((c) => c.text ?? '') : []))
        .join('');
      return { text, turnId: search.turnId };
    }
    const calls: ReportedCall[] = [];
    for (const item of pending) {
      if (item.type === 'tool_search_call') {
        items.push(await search.answer({ call_id: item.call_id ?? '', arguments: item.arguments }));
        continue;
      }
      const args = JSON.parse(item.arguments ?? '{}') as Record<string, unknown>;
      const { output: result, call } = await run(input.handlers, item.call_id ?? '', item.name ?? '', args);
      calls.push(call);
      items.push({ type: 'function_call_output', call_id: item.call_id, output: result });
    }
    await search.report(calls);
  }
  throw new Error('responsesLoop: too many steps');
}
