import { describe, expect, it } from 'vitest';
import { parsePerMinute, spendBudget, takeToken } from '../../src/core/token-bucket.ts';

describe('takeToken (token bucket)', () => {
  it('starts full, allows a burst of perMinute, then refuses with the wait for one token', () => {
    let bucket = null;
    for (let i = 0; i < 3; i++) {
      const take = takeToken(bucket, 3, 1_000);
      expect(take.allowed).toBe(true);
      bucket = take.bucket;
    }
    expect(bucket).toEqual({ tokens: 0, atMs: 1_000 });
    expect(takeToken(bucket, 3, 1_000)).toEqual({
      allowed: false,
      bucket: { tokens: 0, atMs: 1_000 },
      retryAfterMs: 20_000,
    });
  });

  it('refills at perMinute per minute, never above perMinute, and a clock stepping back refills nothing', () => {
    expect(takeToken({ tokens: 0, atMs: 0 }, 3, 20_000)).toEqual({
      allowed: true,
      bucket: { tokens: 0, atMs: 20_000 },
    });
    expect(takeToken({ tokens: 0, atMs: 0 }, 3, 10_000)).toEqual({
      allowed: false,
      bucket: { tokens: 0.5, atMs: 10_000 },
      retryAfterMs: 10_000,
    });
    expect(takeToken({ tokens: 1, atMs: 0 }, 3, 3_600_000)).toEqual({
      allowed: true,
      bucket: { tokens: 2, atMs: 3_600_000 },
    });
    expect(takeToken({ tokens: 0.5, atMs: 50_000 }, 3, 40_000)).toMatchObject({ allowed: false, retryAfterMs: 10_000 });
  });

  it('reads a RATE_LIMIT_* variable: absent or empty is the default, 0 is off, junk is a configuration error', () => {
    expect([undefined, '', ' '].map((raw) => parsePerMinute(raw, 600))).toEqual([600, 600, 600]);
    expect([parsePerMinute('0', 600), parsePerMinute('120', 600)]).toEqual([0, 120]);
    expect(['-5', 'ten', '0.5', '7.9'].map((raw) => parsePerMinute(raw, 600))).toEqual([null, null, null, null]);
  });
});

describe('spendBudget (a budget per window)', () => {
  it('grants what fits, fades what was spent over the window, and says when the next one fits', () => {
    const first = spendBudget(null, 3, 3_600_000, 2, 0);
    expect(first).toEqual({ granted: 2, spent: { tokens: 2, atMs: 0 }, nextInMs: 0 });
    const second = spendBudget(first.spent, 3, 3_600_000, 5, 0);
    expect(second).toEqual({ granted: 1, spent: { tokens: 3, atMs: 0 }, nextInMs: 1_200_000 });
    expect(spendBudget(second.spent, 3, 3_600_000, 5, 1_200_000).granted).toBe(1);
    expect(spendBudget(second.spent, 3, 3_600_000, 5, 99_000_000).granted).toBe(3);
    expect(spendBudget(null, 0, 3_600_000, 1, 0)).toMatchObject({ granted: 0, nextInMs: Number.POSITIVE_INFINITY });
  });

  it('a raised capacity counts at once, a lowered one too', () => {
    const spent = { tokens: 2, atMs: 0 };
    expect(spendBudget(spent, 100, 3_600_000, 5, 0).granted).toBe(5);
    expect(spendBudget(spent, 2, 3_600_000, 5, 0)).toMatchObject({ granted: 0, nextInMs: 1_800_000 });
  });
});
