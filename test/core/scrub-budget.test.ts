/**
 * What the scrubber reads is bounded whatever the log holds (src/core/scrub.ts): at most
 * MAX_VALUES values, and no value longer than the longest text it could be found in.
 */
import { describe, expect, it } from 'vitest';
import { argumentValues, MAX_VALUE_CHARS, MAX_VALUES, scrubValues } from '../../src/core/scrub.ts';

describe('the scrubber reads a bounded set of values', () => {
  it('reads at most MAX_VALUES values, the first in call order', () => {
    const calls = Array.from({ length: 40 }, (_, c) => ({
      arguments: { ids: Array.from({ length: 500 }, (_, i) => `id-${c}-${i}`) },
    }));
    const values = argumentValues(calls);
    expect(MAX_VALUES).toBe(5000);
    expect(values).toHaveLength(MAX_VALUES);
    expect(values[0]).toBe('id-0-0');
    expect(values.at(-1)).toBe('id-9-499');
  });

  it('skips a value longer than any text it could be found in, and still hides the short ones', () => {
    const long = 'q'.repeat(MAX_VALUE_CHARS + 1);
    const values = argumentValues([{ arguments: { blob: long, order: 'ORD-77123', n: 42 } }]);
    expect(values).toEqual(['ORD-77123', 42]);
    expect(scrubValues('order ORD-77123 failed after 42 tries', values)).toBe(
      'order <value> failed after <value> tries',
    );
    expect(argumentValues([{ arguments: { at: 'q'.repeat(MAX_VALUE_CHARS) } }])).toHaveLength(1);
  });
});
