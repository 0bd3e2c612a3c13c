import { describe, expect, it } from 'vitest';
import { parsePerMinute, takeToken } from '../../src/core/rate-limit.ts';

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

  it('reads RATE_LIMIT_PER_MINUTE: absent, empty, 0, negative or junk is off', () => {
    expect([undefined, '', '0', '-5', 'ten', '0.5'].map(parsePerMinute)).toEqual([0, 0, 0, 0, 0, 0]);
    expect([parsePerMinute('120'), parsePerMinute('7.9')]).toEqual([120, 7]);
  });
});
