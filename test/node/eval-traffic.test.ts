/**
 * The learning eval's traffic (scripts/eval-traffic.ts): how often a run's rounds ask each training
 * wording, which decides what routing memory, routing a wording once served in two conversations,
 * can hold, and so the peer the learned ranking is compared with.
 */
import { describe, expect, it } from 'vitest';
import { askedCounts, planTraffic, roundOf } from '../../scripts/eval-traffic.ts';

describe('asked wordings of a run', () => {
  const plan = planTraffic('held-out');
  const rounds = 13;
  const perRound = 12;
  const asked = askedCounts(plan, rounds, perRound);

  it('counts every ask of every round, each wording by itself', () => {
    let total = 0;
    for (let r = 0; r < rounds; r++) total += roundOf(plan, r, perRound).length;
    expect([...asked.values()].reduce((a, b) => a + b, 0)).toBe(total);
  });

  it('asks every wording of a small tool twice, and leaves a large tool’s wordings unasked or asked once', () => {
    const twice = (rounds * perRound) / 2;
    for (const stream of plan.streams) {
      const counts = stream.map((q) => asked.get(q) ?? 0);
      if (stream.length <= twice) expect(Math.min(...counts)).toBeGreaterThanOrEqual(2);
      if (stream.length > rounds * perRound) {
        expect(counts.filter((n) => n === 0).length).toBe(stream.length - rounds * perRound);
        expect(Math.max(...counts)).toBe(1);
      }
    }
    expect(plan.streams.some((s) => s.length > rounds * perRound)).toBe(true);
  });
});
