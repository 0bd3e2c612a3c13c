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
 *   flight", "for it", "send them") or says it comes next ("now", "also", "then", "too").
 *   A request that reads so is a new task, unless it also says the first answer was wrong ("no",
 *   "not", "wrong", "instead", "actually", "I meant"): then it is a correction, which is a re-ask.
 * - How a request opens says most: a person who opens with "no, I meant …", "not that, …" or "I
 *   said …" is correcting the answer they just got, so that request is a re-ask whatever words it
 *   shares (the second wording is often the one the first should have been); one that opens with
 *   "now …", "then …", "also …" or "and then …" takes the next step, so it is a follow-up even when
 *   it repeats a word of the request before ("now book the hotel, not the hostel").
 * - Only a request's first sentence that asks for something can refer to the turn before: a later
 *   sentence refers to the request's own first one ("I'm looking for recent IELTS questions. Can
 *   you help me with that?", "… Additionally, list the sources"). Sentences and openings that only
 *   acknowledge the answer ("Great, thanks! Now …", "ok, also …") are read past. And a continuation
 *   word used for a time or a degree continues nothing ("next week", "right now", "too much"), nor
 *   does "as well as", which joins two things the request lists. Standalone ToolE requests read as
 *   follow-ups 7.7% of the time by the words alone and 1.4% so (docs/learning.md).
 */
import { looksLikeValue } from './values.ts';
import { VALUE_PLACEHOLDER, scrubValues, withoutPlaceholders } from './scrub.ts';
import { contentWords } from './text.ts';

/**
 * Words by which a request says it comes after the one before it. Demonstratives alone ("this",
 * "that", "it") are not among them: people write them in requests that stand alone ("can you help
 * me with that?"), so they point back only in the phrases of `POINTS_BACK`. Nor is "next": before
 * a noun it picks a time or an item ("next week", "the next train"), and as the step after it
 * opens the request (`OPENS_AS_NEXT_STEP`).
 */
const CONTINUATION = new Set(['now', 'also', 'then', 'too', 'afterwards', 'additionally', 'another']);

/**
 * Where a continuation word says a time or a degree instead: "right now", "for now", "too much",
 * "too expensive" ("too" says "as well" only where its clause ends: "book a hotel there too").
 */
const NOT_CONTINUING =
  /\b(?:right|for|just|by|until|till|from|of|since|back) (?:now|then)\b|\btoo\b(?!\s*(?:[,.;:!?)]|$))/gi;

/**
 * A request that ends by saying it comes in addition ("…, with it too.", "… as well?") adds to the
 * turn before it, whatever its first sentence says: a request that adds to its own first sentence
 * says so where the second thing begins ("Also, …", "Additionally, …").
 */
const ENDS_ADDING_ON = /\b(?:too|as well)\W*$/i;

/**
 * Phrases that point back at what the request before did. "as well" says "too"; "as well as" only
 * joins two things the request itself lists.
 */
const POINTS_BACK =
  /\b(that|this|the same) (one|flight|order|booking|trip|file|claim|ticket|reservation|item|account|payment|room|hotel|city|place)\b|\b(after|with|for|on|to|in|from|about) (that|it|them|those)\b|\b(do|check|send|book|cancel|move|share|pay) (it|them)\b|\bas well\b(?! as\b)/i;

/**
 * Words that only acknowledge the answer before ("Great, thanks!", "ok"): a sentence of nothing
 * else asks for nothing, and a request opening with them opens after them.
 */
const COURTESY = new Set([
  'ok',
  'okay',
  'great',
  'perfect',
  'cool',
  'awesome',
  'nice',
  'good',
  'fine',
  'sure',
  'alright',
  'yes',
  'yeah',
  'yep',
  'thanks',
  'thank',
  'you',
  'thx',
  'cheers',
  'lovely',
  'wonderful',
  'excellent',
  'much',
  'so',
  'very',
]);

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

/**
 * The part of a request that can refer to the turn before it: its first sentence that asks for
 * something, sentences that only acknowledge the answer ("Great, thanks!") and an acknowledging
 * opening ("ok, now …") left out. A later sentence that says "also" or "help me with that" continues
 * or points into the request's own first sentence ("I'm looking for recent IELTS questions. Can you
 * help me with that?"): the request stands alone.
 */
function requestOpening(text: string): string {
  const sentences = text.trim().split(/(?<=[.!?])\s+/);
  const asks = sentences.find((s) => surfaceWords(s).some((w) => !COURTESY.has(w))) ?? '';
  const words = asks.split(/(?<=[\s,;:!.-])/);
  let start = 0;
  while (start < words.length && surfaceWords(words[start] ?? '').every((w) => COURTESY.has(w))) start++;
  return words.slice(start).join('');
}

/** True when `next` reads as a new task that builds on what the request before it did. */
export function readsAsFollowUp(next: string): boolean {
  return followsUp(next, requestOpening(next));
}

/** `readsAsFollowUp` of `next`, whose `requestOpening` is `opening` (found once by callers that read it too). */
function followsUp(next: string, opening: string): boolean {
  if (opensAsCorrection(opening)) return false;
  if (opensAsNextStep(opening)) return true;
  if (surfaceWords(next).some((w) => CORRECTION.has(w))) return false;
  const unquoted = opening.replace(/['\u2019]/g, '');
  return (
    ENDS_ADDING_ON.test(next) ||
    surfaceWords(unquoted.replace(NOT_CONTINUING, ' ')).some((w) => CONTINUATION.has(w)) ||
    POINTS_BACK.test(unquoted)
  );
}

/**
 * True when `next` asks again for what `first` asked: it opens as a correction, or they share a
 * word that is not a value and `next` does not read as a follow-up. `values` are the argument
 * values of both runs' calls.
 */
export function isReAsk(first: string, next: string, values: readonly unknown[]): boolean {
  const opening = requestOpening(next);
  if (opensAsCorrection(opening)) return true;
  // Cheapest first, same answer: masking argument values only removes words, so a pair that shares
  // none before it shares none after, and a follow-up is no re-ask whatever the words.
  if (!sharesTaskWord(first, next, []) || followsUp(next, opening)) return false;
  return values.length === 0 || sharesTaskWord(first, next, values);
}

function sharesTaskWord(first: string, next: string, values: readonly unknown[]): boolean {
  const before = taskWords(first, values);
  for (const w of taskWords(next, values)) if (before.has(w)) return true;
  return false;
}
