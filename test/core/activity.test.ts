import { describe, expect, it } from 'vitest';
import { fillBuckets, windowStart } from '../../src/core/activity-buckets.ts';

describe('activity buckets', () => {
  it('ends the window with the bucket that holds now, in UTC', () => {
    expect(windowStart('2026-03-10T15:42:00.000Z', 'day', 3)).toBe('2026-03-08T00:00:00.000Z');
    expect(windowStart('2026-03-10T15:42:00.000Z', 'hour', 3)).toBe('2026-03-10T13:00:00.000Z');
    expect(windowStart('2026-03-01T00:10:00.000Z', 'day', 2)).toBe('2026-02-28T00:00:00.000Z');
  });

  it('zero-fills missing buckets and keys them by the ISO prefix', () => {
    const calls = new Map([['2026-03-10T14', { calls: 3, failures: 1 }]]);
    const offers = new Map([
      ['2026-03-10T13', 2],
      ['2026-03-10T15', 5],
    ]);
    expect(fillBuckets('2026-03-10T15:42:00.000Z', 'hour', 3, calls, offers)).toEqual([
      { start: '2026-03-10T13:00:00.000Z', calls: 0, failures: 0, offers: 2 },
      { start: '2026-03-10T14:00:00.000Z', calls: 3, failures: 1, offers: 0 },
      { start: '2026-03-10T15:00:00.000Z', calls: 0, failures: 0, offers: 5 },
    ]);
  });
});
