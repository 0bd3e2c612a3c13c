/**
 * Reading one agent run as the model saw it (docs/api.md `POST …/traces`): OpenAI Chat Completions
 * messages or Anthropic Messages, into the request and the tool calls with their outcome.
 *
 * Both formats become one list of events (request, call, result) tagged with their message index;
 * the rules below then read that list the same way:
 * - the request is the text of the last user message that has text (an Anthropic user message made
 *   only of `tool_result` blocks is not a request);
 * - the run is the calls after the request; calls before it served earlier turns (their own trace);
 * - a call fails when its result is an `is_error` result or a JSON object with a non-empty `error`
 *   (the `{"error": …}` envelope);
 * - a call with no result is skipped: the tool may not have run yet (a trace posted mid-run) and a
 *   guessed failure would become false evidence; re-posting the finished trace records it;
 * - arguments that are not a JSON object (unparseable text, an array) are recorded as `{}`: the
 *   call and its outcome are still worth keeping, and the rest of the trace is not lost.
 */
import { storedRequest } from './long-request.ts';
import { z } from '@hono/zod-openapi';
import {
  AnthropicMessage,
  LIMITS,
  OpenAIMessage,
  type AnthropicBlock,
  type AnthropicToolResult,
  type AnthropicToolUse,
  type TraceFormat,
} from '../schemas.ts';
import { jsonDepth } from './json-depth.ts';
import { canonicalJson } from './tooldef.ts';

/** One tool call of the run, with its outcome. */
export interface TraceCall {
  tool_call_id: string;
  /** 0 for the first call with this id in the trace, 1 for a repeat… (ids are not always unique). */
  occurrence: number;
  tool: string;
  arguments: Record<string, unknown>;
  success: boolean;
  error: string | null;
}

export interface ReadTrace {
  format: TraceFormat;
  /** Text of the request (capped as the log stores it, src/core/long-request.ts), or null when no user message has text. */
  request: string | null;
  /** Index of the request's message, -1 when there is none (then every call is the run's). */
  request_index: number;
  calls: TraceCall[];
  /** Tool call ids of the run that have no result yet (skipped). */
  unanswered: string[];
}

export type TraceIssue = z.core.$ZodIssue;
export type TraceReading = { ok: true; trace: ReadTrace } | { ok: false; issues: TraceIssue[] };

type TraceEvent =
  | { kind: 'request'; at: number; text: string }
  | { kind: 'call'; at: number; id: string; tool: string; arguments: Record<string, unknown> }
  | { kind: 'result'; at: number; id: string; text: string; is_error: boolean };

const NO_ERROR_TEXT = 'the tool reported an error without text';

/**
 * The format a trace is in when the caller did not say: Anthropic when any content block is a
 * `tool_use` or `tool_result`, else OpenAI (text-only traces read the same either way).
 */
export function detectTraceFormat(messages: readonly unknown[]): TraceFormat {
  const anthropic = messages.some((m) => blocksOf(m).some((b) => b === 'tool_use' || b === 'tool_result'));
  return anthropic ? 'anthropic' : 'openai';
}

function blocksOf(message: unknown): string[] {
  if (typeof message !== 'object' || message === null) return [];
  const content = (message as { content?: unknown }).content;
  if (!Array.isArray(content)) return [];
  return content.map((b: unknown) =>
    typeof b === 'object' && b !== null ? String((b as { type?: unknown }).type) : '',
  );
}

/** Checks the messages against the format's schema and reads the request and the run's calls. */
export function readTrace(
  messages: readonly unknown[],
  format: TraceFormat = detectTraceFormat(messages),
): TraceReading {
  const events = format === 'openai' ? openAIEvents(messages) : anthropicEvents(messages);
  if (!events.ok) return { ok: false, issues: events.issues.map((i) => ({ ...i, path: ['messages', ...i.path] })) };
  return { ok: true, trace: { format, ...runOf(events.events) } };
}

type Events = { ok: true; events: TraceEvent[] } | { ok: false; issues: TraceIssue[] };

/** The events `read` takes from each message, once `schema` accepts every message; its issues otherwise. */
function eventsOf<M extends z.ZodType>(
  messages: readonly unknown[],
  schema: M,
  read: (events: TraceEvent[], m: z.output<M>, at: number) => void,
): Events {
  const parsed = z.array(schema).safeParse(messages);
  if (!parsed.success) return { ok: false, issues: parsed.error.issues };
  const events: TraceEvent[] = [];
  for (const [at, m] of parsed.data.entries()) read(events, m, at);
  return { ok: true, events };
}

function openAIEvents(messages: readonly unknown[]): Events {
  return eventsOf(messages, OpenAIMessage, (events, m, at) => {
    if (m.role === 'user') pushRequest(events, at, textOf(m.content));
    if (m.role === 'assistant') {
      for (const c of m.tool_calls ?? [])
        events.push({
          kind: 'call',
          at,
          id: c.id,
          tool: c.function.name,
          arguments: argumentsOf(c.function.arguments),
        });
    }
    if (m.role === 'tool')
      events.push({ kind: 'result', at, id: m.tool_call_id, text: textOf(m.content), is_error: false });
  });
}

function anthropicEvents(messages: readonly unknown[]): Events {
  return eventsOf(messages, AnthropicMessage, (events, m, at) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
    for (const b of blocks) {
      if (isToolUse(b)) events.push({ kind: 'call', at, id: b.id, tool: b.name, arguments: b.input });
      if (isToolResult(b)) {
        events.push({ kind: 'result', at, id: b.tool_use_id, text: textOf(b.content), is_error: b.is_error === true });
      }
    }
    if (m.role === 'user') pushRequest(events, at, textOf(blocks));
  });
}

// The schema's catch-all block refuses `tool_use` and `tool_result`, so the type tells the block.
const isToolUse = (b: AnthropicBlock): b is AnthropicToolUse => b.type === 'tool_use';
const isToolResult = (b: AnthropicBlock): b is AnthropicToolResult => b.type === 'tool_result';

function pushRequest(events: TraceEvent[], at: number, text: string): void {
  const trimmed = text.trim();
  if (trimmed) events.push({ kind: 'request', at, text: storedRequest(trimmed) });
}

/** The text of a content value: a string, or the `text` parts of a block list joined by newlines. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((b: unknown) => {
      const part = b as { type?: unknown; text?: unknown };
      return part.type === 'text' && typeof part.text === 'string' ? [part.text] : [];
    })
    .join('\n');
}

/**
 * Arguments as sent: a JSON object text (OpenAI) or an object; anything else reads as `{}`, and so
 * does a text nested deeper than LIMITS.jsonDepth (later readers walk it recursively).
 */
export function argumentsOf(raw: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof raw !== 'string') return raw;
  if (jsonDepth(raw) > LIMITS.jsonDepth) return {};
  try {
    const value: unknown = JSON.parse(raw);
    return isPlainObject(value) ? value : {};
  } catch {
    return {};
  }
}

function runOf(events: readonly TraceEvent[]): Omit<ReadTrace, 'format'> {
  const requests = events.filter((e) => e.kind === 'request');
  const last = requests[requests.length - 1];
  const start = last?.at ?? -1;
  const results = new Map<string, { text: string; is_error: boolean }[]>();
  for (const e of events) if (e.kind === 'result' && e.at > start) results.set(e.id, [...(results.get(e.id) ?? []), e]);
  const seen = new Map<string, number>();
  const calls: TraceCall[] = [];
  const unanswered: string[] = [];
  for (const e of events) {
    if (e.kind !== 'call' || e.at <= start) continue;
    const occurrence = seen.get(e.id) ?? 0;
    seen.set(e.id, occurrence + 1);
    const result = results.get(e.id)?.[occurrence];
    if (!result) {
      unanswered.push(e.id);
      continue;
    }
    calls.push({ tool_call_id: e.id, occurrence, tool: e.tool, arguments: e.arguments, ...outcomeOf(result) });
  }
  return { request: last?.text ?? null, request_index: start, calls, unanswered };
}

/** docs/api.md: an `is_error` result or an `{"error": …}` envelope is a failure; anything else a success. */
export function outcomeOf(result: { text: string; is_error: boolean }): { success: boolean; error: string | null } {
  if (result.is_error) return { success: false, error: clip(result.text.trim() || NO_ERROR_TEXT) };
  const envelope = errorEnvelope(result.text);
  return envelope === null ? { success: true, error: null } : { success: false, error: clip(envelope) };
}

/**
 * The error of an `{"error": …}` envelope, or null. An `error` that is null, false or empty
 * (`{"result": 1, "error": null}`) is not a failure. An error object reads as its `message`.
 */
export function errorEnvelope(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return null;
  }
  if (!isPlainObject(value) || !('error' in value)) return null;
  const error = value.error;
  if (error === null || error === false || error === '') return null;
  if (typeof error === 'string') return error;
  if (isPlainObject(error) && typeof error.message === 'string' && error.message) return error.message;
  // docs/api.md "Limits": JSON.stringify recurses; an error nested past LIMITS.jsonDepth is kept as its text.
  return jsonDepth(trimmed) > LIMITS.jsonDepth ? trimmed : JSON.stringify(error);
}

function clip(text: string): string {
  return text.slice(0, LIMITS.errorChars);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * What identifies the turn of a trace posted without a `turn_id`: the conversation and every
 * message up to and including the request. Re-posting the trace, or a longer version of the same
 * run, gives the same text, so the same turn and call ids (idempotent ingestion).
 */
export function turnFingerprint(
  messages: readonly unknown[],
  requestIndex: number,
  conversationId: string | null,
): string {
  const upTo = requestIndex >= 0 ? messages.slice(0, requestIndex + 1) : messages;
  return canonicalJson({ conversation_id: conversationId, messages: upTo });
}

/** The call id of a trace call: stable for the turn and the tool call id, so re-posting never duplicates. */
export function traceCallId(turnId: string, call: Pick<TraceCall, 'tool_call_id' | 'occurrence'>): string {
  return `trace:${turnId}:${call.tool_call_id}${call.occurrence > 0 ? `#${call.occurrence}` : ''}`;
}
