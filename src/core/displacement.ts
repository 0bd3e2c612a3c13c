/**
 * Example merging at apply time (docs/learning.md "Apply", reference "Where an example came from"): real
 * wording displaces invented wording.
 * - a learned example that says the same as a synthetic one replaces it, in its place;
 * - at the cap (`max_queries`) a new learned example takes the place of the oldest synthetic one
 *   (the first in stored order); with no synthetic one left it is refused as `no_room`;
 * - one that says the same as a learned example is refused as `already_kept`, and so is one that
 *   says the same as an `unknown` example, which never gives way (it is already on the tool).
 */
import type { Example } from '../schemas.ts';
import { contentWords, normalize, SAME_MEANING_JACCARD, tokenize } from './text.ts';

export interface MergedExamples {
  examples: Example[];
  /** The synthetic examples that gave way, for `queries_displaced` (undo puts them back). */
  displaced: Example[];
  refused: { text: string; reason: 'no_room' | 'already_kept' }[];
}

/**
 * "Says the same": the same normalised text, the same word sequence once stopwords are out and
 * words stemmed ("cancel my order" / "Cancel the orders"), or content-word sets with a Jaccard
 * similarity of at least 0.8 (word order and one word in five aside).
 */
export function saysTheSame(a: string, b: string): boolean {
  if (normalize(a) === normalize(b)) return true;
  const ta = tokenize(a);
  const tb = tokenize(b);
  if (ta.length > 0 && ta.join(' ') === tb.join(' ')) return true;
  return jaccard(contentWords(a), contentWords(b)) >= SAME_MEANING_JACCARD;
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Merges learned examples into a tool's examples under the cap (rules in the file comment). */
export function mergeExamples(
  current: readonly Example[],
  added: readonly { text: string; revision_id: string }[],
  maxQueries: number,
): MergedExamples {
  const merged: MergedExamples = { examples: [...current], displaced: [], refused: [] };
  for (const { text, revision_id } of added) {
    const reason = placeOne(merged, { text, source: 'learned', revision_id }, maxQueries);
    if (reason) merged.refused.push({ text, reason });
  }
  return merged;
}

/** Places one learned example, mutating `merged`; returns why it was refused, or null. */
function placeOne(merged: MergedExamples, learned: Example, maxQueries: number): 'no_room' | 'already_kept' | null {
  const { examples, displaced } = merged;
  if (examples.some((e) => e.source !== 'synthetic' && saysTheSame(e.text, learned.text))) return 'already_kept';
  const same = examples.findIndex((e) => e.source === 'synthetic' && saysTheSame(e.text, learned.text));
  if (same >= 0) {
    // Replaced in place: the real wording takes the invented one's slot.
    displaced.push(...examples.splice(same, 1, learned));
    return null;
  }
  if (examples.length < maxQueries) {
    examples.push(learned);
    return null;
  }
  const oldest = examples.findIndex((e) => e.source === 'synthetic');
  if (oldest < 0) return 'no_room';
  displaced.push(...examples.splice(oldest, 1));
  examples.push(learned);
  return null;
}
