/**
 * `LLM=workers-ai:<model>` and `EMBEDDER=workers-ai:<model>` (docs/configuration.md) through the `AI` binding.
 * Same timeout and retry policy as the OpenAI adapter (`withRetry`). The binding throws
 * `InferenceUpstreamError` with a message `"<internal code>: <description>"` (Workers AI
 * "Errors" table); 3040 (out of capacity, HTTP 429), 3007 (timeout) and 3008 (aborted) are
 * retried, as are network failures and 5xx-looking messages. 3036 (daily allocation used up) is
 * not: it lasts until tomorrow.
 */
import { ApiError } from '../errors.ts';
import type { ChatModel, Embedder, ModelTask } from '../core/ports.ts';
import { toUnitVector } from './openai.ts';
import { longestCallMs, withRetry, type RetryOptions } from './retry.ts';
import { inBatches } from '../core/pool.ts';

/**
 * The one method of the `AI` binding we use. `Ai` (workers-types) satisfies it; tests pass a
 * small fake with the binding's shapes and failure modes.
 */
export interface AiRunner {
  run(model: string, inputs: Record<string, unknown>, options?: AiOptions): Promise<unknown>;
}

export interface WorkersAIOptions {
  /** Per-attempt deadline (default 30 s for chat, 15 s for embeddings). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  retries?: number;
  /** First backoff step (default 500 ms). */
  baseDelayMs?: number;
}

export interface WorkersAIModelOptions extends WorkersAIOptions {
  /** Completion budget; Workers AI text models stop at 256 tokens unless told otherwise. */
  maxTokens?: number;
}

/**
 * A background model on Workers AI (`ai.run(model, {messages})` → `{response}`).
 * Cost: one inference (billed in neurons) per `complete`, plus up to `retries` re-runs on capacity
 * errors and timeouts; an attempt abandoned at its deadline may still run to completion and be
 * billed, because the binding takes no abort signal. Consistency: replies are not deterministic;
 * callers validate every reply. Models that answer in the OpenAI shape (`choices[0].message`) or
 * with an already-parsed JSON `response` are read too.
 */
export function createWorkersAIModel(ai: AiRunner, model: string, opts: WorkersAIModelOptions = {}): ChatModel {
  const id = `workers-ai:${model}`;
  const retry = retryPolicy(id, opts.timeoutMs ?? 30_000, opts);
  const maxTokens = opts.maxTokens ?? 1024;

  async function complete(task: ModelTask): Promise<string | null> {
    const messages = task.messages.map((m) => ({ role: m.role, content: m.content }));
    const output = await withRetry(() => ai.run(model, { messages, max_tokens: maxTokens }), retry);
    return replyText(output, id);
  }

  return { id, longestCallMs: longestCallMs(retry), complete };
}

/** Native sizes of Workers AI embedding models (their model pages). */
const WORKERS_AI_EMBEDDING_DIMENSIONS: Record<string, number> = {
  '@cf/baai/bge-small-en-v1.5': 384,
  '@cf/baai/bge-base-en-v1.5': 768,
  '@cf/baai/bge-large-en-v1.5': 1024,
  '@cf/baai/bge-m3': 1024,
  '@cf/google/embeddinggemma-300m': 768,
};

export interface WorkersAIEmbedderOptions extends WorkersAIOptions {
  /** Vector length; required for a model not in the table above. */
  dimensions?: number;
  /** Texts per `ai.run` call (default 50, within the binding's batch limit of 100). */
  batchSize?: number;
}

/**
 * Text embeddings on Workers AI (`ai.run(model, {text: [...]})` → `{shape, data: number[][]}`),
 * L2-normalised. Cost: one inference per `batchSize` texts, batches one after another.
 * Consistency: deterministic per model; the id `workers-ai:<model>` marks stored vectors, so a
 * model change re-embeds them. A reply of the wrong count or length is an upstream_error.
 */
export function createWorkersAIEmbedder(ai: AiRunner, model: string, opts: WorkersAIEmbedderOptions = {}): Embedder {
  const wanted = opts.dimensions ?? WORKERS_AI_EMBEDDING_DIMENSIONS[model];
  if (wanted === undefined || !Number.isInteger(wanted) || wanted < 1) {
    throw new ApiError(
      'internal',
      `embedder workers-ai:${model}: set a positive integer vector length (dimensions) for a model other than ${Object.keys(WORKERS_AI_EMBEDDING_DIMENSIONS).join(', ')}`,
    );
  }
  const dimensions: number = wanted;
  const id = `workers-ai:${model}`;
  const retry = retryPolicy(id, opts.timeoutMs ?? 15_000, opts);
  const batchSize = Math.max(1, Math.min(100, Math.floor(opts.batchSize ?? 50)));

  async function embedBatch(texts: string[]): Promise<Float32Array[]> {
    const output = await withRetry(() => ai.run(model, { text: texts }), retry);
    const data = isRecord(output) ? output.data : undefined;
    if (!Array.isArray(data)) throw new ApiError('upstream_error', `${id}: reply has no "data" array`);
    if (data.length !== texts.length) {
      throw new ApiError('upstream_error', `${id}: returned ${data.length} vectors for ${texts.length} texts`);
    }
    return data.map((row: unknown) => toUnitVector(row, dimensions, id));
  }

  return { id, dimensions, embed: (texts) => inBatches(texts, batchSize, embedBatch) };
}

/** The text of a Workers AI text-generation reply, in either of the shapes models return. */
function replyText(output: unknown, id: string): string | null {
  if (!isRecord(output)) throw new ApiError('upstream_error', `${id}: reply is not an object`);
  const { response } = output;
  if (typeof response === 'string') return response;
  if (isRecord(response) || Array.isArray(response)) return JSON.stringify(response);
  const choices = output.choices;
  if (Array.isArray(choices)) {
    const first: unknown = choices[0];
    const message = isRecord(first) ? first.message : undefined;
    const content = isRecord(message) ? message.content : undefined;
    return typeof content === 'string' ? content : null;
  }
  if (response === undefined || response === null) return null;
  throw new ApiError('upstream_error', `${id}: reply has an unexpected "response"`);
}

/** Internal codes worth another attempt (Workers AI "Errors" table). */
const RETRYABLE_CODES = new Set(['3040', '3007', '3008']);

/** Whether a binding error is transient: capacity, timeout, network or a 5xx. */
export function isRetryableWorkersAIError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof TypeError) return true; // network failure reaching the binding
  // Older bindings put the HTTP status on the error as `httpCode`.
  const withStatus = err as Error & { httpCode?: unknown; status?: unknown };
  const status = withStatus.httpCode ?? withStatus.status;
  if (typeof status === 'number') return status === 408 || status === 429 || status >= 500;
  const code = /^\s*(\d{4})\s*:/.exec(err.message)?.[1];
  if (code !== undefined) return RETRYABLE_CODES.has(code);
  return /\b(5\d\d|internal server error|temporarily|capacity|network connection lost|timed? ?out)\b/i.test(
    err.message,
  );
}

function retryPolicy(provider: string, timeoutMs: number, opts: WorkersAIOptions): RetryOptions {
  return {
    provider,
    timeoutMs,
    retries: opts.retries ?? 2,
    baseDelayMs: opts.baseDelayMs ?? 500,
    isRetryable: isRetryableWorkersAIError,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
