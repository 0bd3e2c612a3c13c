import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  redactSecrets,
  retryAfterFromHeaders,
  withRetry,
  type RetryOptions,
} from '../../src/adapters/retry.ts';
import { ApiError } from '../../src/errors.ts';

class Status extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

function options(waits: number[], extra: Partial<RetryOptions> = {}): RetryOptions {
  return {
    provider: 'test:model',
    retries: 2,
    baseDelayMs: 100,
    timeoutMs: 1000,
    isRetryable: (err) => err instanceof Status && (err.status === 429 || err.status >= 500),
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
    ...extra,
  };
}

describe('withRetry', () => {
  it('retries retryable failures with growing waits, then succeeds', async () => {
    const waits: number[] = [];
    const seen: number[] = [];
    const value = await withRetry(async (_signal, attempt) => {
      seen.push(attempt);
      if (attempt < 3) throw new Status(503);
      return 'ok';
    }, options(waits));
    expect(value).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
    expect(waits).toEqual([75, 150]); // half fixed + half of 0.5 random: 100·(0.5+0.25), 200·(0.5+0.25)
  });

  it('stops at the bound and names the provider, what failed and the attempts', async () => {
    const waits: number[] = [];
    let attempts = 0;
    const run = withRetry(
      async () => {
        attempts += 1;
        throw new Status(500);
      },
      options(waits, { retries: 1 }),
    );
    await expect(run).rejects.toEqual(new ApiError('upstream_error', 'test:model: HTTP 500 (2 attempts)'));
    expect(attempts).toBe(2);
    expect(waits).toHaveLength(1);
  });

  it('does not retry what is not retryable', async () => {
    let attempts = 0;
    const run = withRetry(async () => {
      attempts += 1;
      throw new Status(400);
    }, options([]));
    await expect(run).rejects.toMatchObject({ code: 'upstream_error', message: 'test:model: HTTP 400 (1 attempt)' });
    expect(attempts).toBe(1);
  });

  it('passes an adapter ApiError through unchanged', async () => {
    const own = new ApiError('upstream_error', 'test:model: returned 0 vectors for 2 texts');
    await expect(withRetry(async () => Promise.reject(own), options([]))).rejects.toBe(own);
  });

  it('aborts an attempt at its deadline and retries timeouts', async () => {
    const signals: AbortSignal[] = [];
    const run = withRetry(
      (signal) => {
        signals.push(signal);
        return new Promise<string>(() => {}); // ignores the signal, like the AI binding
      },
      options([], { timeoutMs: 20, retries: 1 }),
    );
    await expect(run).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'test:model: no answer within 20 ms (2 attempts)',
    });
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
  });

  it('honours Retry-After, capped', async () => {
    const waits: number[] = [];
    let attempts = 0;
    await withRetry(
      async () => {
        attempts += 1;
        if (attempts === 1) throw new Status(429);
        if (attempts === 2) throw new Status(503);
        return 'ok';
      },
      options(waits, {
        maxDelayMs: 2000,
        retryAfterMs: (err) => (err instanceof Status && err.status === 429 ? 60_000 : null),
      }),
    );
    expect(waits).toEqual([2000, 150]);
  });

  it('redacts keys from provider messages', async () => {
    const run = withRetry(
      async () => Promise.reject(new Error('bad key sk-proj-abcdef123456 for Bearer abc.def')),
      options([]),
    );
    await expect(run).rejects.toMatchObject({ message: 'test:model: bad key sk-… for Bearer … (1 attempt)' });
  });
});

describe('retry helpers', () => {
  it('reads Retry-After in every form', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterFromHeaders(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(retryAfterFromHeaders(new Headers(), now)).toBeNull();
    expect(retryAfterFromHeaders(undefined, now)).toBeNull();
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffDelayMs(1, 100, 1000, () => 0, null)).toBe(50);
    expect(backoffDelayMs(1, 100, 1000, () => 1, null)).toBe(100);
    expect(backoffDelayMs(4, 100, 1000, () => 1, null)).toBe(800);
    expect(backoffDelayMs(6, 100, 1000, () => 1, null)).toBe(1000);
    expect(backoffDelayMs(1, 100, 1000, () => 1, 5000)).toBe(1000);
  });

  it('redacts common credential shapes', () => {
    expect(redactSecrets('key sk-abc123def456 and api_key=hunter22 and Basic dXNlcjpwYXNz')).toBe(
      'key sk-… and api_key=… and Basic …',
    );
  });
});
