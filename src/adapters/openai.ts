/**
 * `LLM=openai:<model>` and `EMBEDDER=openai:<model>` (docs/configuration.md): any OpenAI-compatible endpoint —
 * OpenAI, Azure OpenAI (v1 API), vLLM, Ollama, Cloudflare AI Gateway — through the `openai`
 * package. The SDK's own retries are off (`maxRetries: 0`); `withRetry` times, bounds and counts
 * every HTTP attempt and turns the last failure into `upstream_error`.
 */
import OpenAI from 'openai';
import { ApiError } from '../errors.ts';
import type { ChatModel, Embedder, ModelTask, ToolPick } from '../core/ports.ts';
import type { ModelTool } from '../schemas.ts';
import { longestCallMs, retryAfterFromHeaders, withRetry, type RetryOptions } from './retry.ts';
import { inBatches } from '../core/pool.ts';

/** Sent with every HTTP attempt (1, 2, …): lets a proxy or the test fake tell retries from calls. */
export const ATTEMPT_HEADER = 'x-whetstone-attempt';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIModelOptions {
  /** Model (OpenAI), deployment name (Azure), served model name (vLLM/Ollama), `provider/model` (AI Gateway compat). */
  model: string;
  /** Bearer key; local servers that check none accept any non-empty value (e.g. `ollama`). */
  apiKey: string;
  /** Base URL ending in the API version path, e.g. `https://api.openai.com/v1` (the default). */
  baseURL?: string;
  /** Per-attempt deadline (default 30 s). */
  timeoutMs?: number;
  /** Retries after the first attempt on 408/409/429/5xx, network errors and timeouts (default 2). */
  retries?: number;
  /** First backoff step (default 500 ms). */
  baseDelayMs?: number;
  /** Fixed sampling temperature; omitted by default because reasoning models reject anything but 1. */
  temperature?: number;
  /** A fetch to use instead of the global one (tests, or a service binding). */
  fetch?: typeof fetch;
}

/**
 * A background model behind an OpenAI-compatible chat-completions endpoint.
 * Cost: one billed completion per `complete` (plus up to `retries` re-sent attempts on 429/5xx and
 * timeouts). Consistency: replies are not deterministic (no temperature is forced); every reply is
 * data that callers validate, and JSON mode is asked for whenever the task's messages ask for JSON.
 */
export function createOpenAIModel(opts: OpenAIModelOptions): ChatModel {
  const id = `openai:${opts.model}`;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const client = makeClient(opts.apiKey, opts.baseURL, timeoutMs, opts.fetch);
  const retry = retryPolicy(id, timeoutMs, opts.retries ?? 2, opts.baseDelayMs ?? 500);

  async function complete(task: ModelTask): Promise<string | null> {
    const messages = task.messages.map((m) => ({ role: m.role, content: m.content }));
    // OpenAI's JSON mode refuses a request whose messages never say "JSON"; only ask when they do.
    const wantsJson = task.messages.some((m) => /\bjson\b/i.test(m.content));
    const completion = await withRetry(
      (signal, attempt) =>
        client.chat.completions.create(
          {
            model: opts.model,
            messages,
            ...(wantsJson ? { response_format: { type: 'json_object' as const } } : {}),
            ...(opts.temperature === undefined ? {} : { temperature: opts.temperature }),
          },
          { signal, headers: { [ATTEMPT_HEADER]: String(attempt) } },
        ),
      retry,
    );
    return replyContent(completion as unknown, id);
  }

  async function pickTool(request: string, tools: readonly ModelTool[]): Promise<ToolPick | null> {
    if (tools.length === 0) return null;
    const completion = await withRetry(
      (signal, attempt) =>
        client.chat.completions.create(
          {
            model: opts.model,
            messages: [
              { role: 'system', content: PICK_SYSTEM },
              { role: 'user', content: request },
            ],
            tools: tools.map((t) => ({ type: 'function' as const, function: t.function })),
            tool_choice: 'auto',
            ...(opts.temperature === undefined ? {} : { temperature: opts.temperature }),
          },
          { signal, headers: { [ATTEMPT_HEADER]: String(attempt) } },
        ),
      retry,
    );
    return replyToolCall(completion as unknown, id);
  }

  return { id, longestCallMs: longestCallMs(retry), complete, pickTool };
}

/** What an agent's model is told when a try run asks it to pick (src/services/try.ts). */
const PICK_SYSTEM =
  "You are an assistant with tools. Call the one tool that serves the user's request, with its arguments. If none fits, answer without a tool call.";

/** The first choice's first tool call; null when the model answered in text. */
function replyToolCall(completion: unknown, id: string): ToolPick | null {
  const message = firstMessage(completion, id);
  const calls = isRecord(message) ? message.tool_calls : undefined;
  const call: unknown = Array.isArray(calls) ? calls[0] : undefined;
  const fn = isRecord(call) ? call.function : undefined;
  if (!isRecord(fn) || typeof fn.name !== 'string') return null;
  let args: unknown = {};
  try {
    args = typeof fn.arguments === 'string' && fn.arguments !== '' ? JSON.parse(fn.arguments) : {};
  } catch {
    args = {};
  }
  return { tool: fn.name, arguments: isRecord(args) ? args : {} };
}

/** The first choice's text; null when the model said nothing (a refusal, a tool call). */
function replyContent(completion: unknown, id: string): string | null {
  const message = firstMessage(completion, id);
  const content = isRecord(message) ? message.content : undefined;
  return typeof content === 'string' ? content : null;
}

/** The first choice's message (undefined when there is none); a reply without `choices` is an upstream error. */
function firstMessage(completion: unknown, id: string): unknown {
  // Compatible servers do not all honour the schema the SDK types promise; check, do not trust.
  const choices = isRecord(completion) ? completion.choices : undefined;
  if (!Array.isArray(choices)) throw new ApiError('upstream_error', `${id}: reply has no "choices"`);
  const first: unknown = choices[0];
  return isRecord(first) ? first.message : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface OpenAIEmbedderOptions {
  model: string;
  apiKey: string;
  baseURL?: string;
  /**
   * Vector length. Defaults to the model's native size for OpenAI's own models; required for any
   * other model. For `text-embedding-3-*` a smaller value is sent as the API's `dimensions`.
   */
  dimensions?: number;
  /** Texts per request (default 96: well under OpenAI's 2,048 inputs and 300k tokens per request). */
  batchSize?: number;
  timeoutMs?: number;
  retries?: number;
  baseDelayMs?: number;
  fetch?: typeof fetch;
}

/** Native vector sizes of OpenAI's embedding models. */
const OPENAI_EMBEDDING_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/**
 * Text embeddings from an OpenAI-compatible `/embeddings` endpoint, L2-normalised.
 * Cost: one billed request per `batchSize` texts (batches run one after another, so a large
 * registration does not open more connections). Consistency: deterministic per model and
 * dimension; the id (`openai:<model>:<dims>`) changes with either, so stored vectors from another
 * setting are recognised and re-embedded. A reply of the wrong count or length is an upstream_error.
 */
export function createOpenAIEmbedder(opts: OpenAIEmbedderOptions): Embedder {
  const native = OPENAI_EMBEDDING_DIMENSIONS[opts.model];
  const wanted = opts.dimensions ?? native;
  if (wanted === undefined || !Number.isInteger(wanted) || wanted < 1) {
    throw new ApiError(
      'internal',
      `embedder openai:${opts.model}: set a positive integer vector length (dimensions) for a model other than ${Object.keys(OPENAI_EMBEDDING_DIMENSIONS).join(', ')}`,
    );
  }
  const dimensions: number = wanted;
  const id = `openai:${opts.model}:${dimensions}`;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const client = makeClient(opts.apiKey, opts.baseURL, timeoutMs, opts.fetch);
  const retry = retryPolicy(id, timeoutMs, opts.retries ?? 2, opts.baseDelayMs ?? 500);
  const sendDimensions = opts.model.startsWith('text-embedding-3') && dimensions !== native;
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 96));

  async function embedBatch(texts: string[]): Promise<Float32Array[]> {
    const reply = await withRetry(
      (signal, attempt) =>
        client.embeddings.create(
          {
            model: opts.model,
            input: texts,
            encoding_format: 'float',
            ...(sendDimensions ? { dimensions } : {}),
          },
          { signal, headers: { [ATTEMPT_HEADER]: String(attempt) } },
        ),
      retry,
    );
    if (!Array.isArray(reply.data)) throw new ApiError('upstream_error', `${id}: reply has no "data" array`);
    const rows = [...reply.data].sort((a, b) => a.index - b.index);
    if (rows.length !== texts.length) {
      throw new ApiError('upstream_error', `${id}: returned ${rows.length} vectors for ${texts.length} texts`);
    }
    return rows.map((row) => toUnitVector(row.embedding, dimensions, id));
  }

  return { id, dimensions, embed: (texts) => inBatches(texts, batchSize, embedBatch) };
}

/**
 * Checks one vector from a provider and scales it to unit length (the Embedder contract). A zero
 * vector stays zero: it matches nothing rather than everything.
 */
export function toUnitVector(values: unknown, dimensions: number, provider: string): Float32Array {
  if (!Array.isArray(values) || values.length !== dimensions) {
    const got = Array.isArray(values) ? `${values.length}-dimensional` : 'non-array';
    throw new ApiError('upstream_error', `${provider}: returned a ${got} vector, expected ${dimensions}`);
  }
  const vector = new Float32Array(dimensions);
  let sum = 0;
  for (let i = 0; i < dimensions; i++) {
    const x: unknown = values[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new ApiError('upstream_error', `${provider}: returned a vector with a non-number at ${i}`);
    }
    vector[i] = x;
    sum += x * x;
  }
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < dimensions; i++) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}

function makeClient(apiKey: string, baseURL: string | undefined, timeoutMs: number, fetchFn?: typeof fetch): OpenAI {
  return new OpenAI({
    apiKey,
    // Always explicit: the SDK would otherwise read OPENAI_BASE_URL from process.env.
    baseURL: baseURL ?? OPENAI_DEFAULT_BASE_URL,
    maxRetries: 0,
    // withRetry's deadline fires first; the SDK's own timeout is only a backstop.
    timeout: timeoutMs + 1_000,
    // workerd's fetch must be called unbound from the global, not as a method of the client.
    fetch: fetchFn ?? ((input, init) => fetch(input, init)),
  });
}

function retryPolicy(provider: string, timeoutMs: number, retries: number, baseDelayMs: number): RetryOptions {
  return {
    provider,
    retries,
    baseDelayMs,
    timeoutMs,
    isRetryable: isRetryableOpenAIError,
    retryAfterMs: (err) => (err instanceof OpenAI.APIError ? retryAfterFromHeaders(err.headers, Date.now()) : null),
    describe: describeOpenAIError,
  };
}

/** The statuses the SDK itself would retry (408, 409, 429, 5xx), plus network failures. */
export function isRetryableOpenAIError(err: unknown): boolean {
  if (err instanceof OpenAI.APIUserAbortError) return false;
  if (err instanceof OpenAI.APIConnectionError) return true;
  if (err instanceof OpenAI.APIError) {
    const status = err.status;
    return status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  }
  return err instanceof TypeError; // fetch's network failure
}

function describeOpenAIError(err: unknown): string {
  if (err instanceof OpenAI.APIConnectionError) return `connection failed (${err.message})`;
  if (err instanceof OpenAI.APIError && err.status !== undefined) {
    return err.message.startsWith(String(err.status)) ? `HTTP ${err.message}` : `HTTP ${err.status}: ${err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}
