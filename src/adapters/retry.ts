/**
 * Timeouts and bounded retries for every provider call ("Timeouts, bounded retries on
 * 429/5xx with backoff, and a clear `upstream_error` when a provider fails").
 *
 * Retries happen here, never inside a provider SDK, so every HTTP attempt is counted and bounded
 * by one policy, and the last failure always becomes one `ApiError('upstream_error')` whose
 * message names the provider and what failed — never a key, never a stack.
 */
import { ApiError } from '../errors.ts';

export interface RetryOptions {
  /** Names the provider in the final error, e.g. `openai:gpt-4o-mini`. */
  provider: string;
  /** Extra attempts after the first one (0 = one attempt only). */
  retries: number;
  /** First backoff step; attempt n waits about baseDelayMs·2^(n-1), half of it jittered. */
  baseDelayMs: number;
  /** Per-attempt deadline: the attempt's AbortSignal fires and we stop waiting for it. */
  timeoutMs: number;
  /** Whether a thrown error is worth another attempt (429, 5xx, network). Timeouts always are. */
  isRetryable: (err: unknown) => boolean;
  /** Cap on any single wait, backoff or Retry-After alike (default 8 s). */
  maxDelayMs?: number;
  /** The wait the provider asked for (Retry-After), or null when it said nothing. */
  retryAfterMs?: (err: unknown) => number | null;
  /** How an error reads in the final message (default: its message). Output is redacted. */
  describe?: (err: unknown) => string;
  /** Injected in tests; defaults to setTimeout / Math.random. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** Default cap on one wait: a Worker request should not sit idle for a provider's long Retry-After. */
export const DEFAULT_MAX_DELAY_MS = 8_000;

/** The longest a call under `withRetry` can take: every attempt timing out, the longest wait between each. */
export function longestCallMs(opts: Pick<RetryOptions, 'retries' | 'timeoutMs' | 'maxDelayMs'>): number {
  return (opts.retries + 1) * opts.timeoutMs + opts.retries * (opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
}

/** What one attempt gets: a signal that fires at its deadline, and its 1-based number. */
export type Attempt<T> = (signal: AbortSignal, attempt: number) => Promise<T>;

/** Raised inside withRetry when an attempt outlives its deadline. */
class AttemptTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'AttemptTimeout';
  }
}

/**
 * Runs `fn` with a per-attempt timeout and at most `retries` retries on retryable failures,
 * waiting with exponential backoff and jitter, or the provider's Retry-After (capped) when it sent
 * one. Resolves with the first success; otherwise throws `ApiError('upstream_error',
 * '<provider>: <what failed>')`. An `ApiError` thrown by `fn` that is not retryable is passed on
 * unchanged (the adapter already named the provider).
 */
export async function withRetry<T>(fn: Attempt<T>, opts: RetryOptions): Promise<T> {
  const attempts = Math.max(0, Math.floor(opts.retries)) + 1;
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await attemptWithDeadline(fn, attempt, opts.timeoutMs);
    } catch (err) {
      last = err;
      const retryable = err instanceof AttemptTimeout || opts.isRetryable(err);
      if (!retryable) throw finalError(err, attempt, opts);
      if (attempt === attempts) break;
      const asked = opts.retryAfterMs?.(err) ?? null;
      await sleep(backoffDelayMs(attempt, opts.baseDelayMs, opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS, random, asked));
    }
  }
  throw finalError(last, attempts, opts);
}

/**
 * The wait before attempt n+1: the provider's Retry-After when given, else "equal jitter" backoff
 * (half of base·2^(n-1) fixed, half random, so parallel callers spread out). Both capped.
 */
export function backoffDelayMs(
  attempt: number,
  baseDelayMs: number,
  maxDelayMs: number,
  random: () => number,
  retryAfterMs: number | null,
): number {
  if (retryAfterMs !== null && Number.isFinite(retryAfterMs)) return clamp(retryAfterMs, 0, maxDelayMs);
  const step = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * Reads `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date, RFC 9110 §10.2.3)
 * into milliseconds; null when absent or unreadable.
 */
export function retryAfterFromHeaders(headers: Headers | undefined, nowMs: number): number | null {
  if (!headers) return null;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** Removes what looks like a credential from provider text before it reaches an answer or a log. */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b(sk|rk|pk)-[A-Za-z0-9_*.-]{4,}/g, '$1-…')
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 …')
    .replace(/(api[-_]?key["'=:\s]+)[^\s"',}]+/gi, '$1…');
}

/** Calls `fn` once; rejects with AttemptTimeout at the deadline even if `fn` ignores the signal. */
function attemptWithDeadline<T>(fn: Attempt<T>, attempt: number, timeoutMs: number): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const timeout = new AttemptTimeout(timeoutMs);
      controller.abort(timeout);
      reject(timeout);
    }, timeoutMs);
    // A late settlement after the deadline is ignored: a promise settles once.
    void Promise.resolve()
      .then(() => fn(controller.signal, attempt))
      .then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
  });
}

function finalError(err: unknown, attempts: number, opts: RetryOptions): ApiError {
  if (err instanceof ApiError) return err;
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  if (err instanceof AttemptTimeout) {
    return new ApiError('upstream_error', `${opts.provider}: no answer within ${err.timeoutMs} ms (${tries})`);
  }
  const what = redactSecrets((opts.describe ?? describeError)(err)).slice(0, 300);
  return new ApiError('upstream_error', `${opts.provider}: ${what} (${tries})`);
}

function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
