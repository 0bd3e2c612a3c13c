/**
 * Argument values out of text (docs/api.md Revision.evidence: "never argument values"; docs/learning.md: a
 * proposal "contains no argument value from the calls (an id, a name, an amount)").
 *
 * One matcher serves both uses: `scrubValues` hides values in evidence text before a model reads
 * it, and `findArgumentValue` refuses a proposal that still contains one.
 *
 * What counts as a value, and how it matches (choices written down here, the contract is silent):
 * - every leaf of the arguments: strings and finite numbers, nested objects and arrays flattened;
 *   booleans and null carry no identity and are skipped, and so are texts shorter than 2
 *   characters (a single digit or letter is no id, name or amount worth hiding);
 * - matching is case-insensitive and whole-token: a value is not found inside a longer word or
 *   number ("12" is not found in "123");
 * - a value with at least 4 digits also matches its digit-masked form, so an id of the same shape
 *   ("CW-555111" for a logged "CW-123456") is hidden too. The digits must be digits in the text:
 *   a format written with `#` ("CW-######") is not a value and stays.
 *
 * What it reads is bounded (docs/api.md "Limits"), whatever the log holds: at most `MAX_VALUES`
 * values, the first in call order, and none longer than `MAX_VALUE_CHARS` — the longest text a value
 * could be found in (a logged request or error text), so such a value could never match whole.
 */
import type { CallRecord } from './records.ts';

/** What a value is replaced with in evidence text. */
export const VALUE_PLACEHOLDER = '<value>';

/** Fewer digits than this and a value only matches itself (a masked "##" would hit any small number). */
const MASKED_MIN_DIGITS = 4;
/** Regex syntax characters; only these may be escaped under the `u` flag. */
const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/g;
/** Values the scrubber reads at most: one alternation of them is the pattern it matches with. */
export const MAX_VALUES = 5000;
/** A longer value is never looked for: no text the scrubber reads is longer (LIMITS.requestChars, errorChars). */
export const MAX_VALUE_CHARS = 4000;

/**
 * Argument values of the calls (leaves of nested objects and arrays), in call order: the first
 * `MAX_VALUES` that could be found in a text (strings up to `MAX_VALUE_CHARS`, numbers).
 */
export function argumentValues(calls: readonly Pick<CallRecord, 'arguments'>[]): unknown[] {
  const out: unknown[] = [];
  for (const call of calls) {
    if (out.length >= MAX_VALUES) break;
    flatten(call.arguments, out);
  }
  return out;
}

function flatten(value: unknown, out: unknown[]): void {
  if (out.length >= MAX_VALUES) return;
  if (Array.isArray(value)) {
    for (const v of value) flatten(v, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) flatten(v, out);
  } else if (typeof value !== 'string' || value.length <= MAX_VALUE_CHARS) {
    out.push(value);
  }
}

/** Replaces every argument value occurring in `text` with `<value>` (rules in the file comment). */
export function scrubValues(text: string, values: readonly unknown[]): string {
  const re = valuePattern(values);
  return re ? text.replace(re, VALUE_PLACEHOLDER) : text;
}

/** The first argument value found in `text`, as it appears there, or null when there is none. */
export function findArgumentValue(text: string, values: readonly unknown[]): string | null {
  const re = valuePattern(values);
  if (!re) return null;
  const m = re.exec(text);
  return m ? m[0] : null;
}

/** Removes `<value>` placeholders, so they never count as a word two texts share. */
export function withoutPlaceholders(text: string): string {
  return text.split(VALUE_PLACEHOLDER).join(' ').replace(/\s+/g, ' ').trim();
}

/**
 * One alternation over every value, longest first so "CW-123456" wins over "123456", wrapped in
 * letter/digit look-arounds for whole-token matching (global: callers reset `lastIndex`). Null when
 * there is no value to look for. The privacy rule (privacy.ts) builds it once per conversation.
 */
export function valuePattern(values: readonly unknown[]): RegExp | null {
  const texts = new Set<string>();
  for (const v of values) {
    const t = valueText(v);
    if (t !== null) texts.add(t);
  }
  if (texts.size === 0) return null;
  const sources = new Set<string>();
  for (const t of [...texts].sort((a, b) => b.length - a.length)) sources.add(valueSource(t));
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${[...sources].join('|')})(?![\\p{L}\\p{N}])`, 'giu');
}

function valueText(value: unknown): string | null {
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else return null;
  return text.length >= 2 ? text : null;
}

/** The regex source of one value: literal, or with each digit as `\d` when it has enough digits. */
function valueSource(text: string): string {
  const escaped = text.replace(REGEX_SYNTAX, '\\$&');
  const digits = text.replace(/\D/g, '').length;
  return digits >= MASKED_MIN_DIGITS ? escaped.replace(/\d/g, '\\d') : escaped;
}
