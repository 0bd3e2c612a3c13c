import { describe, expect, it } from 'vitest';
import { jsonDepth } from '../../src/core/json-depth.ts';
import { argumentsOf, outcomeOf } from '../../src/core/traces.ts';
import { LIMITS } from '../../src/schemas.ts';

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('jsonDepth', () => {
  it('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    expect([jsonDepth('1'), jsonDepth('"[{"'), jsonDepth('{}'), jsonDepth('{"a": [1, {"b": []}]}')]).toEqual([
      0, 0, 1, 4,
    ]);
    expect(jsonDepth('{"a": "\\"[[[", "b": [[]]}')).toBe(3);
    expect(jsonDepth(deep(500_000))).toBe(500_000);
  });

  it('a trace argument text or error envelope nested past the limit reads as {} / its text, never a stack overflow', () => {
    const tooDeep = `{"v": ${deep(LIMITS.jsonDepth)}}`;
    expect(argumentsOf(tooDeep)).toEqual({});
    expect(argumentsOf(`{"v": ${deep(LIMITS.jsonDepth - 1)}}`)).toEqual({ v: JSON.parse(deep(LIMITS.jsonDepth - 1)) });
    const error = `{"error": ${deep(200_000)}}`;
    expect(outcomeOf({ text: error, is_error: false })).toEqual({
      success: false,
      error: error.slice(0, LIMITS.errorChars),
    });
  });
});
