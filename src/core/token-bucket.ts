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

/** What spending up to `wanted` from a budget did: how many were granted, the spending after, and when one more would fit. */
export interface Spend {
  granted: number;
  /** `tokens` here is what was spent, fading as the window passes (not what is left). */
  spent: Bucket;
  /** Milliseconds until one more fits (0 when some room is left). */
  nextInMs: number;
}

/**
 * Spends up to `wanted` whole units of a budget of `capacity` per `windowMs` (the model calls of an
 * agent's hour). What was spent fades at `capacity` per window, so a steady `capacity` per window
 * always fits; kept as spending (not as tokens left), a raised or lowered capacity counts at once.
 */
export function spendBudget(
  spent: Bucket | null,
  capacity: number,
  windowMs: number,
  wanted: number,
  nowMs: number,
): Spend {
  const elapsed = spent ? Math.max(0, nowMs - spent.atMs) : 0;
  const before = spent ? Math.max(0, spent.tokens - (elapsed * capacity) / windowMs) : 0;
  const granted = Math.max(0, Math.min(Math.floor(wanted), Math.floor(capacity - before)));
  const after = before + granted;
  const room = capacity - after;
  // (…) × windowMs / capacity rather than ÷ a rate: exact for whole numbers.
  const nextInMs =
    room >= 1 ? 0 : capacity > 0 ? Math.ceil(((after - capacity + 1) * windowMs) / capacity) : Number.POSITIVE_INFINITY;
  return { granted, spent: { tokens: after, atMs: nowMs }, nextInMs };
}
