/**
 * Does the next request of a conversation ask again for what the one before asked (a paraphrase:
 * the first run did not give the user what they wanted), or does it start a new task that builds on
 * it (a follow-up: "now check Ana in for that flight")? docs/learning.md "Re-asks and follow-ups".
 *
 * The rule, and why:
 * - A re-ask restates the request, so the two share a word that says what is wanted. Values never
 *   count as shared words: a city, a name or an order number names what a task is about, not which
 *   task it is ("what's the weather in Porto" then "book a hotel in Porto" are two tasks).
 * - A follow-up refers back to what was just done instead of restating it: it points at it ("that
 *   flight", "for it", "send them") or says it comes next ("now", "also", "then", "next", "too").
 *   A request that reads so is a new task, unless it also says the first answer was wrong ("no",
 *   "not", "wrong", "instead", "actually", "I meant"): then it is a correction, which is a re-ask.
 * - How a request opens says most: a person who opens with "no, I meant …", "not that, …" or "I
 *   said …" is correcting the answer they just got, so that request is a re-ask whatever words it
 *   shares (the second wording is often the one the first should have been); one that opens with
 *   "now …", "then …", "also …" or "and then …" takes the next step, so it is a follow-up even when
 *   it repeats a word of the request before ("now book the hotel, not the hostel").
 */
import { looksLikeValue } from './values.ts';
import { VALUE_PLACEHOLDER, scrubValues, withoutPlaceholders } from './scrub.ts';
import { contentWords } from './text.ts';

/**
 * Words by which a request says it comes after the one before it. Demonstratives alone ("this",
 * "that", "it") are not among them: people write them in requests that stand alone ("can you help
 * me with that?"), so they point back only in the phrases of `POINTS_BACK`.
 */
const CONTINUATION = new Set(['now', 'also', 'then', 'next', 'too', 'afterwards', 'additionally', 'another']);

/** Phrases that point back at what the request before did. */
const POINTS_BACK =
  /\b(that|this|the same) (one|flight|order|booking|trip|file|claim|ticket|reservation|item|account|payment|room|hotel|city|place)\b|\b(after|with|for|on|to|in|from|about) (that|it|them|those)\b|\b(do|check|send|book|cancel|move|share|pay) (it|them)\b|\bas well\b/i;

/** Words by which a request says the answer before it was not what was asked. */
const CORRECTION = new Set([
  'no',
  'nope',
  'not',
  'wrong',
  'instead',
  'actually',
  'meant',
  'mean',
  'rather',
  'didnt',
  'doesnt',
  'isnt',
  'wasnt',
  'dont',
  'cant',
  'wont',
  'incorrect',
]);

/**
 * How a request that corrects the answer before it opens: "no, …" (not "no worries"), "nope",
 * "not that/this/what I …", "wrong …", "I said …", "I meant …", "that's not …", "I asked for …".
 */
const OPENS_AS_CORRECTION =
  /^\W*(?:(?:no|nope)\b(?!\s+(?:worries|problem|rush|hurry|need)\b)|not (?:that|this|what|the)\b|wrong\b|(?:sorry,?\s+|actually,?\s+)?i (?:said|meant|asked for)\b|thats? (?:not|wrong)\b|that (?:is|was|wasnt) (?:not|wrong)\b)/i;

/** How a request that takes the next step opens: "now …", "then …", "also …", "and then …", "next, …". */
const OPENS_AS_NEXT_STEP = /^\W*(?:and\s+)?(?:now|then|also|next|afterwards|after that)\b/i;

/** True when `next` opens by saying the answer before it was not what was asked (file comment). */
export function opensAsCorrection(next: string): boolean {
  return OPENS_AS_CORRECTION.test(next.replace(/['\u2019]/g, ''));
}

/** True when `next` opens by taking the next step after what was done (file comment). */
export function opensAsNextStep(next: string): boolean {
  return OPENS_AS_NEXT_STEP.test(next);
}

/** The lower-cased words of a text as a person typed them (apostrophes dropped: "didn't" → "didnt"). */
function surfaceWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/['\u2019]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** The content words of a request with every value out: argument values, then anything that looks like one. */
function taskWords(text: string, values: readonly unknown[]): Set<string> {
  let scrubbed = scrubValues(text, values);
  scrubbed = scrubbed
    .split(/(\s+)/)
    .map((token) => (looksLikeValue(token) ? VALUE_PLACEHOLDER : token))
    .join('');
  return contentWords(withoutPlaceholders(scrubbed));
}

/** True when `next` reads as a new task that builds on what the request before it did. */
export function readsAsFollowUp(next: string): boolean {
  if (opensAsCorrection(next)) return false;
  if (opensAsNextStep(next)) return true;
  const words = surfaceWords(next);
  if (words.some((w) => CORRECTION.has(w))) return false;
  return words.some((w) => CONTINUATION.has(w)) || POINTS_BACK.test(next.replace(/['\u2019]/g, ''));
}

/**
 * True when `next` asks again for what `first` asked: it opens as a correction, or they share a
 * word that is not a value and `next` does not read as a follow-up. `values` are the argument
 * values of both runs' calls.
 */
export function isReAsk(first: string, next: string, values: readonly unknown[]): boolean {
  if (opensAsCorrection(next)) return true;
  // Cheapest first, same answer: masking argument values only removes words, so a pair that shares
  // none before it shares none after, and a follow-up is no re-ask whatever the words.
  if (!sharesTaskWord(first, next, []) || readsAsFollowUp(next)) return false;
  return values.length === 0 || sharesTaskWord(first, next, values);
}

function sharesTaskWord(first: string, next: string, values: readonly unknown[]): boolean {
  const before = taskWords(first, values);
  for (const w of taskWords(next, values)) if (before.has(w)) return true;
  return false;
}
