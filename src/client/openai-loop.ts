/**
 * `withWhetstone`: an OpenAI chat-completions tool loop that routes every turn through Whetstone
 * and reports every tool call it executes (docs/api.md `/route`, `/calls`). The OpenAI client is typed
 * structurally, so neither this module nor a bundle of the client imports the `openai` package; an
 * `OpenAI` instance (or any OpenAI-compatible client with the same shape) fits.
 */
import type { Call, RecordCallsAnswer, RouteResult } from './types.ts';

/** The part of a tool call the loop reads; custom (non-function) tool calls are answered, not run. */
export interface ToolCallLike {
  id: string;
  type: string;
  function?: { name: string; arguments: string };
}

/** A chat message in the OpenAI shape (system, user, assistant or tool). */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: ToolCallLike[] | undefined;
  tool_call_id?: string;
}

/** What the loop sends to `chat.completions.create`. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: unknown[];
}

/** The part of a chat completion the loop reads. */
export interface ChatCompletionLike {
  choices: Array<{ message: { role: string; content?: string | null; tool_calls?: ToolCallLike[] | undefined } }>;
}

/** An OpenAI client, structurally: `new OpenAI()` fits, and so does a scripted stand-in. */
export interface ChatClient {
  chat: { completions: { create(body: ChatRequest): PromiseLike<ChatCompletionLike> } };
}

/** The parts of the Whetstone client the loop uses. */
export interface LoopWhetstone {
  route(input: { request: string; conversation_id?: string; k?: number }): Promise<RouteResult>;
  recordCalls(calls: Call[]): Promise<RecordCallsAnswer>;
}

/**
 * Runs one tool. A throw, or a result object with a non-null `error`, is a failed call (docs/learning.md
 * evidence); anything else is a success. The result is sent to the model as JSON.
 */
export type ToolHandler = (args: Record<string, unknown>) => unknown;

export interface LoopOptions {
  model: string;
  handlers: Record<string, ToolHandler>;
  /** Model calls per turn before the loop stops (default 8). */
  maxSteps?: number;
  /** Tools to offer per turn (default: the agent's `top_k`). */
  k?: number;
  /** Extra chat-completion parameters sent with every call (temperature, …). */
  params?: Record<string, unknown>;
}

/** One tool call the loop ran, as it was reported. */
export interface ExecutedCall {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
  success: boolean;
  error: string | null;
  result: unknown;
}

/** What one turn did. `messages` is the history to pass to the next turn of the conversation. */
export interface LoopRun {
  turn_id: string;
  route: RouteResult;
  reply: string | null;
  messages: ChatMessage[];
  calls: ExecutedCall[];
  recorded: RecordCallsAnswer | null;
}

export interface WhetstoneLoop {
  /** Serves one user request: route, model, tools, model … until the model answers in text. */
  run(request: string, opts?: { conversation_id?: string; messages?: ChatMessage[] }): Promise<LoopRun>;
}

/** docs/api.md limits the loop respects rather than have a long message refused. */
const REQUEST_CHARS = 4000;
const ERROR_CHARS = 4000;
const ID_CHARS = 128;

/** Wraps an OpenAI client so each turn is routed and each executed tool call is recorded. */
export function withWhetstone(openai: ChatClient, whetstone: LoopWhetstone, options: LoopOptions): WhetstoneLoop {
  const maxSteps = options.maxSteps ?? 8;
  return {
    async run(request, opts = {}) {
      const route = await whetstone.route({
        request: request.slice(0, REQUEST_CHARS),
        ...(opts.conversation_id !== undefined ? { conversation_id: opts.conversation_id } : {}),
        ...(options.k !== undefined ? { k: options.k } : {}),
      });
      const messages: ChatMessage[] = [...(opts.messages ?? []), { role: 'user', content: request }];
      const calls: ExecutedCall[] = [];
      const outcome = await converse(openai, options, route, messages, calls, maxSteps).then(
        (reply) => ({ reply }),
        (error: unknown) => ({ error }),
      );
      // Calls already run are reported even when a model call failed midway.
      const recorded =
        calls.length > 0
          ? await whetstone.recordCalls(calls.map((c) => toCall(c, request, route.turn_id, opts.conversation_id)))
          : null;
      if ('error' in outcome) throw outcome.error;
      const reply = outcome.reply;
      return { turn_id: route.turn_id, route, reply, messages, calls, recorded };
    },
  };
}

async function converse(
  openai: ChatClient,
  options: LoopOptions,
  route: RouteResult,
  messages: ChatMessage[],
  calls: ExecutedCall[],
  maxSteps: number,
): Promise<string | null> {
  for (let step = 0; step < maxSteps; step += 1) {
    const body: ChatRequest = { ...options.params, model: options.model, messages };
    if (route.model_tools.length > 0) body.tools = route.model_tools;
    const message = (await openai.chat.completions.create(body)).choices[0]?.message;
    if (!message) return null;
    messages.push(message);
    if (!message.tool_calls || message.tool_calls.length === 0) return message.content ?? null;
    for (const toolCall of message.tool_calls) {
      const executed = await execute(toolCall, options.handlers, route.turn_id);
      if (executed.call) calls.push(executed.call);
      messages.push({ role: 'tool', tool_call_id: toolCall.id, content: executed.content });
    }
  }
  return null;
}

/** Runs one tool call; a call with no handler is answered to the model but not reported (it never ran). */
async function execute(
  toolCall: ToolCallLike,
  handlers: Record<string, ToolHandler>,
  turnId: string,
): Promise<{ call: ExecutedCall | null; content: string }> {
  const name = toolCall.function?.name ?? '';
  const handler = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
  if (!toolCall.function || !handler)
    return { call: null, content: JSON.stringify({ error: `no tool named ${name || toolCall.type}` }) };
  const id = `${turnId}:${toolCall.id}`.slice(0, ID_CHARS);
  const args = parseArguments(toolCall.function.arguments);
  if (!args) return failed(id, name, {}, 'the arguments are not a JSON object');
  try {
    const result: unknown = await handler(args);
    const error = errorOf(result);
    if (error !== null)
      return {
        call: { id, tool: name, arguments: args, success: false, error, result },
        content: JSON.stringify(result),
      };
    return {
      call: { id, tool: name, arguments: args, success: true, error: null, result },
      content: JSON.stringify(result ?? null),
    };
  } catch (err) {
    return failed(id, name, args, err instanceof Error ? err.message : String(err));
  }
}

function failed(
  id: string,
  tool: string,
  args: Record<string, unknown>,
  error: string,
): { call: ExecutedCall; content: string } {
  const clipped = error.slice(0, ERROR_CHARS);
  return {
    call: { id, tool, arguments: args, success: false, error: clipped, result: null },
    content: JSON.stringify({ error: clipped }),
  };
}

/** A result `{error: …}` with a non-null error is a failure; its text is what the log keeps. */
function errorOf(result: unknown): string | null {
  if (typeof result !== 'object' || result === null || !('error' in result)) return null;
  const error: unknown = result.error;
  if (error === null || error === undefined || error === false) return null;
  return (typeof error === 'string' ? error : JSON.stringify(error)).slice(0, ERROR_CHARS);
}

function parseArguments(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text || '{}');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function toCall(c: ExecutedCall, request: string, turnId: string, conversationId: string | undefined): Call {
  const call: Call = {
    id: c.id,
    tool: c.tool,
    arguments: c.arguments,
    success: c.success,
    request: request.slice(0, REQUEST_CHARS),
    turn_id: turnId,
  };
  if (c.error !== null) call.error = c.error;
  if (conversationId !== undefined) call.conversation_id = conversationId;
  return call;
}
