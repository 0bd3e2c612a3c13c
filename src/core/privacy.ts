/**
 * The privacy rule (docs/security.md "Personal values"): what is learned — usage notes, example
 * requests, Not-for lines, the example call — is read by the model on every turn, for every user
 * of the agent, so it never holds a personal value. This module decides what a value is and masks
 * it; the evidence and proposal checks call it. Pure and bounded: a review masks thousands of texts.
 *
 * A token is a value when any of these holds, each for its reason:
 * 1. it looks like one (values.ts): digits, e-mails, phones, cards, IBANs, money, dates, URLs,
 *    street addresses — a tool description needs none of them;
 * 2. it is an argument value of a call of the conversation (scrub.ts), in the form the call had it
 *    or in another: a numeric argument 1250 also matches "1,250.00", "1 250" and "1250.00", and a
 *    word of a many-word argument ("Pereira" of "Ana Pereira") matches alone — what the agent passed
 *    to a tool is what the user named;
 * 3. it is rare: not in the tool's own definition, not a common word of English (common-words.ts),
 *    and seen in fewer than `minConversations` distinct conversations of the log read. Names and
 *    references are caught here, while an ordinary word one user typed ("overpayment") is not;
 * 4. it is part of a full name: capitalised words in a row ("Ana Pereira", "Frank Pereira",
 *    "Ana Smith wants…"), at least one of them not a common word, none in the tool's definition. A
 *    list of customers repeats full names across conversations, so rarity alone would let them
 *    through. A single capitalised word is a value only by rule 3: a house term used in several
 *    conversations ("the Titan desk should take this claim") is exactly what learning is for.
 * 5. it fills a slot: a word of no plain English (one that only reads as two words joined, like
 *    "Fintan", counts) whose neighbours ("for _." / "in _,") the log also has around at least
 *    SLOT_MIN_FILLERS distinct such words, in most of the places the word is seen. "for Fintan",
 *    "for Maria", "for Ana": the words around are the request, the word in the middle the customer,
 *    however many conversations typed it. A house term keeps its own neighbours ("the Titan desk")
 *    and stays learnable. Reported as `rare_token`: what the log says of the word, not its look.
 * Words of the tool's own definition (name, description, parameter names, enum values) are never
 * values, by any rule: they are what every user of the tool shares.
 *
 * Bounds: the index reads the first INDEX_MAX_CHARS of each text, and counts saturate at
 * INDEX_MAX_COUNT conversations. Masking reads the first MASK_MAX_CHARS of a text (plus a look-ahead,
 * so no value is cut in half) and drops the rest.
 */
import { isCommonWord, isCommonWordNotCompound, foldWord } from './common-words.ts';
import { VALUE_PLACEHOLDER, valuePattern } from './scrub.ts';
import { splitIdentifier, stem } from './text.ts';
import { findValueSpans, mergeSpans } from './values.ts';

/** The index reads this much of each text (texts may be up to 16 KiB; names show up early). */
export const INDEX_MAX_CHARS = 4096;
/** Distinct conversations are counted up to this many: no setting asks for more. */
export const INDEX_MAX_COUNT = 64;
/** A masked text keeps at most this much of its start (what is learned is short). */
export const MASK_MAX_CHARS = 4096;
/** Read past the cut so a value that straddles it is masked whole, never half shown. */
const MASK_LOOKAHEAD = 256;

/**
 * What the log has seen, for the rare-token rule. Build it with `buildPrivacyIndex`;
 * read it only through this module.
 */
export interface PrivacyIndex {
  /** Uncommon words (folded: lower-case, no accents) → distinct conversations they were seen in. */
  readonly conversations: ReadonlyMap<string, number>;
  /**
   * Uncommon words that fill a slot (rule 5): in most of the places the log has them, other
   * requests say the same words around them with another uncommon word in their place.
   */
  readonly slotFillers: ReadonlySet<string>;
}

/** Everything the rule needs about one text's context. */
export interface PrivacyScope {
  /** The log read (`buildPrivacyIndex`). */
  index: PrivacyIndex;
  /** A word seen in fewer distinct conversations than this is rare (setting `min_conversations`, default 2). */
  minConversations: number;
  /** The tool's own words (`toolVocabulary`): never values. */
  vocabulary: ReadonlySet<string>;
  /** Argument values of every call of the conversation (leaves, as `argumentValues` returns them). */
  values: readonly unknown[];
}

/** Why a token is a value (the rule's four tests, in the file comment). */
export type PersonalReason = 'looks_like_value' | 'argument_value' | 'rare_token' | 'name';

/** One personal value found in a text. */
export interface PersonalValue {
  value: string;
  why: PersonalReason;
}

interface ReasonedSpan {
  start: number;
  end: number;
  why: PersonalReason;
}

/** A word as people write names: letters, inner apostrophes ("O'Brien"), a possessive dropped later. */
const WORD = /[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*/gu;
/** A capital and then at least one lower-case letter: "Ana", "McDonald" (not "ANA", not "I"). */
const TITLE_CASE = /^\p{Lu}.*\p{Ll}/u;
/** What ends a sentence, so the word after it starts one. */
const SENTENCE_END = /[.?!:\n]/;
/** Opening quotes and brackets between a sentence end and its first word. */
const OPENERS = /[\s"'“‘«([{*-]/;
/** Separators between two placeholders that add nothing once both sides are masked. */
const ADJACENT_PLACEHOLDERS = new RegExp(`${VALUE_PLACEHOLDER}(?:[\\s,/+&()\\-–—]*${VALUE_PLACEHOLDER})+`, 'g');

/**
 * Counts, for every uncommon word of the log, the distinct conversations it appears in, in one
 * pass over the texts (each read up to INDEX_MAX_CHARS).
 */
export function buildPrivacyIndex(texts: Iterable<{ text: string; conversation: string }>): PrivacyIndex {
  const seen = new Map<string, Set<string>>();
  /** Slot (the words around) → distinct uncommon words seen in it (saturating). */
  const fillers = new Map<string, Set<string>>();
  /** Uncommon word → the slots it was seen in, each counted once per text. */
  const placesOf = new Map<string, string[]>();
  for (const { text, conversation } of texts) {
    const head = text.slice(0, INDEX_MAX_CHARS);
    const tokens = [...head.matchAll(WORD)];
    for (let i = 0; i < tokens.length; i++) {
      const m = tokens[i];
      if (!m) continue;
      const word = folded(m[0]);
      if (word.length < 2 || isPlainCommon(word)) continue;
      if (!isCommon(word)) {
        const conversations = seen.get(word) ?? new Set<string>();
        seen.set(word, conversations);
        if (conversations.size < INDEX_MAX_COUNT) conversations.add(conversation);
      }
      const slot = slotAround(head, tokens, i);
      if (slot === null) continue;
      const inSlot = fillers.get(slot) ?? new Set<string>();
      fillers.set(slot, inSlot);
      if (inSlot.size < INDEX_MAX_COUNT) inSlot.add(word);
      const places = placesOf.get(word) ?? [];
      placesOf.set(word, places);
      if (places.length < INDEX_MAX_COUNT) places.push(slot);
    }
  }
  const counts = new Map<string, number>();
  for (const [word, conversations] of seen) counts.set(word, conversations.size);
  const slotFillers = new Set<string>();
  for (const [word, places] of placesOf) {
    const inSlots = places.filter((slot) => (fillers.get(slot)?.size ?? 0) >= SLOT_MIN_FILLERS).length;
    if (inSlots * 2 > places.length) slotFillers.add(word);
  }
  return { conversations: counts, slotFillers };
}

/** A slot holds at least this many distinct uncommon words before its fillers are values. */
export const SLOT_MIN_FILLERS = 3;

/**
 * The words around token `i`: the common word before it (joined by spaces only) and what follows
 * (the next word, or the punctuation or end). Null when no common word stands right before: a slot
 * is said with ordinary words ("for _", "in _"), not after another value.
 */
function slotAround(text: string, tokens: RegExpExecArray[] | RegExpMatchArray[], i: number): string | null {
  const m = tokens[i];
  const prev = tokens[i - 1];
  if (!m || m.index === undefined || !prev || prev.index === undefined) return null;
  if (!/^ +$/.test(text.slice(prev.index + prev[0].length, m.index))) return null;
  const before = folded(prev[0]);
  if (!isCommon(before)) return null;
  const end = m.index + m[0].length;
  const next = tokens[i + 1];
  let after: string;
  if (next && next.index !== undefined && /^ +$/.test(text.slice(end, next.index))) after = folded(next[0]);
  else after = text.slice(end).trimStart().charAt(0) || '$';
  return `${before} _ ${after}`;
}

/**
 * The words of a tool's definition, lower-cased, accents stripped, with their stems: the name
 * split as an identifier ("flight_checkin" → flight, checkin), the description, and in the
 * parameters' JSON Schema every property name, enum or const value, title and description.
 */
export function toolVocabulary(def: {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}): Set<string> {
  const words = new Set<string>();
  addWords(words, def.name);
  addWords(words, def.description);
  addSchemaWords(words, def.parameters, 0);
  return words;
}

/** Schemas nest; a definition deeper than this adds no more words (tooldef.ts bounds depth too). */
const SCHEMA_MAX_DEPTH = 32;

function addSchemaWords(words: Set<string>, node: unknown, depth: number): void {
  if (depth > SCHEMA_MAX_DEPTH || typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (const item of node) addSchemaWords(words, item, depth + 1);
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      for (const name of Object.keys(value)) addWords(words, name);
    }
    if ((key === 'description' || key === 'title') && typeof value === 'string') addWords(words, value);
    if (key === 'enum' || key === 'const' || key === 'examples') addLeafWords(words, value);
    addSchemaWords(words, value, depth + 1);
  }
}

function addLeafWords(words: Set<string>, value: unknown): void {
  if (typeof value === 'string' || typeof value === 'number') addWords(words, String(value));
  else if (Array.isArray(value)) for (const v of value) addLeafWords(words, v);
}

/** The words of a text as written ("BibTeX") and as identifier parts ("Bib", "Te", "X"). */
function addWords(words: Set<string>, text: string): void {
  for (const part of `${text} ${splitIdentifier(text)}`.split(/[^\p{L}\p{N}]+/u)) {
    if (part === '') continue;
    const word = foldWord(part);
    words.add(word);
    words.add(stem(word));
  }
}

/**
 * `text` with every personal value replaced by `<value>`, placeholders next to each other merged
 * into one, everything else untouched. Reads the first MASK_MAX_CHARS (never cutting a value in
 * half) and drops the rest.
 */
export function maskPersonal(text: string, scope: PrivacyScope): string {
  const window = text.slice(0, MASK_MAX_CHARS + MASK_LOOKAHEAD);
  const spans = personalSpans(window, scope);
  let cut = Math.min(window.length, MASK_MAX_CHARS);
  for (const span of spans) if (span.start < cut && span.end > cut) cut = span.end;
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.start >= cut) break;
    out += window.slice(at, span.start) + VALUE_PLACEHOLDER;
    at = span.end;
  }
  out += window.slice(at, Math.max(at, cut));
  return out.replace(ADJACENT_PLACEHOLDERS, VALUE_PLACEHOLDER);
}

/**
 * The first personal value of `text` (leftmost; at one place the strongest reason: argument value,
 * then look, then name, then rarity), or null when the text holds none. Reads what `maskPersonal` reads.
 */
export function findPersonal(text: string, scope: PrivacyScope): PersonalValue | null {
  const window = text.slice(0, MASK_MAX_CHARS + MASK_LOOKAHEAD);
  const first = personalSpans(window, scope)[0];
  return first ? { value: window.slice(first.start, first.end), why: first.why } : null;
}

const REASON_RANK: Record<PersonalReason, number> = { argument_value: 0, looks_like_value: 1, name: 2, rare_token: 3 };

/** Every personal value of `text`, as non-overlapping spans in text order, each with its reason. */
function personalSpans(text: string, scope: PrivacyScope): ReasonedSpan[] {
  const matcher = argumentMatcher(scope.values);
  const found: ReasonedSpan[] = [];
  for (const span of argumentSpans(text, matcher, scope.vocabulary)) found.push(span);
  for (const span of findValueSpans(text)) {
    if (isVocabularyToken(text.slice(span.start, span.end), scope.vocabulary)) continue;
    const why = matchesNumber(text.slice(span.start, span.end), matcher.numbers)
      ? 'argument_value'
      : 'looks_like_value';
    found.push({ start: span.start, end: span.end, why });
  }
  const taken = mergeSpans(found.map((s) => ({ start: s.start, end: s.end, kind: 'digits' as const })));
  for (const span of wordSpans(text, scope, matcher.words, taken)) found.push(span);
  return mergeReasoned(found);
}

/** Merges overlapping spans; the merged span keeps the reason of its leftmost, strongest part. */
function mergeReasoned(spans: ReasonedSpan[]): ReasonedSpan[] {
  spans.sort((a, b) => a.start - b.start || REASON_RANK[a.why] - REASON_RANK[b.why] || b.end - a.end);
  const out: ReasonedSpan[] = [];
  for (const span of spans) {
    const last = out[out.length - 1];
    if (last && span.start < last.end) last.end = Math.max(last.end, span.end);
    else out.push({ ...span });
  }
  return out;
}

/** The argument values of a conversation, compiled once per values array. */
interface ArgumentMatcher {
  /** scrub.ts's whole-token pattern over every value (null when there is none). */
  pattern: RegExp | null;
  /** Numeric values, canonical ("1250", "12.5"), to meet "1,250.00" and "1 250" in text. */
  numbers: ReadonlySet<string>;
  /** Uncommon words of many-word string values ("pereira" of "Ana Pereira"). */
  words: ReadonlySet<string>;
}

const matchers = new WeakMap<readonly unknown[], ArgumentMatcher>();

function argumentMatcher(values: readonly unknown[]): ArgumentMatcher {
  const cached = matchers.get(values);
  if (cached) return cached;
  const leaves: unknown[] = [];
  flattenLeaves(values, leaves, 0);
  const numbers = new Set<string>();
  const words = new Set<string>();
  for (const leaf of leaves) {
    const n = numericValue(leaf);
    if (n !== null) numbers.add(n);
    // A word of a many-word value ("Pereira" of "Ana Pereira") names alone; a reference's letters
    // ("CW" of "CW-123456") are its format, shared by every caller.
    if (typeof leaf === 'string' && !/\d/.test(leaf)) {
      for (const m of leaf.matchAll(WORD)) {
        const word = folded(m[0]);
        if (word.length >= 2 && !isCommon(word)) words.add(word);
      }
    }
  }
  const matcher = { pattern: valuePattern(leaves), numbers, words };
  matchers.set(values, matcher);
  return matcher;
}

function flattenLeaves(value: unknown, out: unknown[], depth: number): void {
  if (depth > SCHEMA_MAX_DEPTH) return;
  if (Array.isArray(value)) for (const v of value) flattenLeaves(v, out, depth + 1);
  else if (typeof value === 'object' && value !== null) flattenLeaves(Object.values(value), out, depth + 1);
  else out.push(value);
}

/** The canonical text of a number-valued argument (1250, "1250", "1250.00" → "1250"), else null. */
function numericValue(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(Math.abs(value));
  if (typeof value === 'string' && /^[-+]?\d+(?:\.\d+)?$/.test(value.trim())) {
    return String(Math.abs(Number(value.trim())));
  }
  return null;
}

/** A number as written in text: "1,250.00", "1 250,00", "1.250", "1250". */
const WRITTEN_NUMBER = /\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?/g;

/** True when a number written in `text` is one of the numeric argument values, whatever its format. */
function matchesNumber(text: string, numbers: ReadonlySet<string>): boolean {
  if (numbers.size === 0) return false;
  for (const m of text.matchAll(WRITTEN_NUMBER)) {
    for (const reading of numberReadings(m[0])) if (numbers.has(reading)) return true;
  }
  return false;
}

/** Both readings of a written number: "1,250" is 1250 (grouping) or 1.25 (decimal comma). */
function numberReadings(written: string): string[] {
  const compact = written.replace(/[\u00a0\u202f ]/g, '');
  const out: string[] = [];
  const lastSep = Math.max(compact.lastIndexOf('.'), compact.lastIndexOf(','));
  if (lastSep >= 0 && compact.length - lastSep - 1 <= 2) {
    const whole = compact.slice(0, lastSep).replace(/[.,]/g, '');
    out.push(String(Number(`${whole}.${compact.slice(lastSep + 1)}`)));
  }
  out.push(String(Number(compact.replace(/[.,]/g, ''))));
  return out;
}

/** Where scrub.ts's pattern finds an argument value, unless every word of it is the tool's own. */
function argumentSpans(text: string, matcher: ArgumentMatcher, vocabulary: ReadonlySet<string>): ReasonedSpan[] {
  const out: ReasonedSpan[] = [];
  if (!matcher.pattern) return out;
  matcher.pattern.lastIndex = 0;
  for (const m of text.matchAll(matcher.pattern)) {
    if (isVocabularyToken(m[0], vocabulary)) continue;
    out.push({ start: m.index, end: m.index + m[0].length, why: 'argument_value' });
  }
  return out;
}

/** One word of a text, where it is, and why it is a value (null: it is not). */
interface WordSpan {
  start: number;
  end: number;
  raw: string;
  why: PersonalReason | null;
}

/** Spans of single words that are argument words, names or rare tokens (rules 2, 4 and 3). */
function wordSpans(
  text: string,
  scope: PrivacyScope,
  argumentWords: ReadonlySet<string>,
  taken: readonly { start: number; end: number }[],
): ReasonedSpan[] {
  const words: WordSpan[] = [];
  let t = 0;
  for (const m of text.matchAll(WORD)) {
    const start = m.index;
    const end = start + m[0].length;
    while (t < taken.length && (taken[t]?.end ?? 0) <= start) t++;
    const cover = taken[t];
    if (cover && cover.start < end) continue;
    words.push({ start, end, raw: m[0], why: wordReason(m[0], scope, argumentWords) });
  }
  markNameRuns(words, text, scope.vocabulary);
  extendNames(words, text, scope.vocabulary);
  const out: ReasonedSpan[] = [];
  for (const w of words) if (w.why) out.push({ start: w.start, end: w.end, why: w.why });
  return out;
}

/**
 * Rule 4: two capitalised words side by side, one of them not a common word and neither the tool's
 * own, are a full name; both are marked, and `extendNames` takes in capitalised neighbours.
 */
function markNameRuns(words: WordSpan[], text: string, vocabulary: ReadonlySet<string>): void {
  const capital = (w: WordSpan) =>
    (w.why === null || w.why === 'rare_token') && isTitleCase(w.raw) && !inVocabulary(folded(w.raw), vocabulary);
  for (let i = 0; i + 1 < words.length; i++) {
    const a = words[i];
    const b = words[i + 1];
    if (!a || !b || !capital(a) || !capital(b) || !/^[ -]$/.test(text.slice(a.end, b.start))) continue;
    const commonA = isCommonWordNotCompound(folded(a.raw));
    if (commonA && isCommonWordNotCompound(folded(b.raw))) continue;
    // "Call Pereira now": a common word starting a sentence is capitalised for that alone.
    if (commonA && startsSentence(text, a.start)) continue;
    a.why = 'name';
    b.why = 'name';
  }
}

/**
 * A capitalised word right next to a name is part of that name, even when it is also a word of
 * English: "John Smith", "Frank Pereira" (first names and surnames that are words). Not a common
 * word that starts a sentence: "Call Pereira" keeps its verb.
 */
function extendNames(words: WordSpan[], text: string, vocabulary: ReadonlySet<string>): void {
  const joins = (a: WordSpan, b: WordSpan) => /^[ -]$/.test(text.slice(a.end, b.start));
  const joinable = (w: WordSpan) =>
    w.why === null &&
    isTitleCase(w.raw) &&
    !inVocabulary(folded(w.raw), vocabulary) &&
    !(startsSentence(text, w.start) && isCommonWordNotCompound(folded(w.raw)));
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const next = words[i + 1];
    if (word && next && opensCapitalisedRun(word, next, text, vocabulary)) word.why = 'name';
    if (!word || word.why === null || word.why === 'rare_token') continue;
    for (let j = i - 1; j >= 0; j--) {
      const left = words[j];
      const right = words[j + 1];
      if (!left || !right || !joinable(left) || !joins(left, right)) break;
      left.why = 'name';
    }
    for (let j = i + 1; j < words.length; j++) {
      const left = words[j - 1];
      const right = words[j];
      if (!left || !right || !joinable(right) || !joins(left, right)) break;
      right.why = 'name';
    }
  }
}

/**
 * An uncommon word that starts a sentence and is followed by another capitalised word reads as a
 * first name ("Ana Smith wants…"): capitalisation says nothing at a sentence start, but a run of
 * capitals does.
 */
function opensCapitalisedRun(word: WordSpan, next: WordSpan, text: string, vocabulary: ReadonlySet<string>): boolean {
  if (word.why !== null && word.why !== 'rare_token') return false;
  if (!isTitleCase(word.raw) || !isTitleCase(next.raw) || !/^[ -]$/.test(text.slice(word.end, next.start))) {
    return false;
  }
  const w = folded(word.raw);
  return !inVocabulary(w, vocabulary) && !isCommonWordNotCompound(w) && !inVocabulary(folded(next.raw), vocabulary);
}

/** Why one word is a value, or null when it is not one. */
function wordReason(raw: string, scope: PrivacyScope, argumentWords: ReadonlySet<string>): PersonalReason | null {
  const word = folded(raw);
  if (word.length < 2 || inVocabulary(word, scope.vocabulary)) return null;
  if (argumentWords.has(word)) return 'argument_value';
  // Before the common-word test: a name can read as two words joined ("Fintan": fin + tan).
  if (scope.index.slotFillers.has(word)) return 'rare_token';
  if (isCommon(word)) return null;
  const count = scope.index.conversations.get(word) ?? 0;
  return count < scope.minConversations ? 'rare_token' : null;
}

/** "Ana", "McDonald", "O'Brien's" — not "ANA", "I" or "I'm". */
function isTitleCase(raw: string): boolean {
  return TITLE_CASE.test(withoutContraction(raw));
}

/** True when nothing but quotes, brackets and spaces stand between `at` and a sentence end or the start. */
function startsSentence(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && OPENERS.test(text.charAt(i)) && text.charAt(i) !== '\n') i--;
  return i < 0 || SENTENCE_END.test(text.charAt(i));
}

function inVocabulary(word: string, vocabulary: ReadonlySet<string>): boolean {
  return vocabulary.has(word) || vocabulary.has(stem(word));
}

/**
 * True when every word of a found value is one of the tool's own ("metric" of an enum, "mp3" of a
 * name). A part without a letter never is: a number in a description ("up to 250") says nothing
 * about the amount a user types.
 */
function isVocabularyToken(value: string, vocabulary: ReadonlySet<string>): boolean {
  const parts = value.split(/[^\p{L}\p{N}]+/u).filter((p) => p !== '');
  return parts.length > 0 && parts.every((p) => /\p{L}/u.test(p) && inVocabulary(foldWord(p), vocabulary));
}

/** A contraction's or possessive's ending: "I'm", "we've", "isn't", "Ana's". */
const CONTRACTION = /(?:n['’]t|['’](?:s|m|re|ve|ll|d))$/i;
/** What "can't", "won't" and "shan't" leave once "n't" is dropped. */
const CONTRACTED_STEMS: Readonly<Record<string, string>> = { ca: 'can', wo: 'will', sha: 'shall' };

/** A word as written, without its contraction or possessive: "I'm" → "I", "Ana's" → "Ana". */
function withoutContraction(raw: string): string {
  return raw.replace(CONTRACTION, '');
}

/** A word in the folded form the list and the index use, contraction dropped ("isn't" → "is"). */
function folded(raw: string): string {
  const word = foldWord(withoutContraction(raw)).replace(/['’]/g, '');
  return CONTRACTED_STEMS[word] ?? word;
}

/** Most words a memo below keeps before it starts again. */
const COMMON_MEMO_MAX = 50_000;

/** `test` memoised (a review asks about the same words thousands of times); bounded. */
function memoised(test: (word: string) => boolean): (word: string) => boolean {
  const memo = new Map<string, boolean>();
  return (word) => {
    const known = memo.get(word);
    if (known !== undefined) return known;
    if (memo.size >= COMMON_MEMO_MAX) memo.clear();
    const answer = test(word);
    memo.set(word, answer);
    return answer;
  };
}

/** A word of the list itself, not read as two joined. */
const isPlainCommon = memoised(isCommonWordNotCompound);
const isCommon = memoised(isCommonWord);
