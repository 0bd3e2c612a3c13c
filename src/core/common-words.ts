/**
 * The common words of English, as the privacy rule reads them (docs/security.md "Personal values"):
 * a word one user typed that is an ordinary word of the language is no personal value, however
 * rarely the log has seen it. The list ships in the bundle (common-words.data.ts, generated from
 * SCOWL, which holds no proper names below size 50); this module answers "is this word common?"
 * for the forms people actually type. Pure; the set is built on first use, not at isolate start.
 *
 * A word is common when it is on the list, or is an inflection of a listed word (plural, -ed,
 * -ing, -ly, -er, -est), or — for the rare-token test only — a compound of two of them
 * ("overpayment" = over + payment). Compounds are left out of the name test on purpose: many
 * surnames are compounds of common words (Goldman, Woodward, Blackwood), and a capitalised word inside
 * a sentence is exactly where such a name shows up.
 *
 * "checkin" is not common: a compound with a two-letter tail ("in", "on") would make Martin, Robin
 * and Eaton common too. Where it matters it is in the tool's own definition (`flight_checkin`), and
 * words of the tool's definition are never values.
 */
import { COMMON_WORDS_FRONT_CODED } from './common-words.data.ts';

/**
 * Prefixes that make a compound with any common word ("reschedule", "nonrefundable", "upcoming",
 * "online"), though too short (or no word) to be a part of three letters of their own.
 */
const COMPOUND_PREFIXES: readonly string[] = [
  'anti',
  'co',
  'counter',
  'cross',
  'de',
  'dis',
  'inter',
  'mis',
  'multi',
  'non',
  'on',
  'out',
  'over',
  'post',
  'pre',
  're',
  'self',
  'semi',
  'sub',
  'super',
  'un',
  'under',
  'up',
];

/**
 * Proper nouns every request may hold that name no one: days, months and the major languages. SCOWL
 * keeps them out of its lower-case lists; without them "on Monday" or "into Spanish" would read as a
 * name.
 */
const EVERYDAY_PROPER_NOUNS: readonly string[] = (
  'monday tuesday wednesday thursday friday saturday sunday ' +
  'january february march april may june july august september october november december ' +
  'english spanish portuguese french german italian dutch chinese japanese korean arabic russian hindi'
).split(' ');

/**
 * Words of the list that requests use far more often as given names than as words ("maria" is a
 * plural of "mare" there): never common, so a lone "Maria" is a name.
 */
const NAMES_NOT_WORDS: readonly string[] = ['maria'];

/**
 * Words of software and the web that people type to agents every day and that SCOWL's common sizes
 * are too old to hold ("plugin", "chatbot", "online"). Not names; a tool's own jargon comes from its
 * definition instead.
 */
const EVERYDAY_TECH_WORDS: readonly string[] = (
  'app api blog bot browser chatbot crypto cryptocurrency dataset download ebook email emoji faq gif ' +
  'hashtag inbox internet login logout online pdf playlist plugin podcast selfie signup smartphone ' +
  'spreadsheet startup tablet texting username url webpage website wifi wiki'
).split(' ');

/** Compounds are only looked for in words this long or shorter (bounds the work on a long token). */
const COMPOUND_MAX_LENGTH = 24;
/** A compound part that is no listed prefix has at least this many letters ("overpayment": over + payment). */
const COMPOUND_PART_MIN = 3;

let words: ReadonlySet<string> | null = null;

/** The list, decoded once: each entry (spaces between) is a base-36 shared-prefix length and the rest of the word. */
function commonWords(): ReadonlySet<string> {
  if (words) return words;
  const set = new Set<string>([...EVERYDAY_PROPER_NOUNS, ...EVERYDAY_TECH_WORDS]);
  let previous = '';
  for (const entry of COMMON_WORDS_FRONT_CODED.split(' ')) {
    const word = previous.slice(0, Number.parseInt(entry.charAt(0), 36)) + entry.slice(1);
    set.add(word);
    previous = word;
  }
  for (const name of NAMES_NOT_WORDS) set.delete(name);
  words = set;
  return set;
}

/** Lower-case, accents stripped: the form the list is stored in ("Café" → "cafe"). */
export function foldWord(word: string): string {
  return word
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}

/** The stems an inflected word may come from: "cities" → "city", "planned" → "plan", "making" → "make". */
function inflectionStems(word: string): string[] {
  const out: string[] = [];
  const strip = (suffix: string, ...endings: string[]) => {
    if (word.length <= suffix.length + 2 || !word.endsWith(suffix)) return;
    const stem = word.slice(0, -suffix.length);
    for (const e of endings) out.push(stem + e);
    const last = stem.charAt(stem.length - 1);
    if (last === stem.charAt(stem.length - 2)) out.push(stem.slice(0, -1));
  };
  strip('s', '');
  strip('es', '');
  strip('ies', 'y');
  strip('ied', 'y');
  strip('ed', '', 'e');
  strip('ing', '', 'e');
  strip('ly', '', 'le');
  strip('ily', 'y');
  strip('er', '', 'e');
  strip('ers', '', 'e');
  strip('est', '', 'e');
  strip('ier', 'y');
  return out;
}

/** On the list, or an inflection of a listed word. */
function isListedForm(word: string): boolean {
  const set = commonWords();
  if (set.has(word)) return true;
  return inflectionStems(word).some((stem) => set.has(stem));
}

/** Two common parts, or a listed prefix and a common word: "overpayment", "rebook", "nonrefundable". */
function isCompound(word: string): boolean {
  if (word.length > COMPOUND_MAX_LENGTH) return false;
  for (const prefix of COMPOUND_PREFIXES) {
    if (word.length - prefix.length >= COMPOUND_PART_MIN && word.startsWith(prefix)) {
      if (isListedForm(word.slice(prefix.length))) return true;
    }
  }
  for (let i = COMPOUND_PART_MIN; i <= word.length - COMPOUND_PART_MIN; i++) {
    if (commonWords().has(word.slice(0, i)) && isListedForm(word.slice(i))) return true;
  }
  return false;
}

/**
 * True when `word` is an ordinary word of English: listed, an inflection of a listed word, or a
 * compound of two (see the file comment). Case and accents do not matter.
 */
export function isCommonWord(word: string): boolean {
  const w = foldWord(word);
  if (!/^[a-z]+$/.test(w)) return false;
  return isListedForm(w) || isCompound(w);
}

/**
 * True when `word` is common without being a compound: the stricter test a capitalised word must
 * pass not to read as a name ("Goldman" is gold + man, and still a name).
 */
export function isCommonWordNotCompound(word: string): boolean {
  const w = foldWord(word);
  return /^[a-z]+$/.test(w) && isListedForm(w);
}
