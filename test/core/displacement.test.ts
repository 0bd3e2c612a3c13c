import { describe, expect, it } from 'vitest';
import { mergeExamples, saysTheSame } from '../../src/core/displacement.ts';
import type { Example } from '../../src/schemas.ts';

const synthetic = (text: string): Example => ({ text, source: 'synthetic', revision_id: null });
const learned = (text: string, revision_id = 'rev-old'): Example => ({ text, source: 'learned', revision_id });
const unknown = (text: string): Example => ({ text, source: 'unknown', revision_id: null });

describe('mergeExamples (docs/learning.md "Apply": real wording displaces invented wording)', () => {
  it('a learned example that says the same as a synthetic one replaces it in place', () => {
    const current = [
      synthetic('look up my claim'),
      synthetic('Refer a large loss to LLU'),
      synthetic('check my claim status'),
    ];
    const merged = mergeExamples(current, [{ text: 'refer large losses to the LLU', revision_id: 'rev-1' }], 12);
    expect(merged).toEqual({
      examples: [
        synthetic('look up my claim'),
        learned('refer large losses to the LLU', 'rev-1'),
        synthetic('check my claim status'),
      ],
      displaced: [synthetic('Refer a large loss to LLU')],
      refused: [],
    });
  });

  it('at the cap, a new learned example takes the place of the oldest synthetic one', () => {
    const current = [learned('send to LLU'), synthetic('first invented'), synthetic('second invented')];
    const merged = mergeExamples(current, [{ text: 'the claim needs the large loss unit', revision_id: 'rev-2' }], 3);
    expect(merged).toEqual({
      examples: [
        learned('send to LLU'),
        synthetic('second invented'),
        learned('the claim needs the large loss unit', 'rev-2'),
      ],
      displaced: [synthetic('first invented')],
      refused: [],
    });
  });

  it('with no synthetic one left at the cap it is refused as no_room; unknown examples never give way', () => {
    const current = [learned('send to LLU'), unknown('hand-written request')];
    const merged = mergeExamples(current, [{ text: 'escalate the big claim', revision_id: 'rev-3' }], 2);
    expect(merged).toEqual({
      examples: current,
      displaced: [],
      refused: [{ text: 'escalate the big claim', reason: 'no_room' }],
    });
  });

  it('one that repeats a learned example is refused as already_kept', () => {
    const current = [learned('Send to LLU'), synthetic('something else')];
    const merged = mergeExamples(
      current,
      [
        { text: 'send to llu!', revision_id: 'rev-4' },
        { text: 'new wording here', revision_id: 'rev-4' },
        { text: 'New wording here.', revision_id: 'rev-4' },
      ],
      12,
    );
    expect(merged).toEqual({
      examples: [...current, learned('new wording here', 'rev-4')],
      displaced: [],
      refused: [
        { text: 'send to llu!', reason: 'already_kept' },
        { text: 'New wording here.', reason: 'already_kept' },
      ],
    });
  });

  it('below the cap a new example is appended', () => {
    const merged = mergeExamples([synthetic('a b c')], [{ text: 'refund the excess', revision_id: 'r' }], 12);
    expect(merged.examples.map((e) => e.text)).toEqual(['a b c', 'refund the excess']);
    expect(merged.displaced).toEqual([]);
  });
});

describe('saysTheSame', () => {
  it('matches equal normalised word sequences and near-identical word sets', () => {
    expect(saysTheSame('Cancel my order', 'cancel the orders')).toBe(true);
    expect(saysTheSame('refer large loss claim', 'refer large loss claim photo upload')).toBe(false);
    expect(saysTheSame('refer large loss claim to llu now quickly', 'quickly refer large loss claim to llu')).toBe(
      true,
    );
    expect(saysTheSame('refund the excess', 'upload a photo')).toBe(false);
  });
});
