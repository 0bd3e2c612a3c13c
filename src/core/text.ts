/**
 * Text normalisation shared by the hash embedder, BM25 and the "shares a word" checks of docs/learning.md.
 * One tokenizer for all three, so a word that counts as shared for a proposal check is also a word
 * that retrieval matches on. Pure, no dependencies.
 */

/**
 * English function words and request filler. Removed because they carry no tool meaning and, in the
 * docs/learning.md checks, would make any two requests "share a word".
 */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not of off on once only or other our ours ourselves out over own same she should so ' +
    'some such than that the their theirs them themselves then there these they this those through to too ' +
    'under until up very was we were what when where which while who whom why will with would you your ' +
    'yours yourself yourselves also may might must shall im ive id youre dont doesnt cant please thanks ' +
    'thank hi hello hey ' +
    'find need needs help want wants provide information info looking look like know give tell get ' +
    'let using use some something anything way able possible currently specific specifically detailed ' +
    'details include including various assist assistance interested'
  ).split(' '),
);

/** Combining marks left by NFKD, so "café" and "cafe" are one word. */
const COMBINING_MARKS = /[\u0300-\u036f]/g;
/** Anything that is not a letter or digit separates words (apostrophes are dropped first: "don't" → "dont"). */
const NON_WORD = /[^\p{L}\p{N}]+/gu;

/**
 * Lower-cases, strips accents and apostrophes, and turns every run of non-alphanumerics into one
 * space. The result is the canonical text both sides of a match are compared on.
 */
export function normalize(text: string): string {
  return text
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(/['\u2019]/g, '')
    .replace(NON_WORD, ' ')
    .trim();
}

/**
 * Splits an identifier into words: `get_weather`, `getWeather`, `SummarizeAnything_pr`,
 * `PDFReader` → "get weather", "get Weather", "Summarize Anything pr", "PDF Reader".
 * Tool names are written for code, requests for people; splitting lets them meet.
 */
export function splitIdentifier(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_.\-/&]+/g, ' ')
    .trim();
}

/** True when the word has a vowel (or y) — a stem without one ("str" of "string") is not a stem. */
function hasVowel(word: string): boolean {
  return /[aeiouy]/.test(word);
}

/** "runn" → "run", but "call", "miss", "buzz" keep their doubled letter (as Porter's step 1b). */
function undouble(word: string): string {
  const last = word.charAt(word.length - 1);
  if (word.length > 2 && last === word.charAt(word.length - 2) && !'lsz'.includes(last)) {
    return word.slice(0, -1);
  }
  return word;
}

/** Strips a plural "s" ("cities" → "citi", "boxes" → "boxe"; "class", "bus", "analysis" keep theirs). */
function stripPlural(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}i`;
  if (word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Strips "ing" / "ed" when a real stem is left ("booking" → "book", "planned" → "plan", "need" stays). */
function stripVerbSuffix(word: string): string {
  if (word.endsWith('ing') && word.length >= 6 && hasVowel(word.slice(0, -3))) {
    return undouble(word.slice(0, -3));
  }
  if (word.endsWith('ed') && !word.endsWith('eed') && word.length >= 5 && hasVowel(word.slice(0, -2))) {
    return undouble(word.slice(0, -2));
  }
  return word;
}

/**
 * A light English stemmer: plural, "-ing" and "-ed" stripping, then final "y" → "i" and a dropped
 * final "e", so "movie"/"movies", "city"/"cities", "make"/"making" meet. Stems need not be words;
 * they only have to agree. Words of three letters or fewer are left alone.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /^\d+$/.test(word)) return word;
  let w = stripVerbSuffix(stripPlural(word));
  if (w.length > 3 && w.endsWith('y') && !hasVowel(w.charAt(w.length - 2))) w = `${w.slice(0, -1)}i`;
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** True for a word that carries no tool meaning (see STOPWORDS). */
export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/**
 * The words of a text as retrieval sees them: normalised, stopwords removed, stemmed, in order
 * (order matters to the embedder's bigrams). Repeats are kept (BM25 counts them).
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of normalize(text).split(' ')) {
    if (word === '' || STOPWORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

/** Jaccard similarity of content-word sets at or above which two examples say the same. */
export const SAME_MEANING_JACCARD = 0.8;

/**
 * The words two texts must share for docs/learning.md ("an example shares a word with each request it
 * cites"): stemmed, stopwords out, stems of three characters or more, so "a"/"of"/"to" and
 * two-letter fragments never make a match.
 */
export function contentWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const token of tokenize(text)) if (token.length >= 3) words.add(token);
  return words;
}

/** Word sets indexed by word: for a query's words, how many each set shares, touching only sets that share one. */
export interface WordPostings {
  /** Set position → words it shares with `words` (sets sharing none are absent). */
  shared(words: ReadonlySet<string>): Map<number, number>;
}

export function indexWordSets(sets: readonly ReadonlySet<string>[]): WordPostings {
  const postings = new Map<string, number[]>();
  sets.forEach((set, at) => {
    for (const w of set) {
      const list = postings.get(w);
      if (list) list.push(at);
      else postings.set(w, [at]);
    }
  });
  return {
    shared(words) {
      const hits = new Map<number, number>();
      for (const w of words) for (const at of postings.get(w) ?? []) hits.set(at, (hits.get(at) ?? 0) + 1);
      return hits;
    },
  };
}

/** Words by which one request asks for several things. */
const JOINS = /\b(and|then|also|plus|as well as)\b|[&;]/i;

/** True when a request joins several asks ("… and …", "… then …"). */
export function asksSeveral(text: string): boolean {
  return JOINS.test(text);
}

/**
 * A 64-bit hash of a string as 16 hex digits: two FNV-1a passes with their offset and prime
 * swapped. Stable across isolates and releases (stored ids and marks are made of it); not for
 * secrets.
 */
export function fnv64Hex(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x811c9dc5) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}
