/** How the fallible and perfect agents' eval labels a learned text (scripts/eval-quality.ts), in process. */
import { describe, expect, it } from 'vitest';
import { goldOf, labeller } from '../../scripts/eval-quality.ts';

const gold = goldOf(
  [
    { text: 'Are the domains acme.io, acme.dev and acme.app free to register?', tool: 'domains' },
    { text: 'Are the domains free to register today?', tool: 'registrar' },
    { text: 'What is the best route from Gangnam to Hongdae by metro?', tool: 'subway' },
    { text: 'What is the weather in Seoul?', tool: 'weather' },
  ].map((q, index) => ({ ...q, index })),
);
const labelsOf = labeller(gold);

describe('the eval labels a learned text', () => {
  it('by its wording as typed', () => {
    expect(labelsOf('What is the weather in Seoul?')).toEqual(new Set(['weather']));
  });

  it('masked of more than a few words, by the nearest wording that holds its words in order', () => {
    // Three domains masked are six words: a fixed allowance of four left this unmatched, counted wrong.
    expect(labelsOf('Are the domains , and free to register?')).toEqual(new Set(['domains']));
    expect(labelsOf('What is the best route from to by metro?')).toEqual(new Set(['subway']));
  });

  it('not by a wording of which it keeps less than half', () => {
    expect(labelsOf('weather')).toBeUndefined();
  });
});
