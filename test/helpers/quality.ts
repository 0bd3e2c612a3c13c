/** Routing quality's days as a report states them. No Workers module. */
import type { QualityDay } from '../../src/core/quality-math.ts';

/** A day of the quality report: nothing routed, served or counted but `counts`. */
export function qualityDay(date: string, counts: Partial<Omit<QualityDay, 'date'>> = {}): QualityDay {
  return {
    date,
    routed_turns: 0,
    served_turns: 0,
    hits: 0,
    hit_rate: null,
    mrr: null,
    misses: 0,
    confusions: 0,
    failed_calls: 0,
    ...counts,
  };
}
