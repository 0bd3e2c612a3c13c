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

/**
 * A `RATE_LIMIT_*` variable as a number per minute: absent or empty = `fallback` (limits are on by
 * default), `0` = off, a whole number ≥ 1 = that; anything else (negative, fractional, junk) = null,
 * a configuration error rather than a limit silently off.
 */
export function parsePerMinute(raw: string | undefined, fallback: number): number | null {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

/** What taking up to `wanted` tokens did: how many were granted, the bucket after, and when one more would be. */
export interface TakeMany {
  granted: number;
  bucket: Bucket;
  /** Milliseconds until one more token is there (0 when some are left). */
  nextInMs: number;
}

/**
 * Takes up to `wanted` whole tokens from a bucket of `capacity` that refills `capacity` tokens per
 * `windowMs` (a budget: the model calls of an agent's hour). A missing bucket starts full.
 */
export function takeTokens(
  bucket: Bucket | null,
  capacity: number,
  windowMs: number,
  wanted: number,
  nowMs: number,
): TakeMany {
  const rate = capacity / windowMs;
  const elapsed = bucket ? Math.max(0, nowMs - bucket.atMs) : 0;
  const tokens = bucket ? Math.min(capacity, bucket.tokens + elapsed * rate) : capacity;
  const granted = Math.max(0, Math.min(Math.floor(wanted), Math.floor(tokens)));
  const left = tokens - granted;
  const nextInMs = left >= 1 ? 0 : rate > 0 ? Math.ceil((1 - left) / rate) : Number.POSITIVE_INFINITY;
  return { granted, bucket: { tokens: left, atMs: nowMs }, nextInMs };
}
