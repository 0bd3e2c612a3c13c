/**
 * Values by their look (docs/security.md "Personal values"): whatever a person types that names one
 * thing rather than a kind of thing — an id, an amount, a date, an address, a way to reach someone.
 * Pure; used by the privacy rule (privacy.ts) and by the re-ask test, where values never count as
 * shared words.
 *
 * Why each kind, and how it is read:
 * - anything with a digit: ids ("4471-XK", "CW-111111"), amounts, dates, phone and card numbers,
 *   postcodes. A tool description needs no particular number, so every number is a value;
 * - e-mail addresses and URLs (with a scheme, "www." or a common top-level domain): they reach
 *   or name one person or site;
 * - IBANs, card numbers and phone numbers written with spaces, dashes, dots, "+" and parentheses:
 *   one value, separators included, so no "+" or "(21)" is left behind;
 * - money with a currency symbol, code or word ("$1,250.00", "1 250,00 €", "EUR 40", "40 euros"):
 *   the symbol or code goes with the amount;
 * - dates with an English month name ("3 May", "May 3rd", "3rd of May 2026") besides numeric ones
 *   ("2026-05-03", "03/05/2026"): "May" alone is a verb and stays;
 * - street addresses in several languages: a number and a street word ("12 Main St",
 *   "221B Baker Street"), a street word before capitalised names ("Rua Augusta", "Calle Mayor 5",
 *   "Rue de Rivoli"), a German compound ("Hauptstraße 5"), capitalised names before a street word
 *   ("Baker Street"): the names of a street are as personal as its number.
 */

/** What a value span is; informational (every kind is masked the same way). */
export type ValueKind = 'email' | 'url' | 'iban' | 'card' | 'phone' | 'money' | 'date' | 'address' | 'digits';

/** One value found in a text: `text.slice(start, end)` is the value. */
export interface ValueSpan {
  start: number;
  end: number;
  kind: ValueKind;
}

/** A number as amounts write it: "1,250.00", "1 250,00", "1.250", "40", "12.5". */
const AMOUNT = String.raw`\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?`;
const CURRENCY_SYMBOL = String.raw`[$€£¥₹₩₽¢]|R\$|US\$|A\$|C\$|CHF|Fr\.`;
const CURRENCY_CODE = 'USD|EUR|GBP|JPY|CNY|INR|BRL|CAD|AUD|CHF|SEK|NOK|DKK|PLN|MXN|ZAR|NZD|SGD|HKD|KRW|TRY|RUB';
const CURRENCY_WORD = 'dollars?|euros?|pounds?|cents?|pence|reais|real|yen|francs?|rupees?|pesos?|bucks';
const MONTH =
  'january|february|march|april|may|june|july|august|september|october|november|december|' +
  'jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec';
const DAY = String.raw`(?:[0-3]?\d)(?:st|nd|rd|th)?`;
/** English street words, after a house number. */
const STREET_AFTER =
  'street|st|road|rd|avenue|ave|lane|ln|boulevard|blvd|drive|dr|court|ct|place|pl|square|sq|way|' +
  'terrace|close|crescent|highway|hwy|parkway|pkwy|row|mews|gardens|grove|hill';
/** Street words written before the street's name (Portuguese, Spanish, Catalan, French, Italian). */
const STREET_BEFORE =
  'rua|avenida|av|travessa|largo|praça|praca|estrada|alameda|calle|avda|paseo|plaza|camino|carrer|' +
  'rue|chemin|allée|allee|via|viale|piazza|corso|vicolo';
const NAME_WORD = String.raw`\p{Lu}[\p{L}'’-]*`;
const CONNECTOR = '(?:de|da|do|dos|das|del|la|las|los|le|les|des|du|di|della|dei|degli|von|van)';

/** "rua|calle" → "[Rr]ua|[Cc]alle": a street word may start a sentence, the names after it stay capitalised. */
function anyCaseFirst(words: string): string {
  return words
    .split('|')
    .map((w) => `[${w.charAt(0).toUpperCase()}${w.charAt(0)}]${w.slice(1)}`)
    .join('|');
}

/** Each kind's pattern, built once (a review masks thousands of texts). All global; `lastIndex` is reset before each use. */
const PATTERNS: readonly { kind: ValueKind; re: RegExp }[] = [
  { kind: 'email', re: /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu },
  {
    kind: 'url',
    re: /(?:\b[a-z][a-z0-9+.-]*:\/\/|\bwww\.)[^\s<>"'`]+[^\s<>"'`.,;:!?)\]]|\b[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.(?:com|net|org|io|co|dev|app|ai|edu|gov|info|biz|me|uk|pt|es|de|fr|it|nl|br|eu|us|ca)\b(?:\/[^\s<>"'`]*[^\s<>"'`.,;:!?)\]])?/giu,
  },
  { kind: 'iban', re: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g },
  { kind: 'card', re: /\b\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?\b/g },
  {
    kind: 'money',
    re: new RegExp(
      String.raw`(?:${CURRENCY_SYMBOL})\s?(?:${AMOUNT})|(?:\b(?:${CURRENCY_CODE})\s?)(?:${AMOUNT})|(?:${AMOUNT})\s?(?:${CURRENCY_SYMBOL}|\b(?:${CURRENCY_CODE}|${CURRENCY_WORD})\b)`,
      'giu',
    ),
  },
  {
    kind: 'date',
    re: new RegExp(
      String.raw`\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b|\b${DAY}(?:\s+of)?\s+(?:${MONTH})\b\.?(?:,?\s+\d{4}\b)?|\b(?:${MONTH})\.?\s+${DAY}\b(?:,?\s+\d{4}\b)?`,
      'giu',
    ),
  },
  {
    kind: 'phone',
    re: /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}\b|\+\d{6,15}\b/g,
  },
  {
    kind: 'address',
    re: new RegExp(String.raw`\b\d+[A-Za-z]?,?\s+(?:${NAME_WORD}\s+){1,3}(?:${anyCaseFirst(STREET_AFTER)})\b\.?`, 'gu'),
  },
  {
    kind: 'address',
    re: new RegExp(
      String.raw`(?:\b\d+[A-Za-z]?,?\s+)?(?<![\p{L}\p{N}])(?:${anyCaseFirst(STREET_BEFORE)})(?![\p{L}\p{N}])\.?\s+(?:${CONNECTOR}\s+){0,2}${NAME_WORD}(?:\s+(?:${CONNECTOR}\s+)?${NAME_WORD}){0,3}(?:,?\s+(?:n[º°o.]\s*)?\d+[A-Za-z]?\b)?`,
      'gu',
    ),
  },
  {
    kind: 'address',
    re: /\b\p{L}+(?:straße|strasse|str\.|weg|gasse|allee|platz|straat|laan|plein)\s*\d+[a-z]?\b/giu,
  },
  {
    kind: 'address',
    re: new RegExp(
      String.raw`(?:${NAME_WORD}\s+){1,3}(?:Street|Road|Avenue|Lane|Boulevard|Drive|Square|Terrace|Crescent)\b`,
      'gu',
    ),
  },
  { kind: 'digits', re: /[\p{L}\p{N}_#-]*\d[\p{L}\p{N}_#-]*/gu },
];

/**
 * Every value in `text` by its look, as spans sorted by start, overlapping and touching spans
 * merged into one (the first kind found at that place names it).
 */
export function findValueSpans(text: string): ValueSpan[] {
  const found: ValueSpan[] = [];
  for (const { kind, re } of PATTERNS) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) {
      if (m[0] === '') continue;
      let end = m.index + m[0].length;
      if (kind === 'address') end += TOWN_AFTER.exec(text.slice(end))?.[0].length ?? 0;
      found.push({ start: m.index, end, kind });
    }
  }
  return mergeSpans(found);
}

/**
 * The town written after a street address (", Bologna", ", San Marino"): part of the address, as
 * personal as the street, so it is masked with it.
 */
const TOWN_AFTER = new RegExp(String.raw`^,\s*${NAME_WORD}(?:\s+(?:${CONNECTOR}\s+)?${NAME_WORD}){0,2}`, 'u');

/** Sorts spans and merges those that overlap or touch, keeping the kind of the earliest. */
export function mergeSpans(spans: readonly ValueSpan[]): ValueSpan[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: ValueSpan[] = [];
  for (const span of sorted) {
    const last = out[out.length - 1];
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else out.push({ ...span });
  }
  return out;
}

/** An e-mail address, a URL, or a token holding a digit (ids, amounts, dates, phone and card numbers). */
export function looksLikeValue(token: string): boolean {
  const t = token.trim();
  if (t === '') return false;
  if (/\d/.test(t)) return true;
  if (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(t)) return true;
  return /^(https?:\/\/|www\.)/i.test(t);
}
