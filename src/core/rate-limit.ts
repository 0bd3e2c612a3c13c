/**
 * Per-key rate limiting (docs/api.md 429 `rate_limited`;) as a token bucket: a key may burst
 * up to a minute's allowance at once and then gets one request per `60 000 / perMinute` ms. Pure:
 * the bucket is plain data and `nowMs` is passed in; the agent's Durable Object keeps the buckets.
 */

/** A key's bucket: tokens left (fractional) at `atMs`. */
export interface Bucket {
  tokens: number;
  atMs: number;
}

/** What one request does to a bucket: allowed (and the bucket after), or how long to wait. */
export type Take = { allowed: true; bucket: Bucket } | { allowed: false; bucket: Bucket; retryAfterMs: number };

const MINUTE_MS = 60_000;

/** Takes one token for a request at `nowMs`; a missing bucket starts full. */
export function takeToken(bucket: Bucket | null, perMinute: number, nowMs: number): Take {
  const rate = perMinute / MINUTE_MS;
  // A clock that steps back (another isolate's now) refills nothing rather than draining the bucket.
  const elapsed = bucket ? Math.max(0, nowMs - bucket.atMs) : 0;
  const tokens = bucket ? Math.min(perMinute, bucket.tokens + elapsed * rate) : perMinute;
  if (tokens >= 1) return { allowed: true, bucket: { tokens: tokens - 1, atMs: nowMs } };
  return { allowed: false, bucket: { tokens, atMs: nowMs }, retryAfterMs: Math.ceil((1 - tokens) / rate) };
}

/** `RATE_LIMIT_PER_MINUTE` as a number: absent, empty, 0, negative or not a number = off (0). */
export function parsePerMinute(raw: string | undefined): number {
  const n = Number(raw ?? '');
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : 0;
}
