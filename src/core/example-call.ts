/**
 * The example call of docs/learning.md, built by code from the calls that worked, with no model:
 * `Example call: {"claim_ref": "CW-######", "file_mb": "<number>"}`. No argument value is kept.
 *
 * The rule for showing a string's format, which the contract leaves as "little of it is fixed (a short
 * prefix or separators)": every successful call that passed the argument has the same
 * digit-masked form, and that form
 * - has at least 2 masked digits, making up at least half its characters;
 * - has at most 4 letters, all before the first masked digit (a short prefix such as "CW-");
 * - has no other characters than separators (space - _ . / : + ( ));
 * - is at most 40 characters long.
 * Anything else is `"<text>"`: a name, an email, free text, or ids of varying shape.
 */
import type { CallRecord } from './records.ts';

export const EXAMPLE_CALL_PREFIX = 'Example call: ';

const MAX_FORMAT_CHARS = 40;
const MAX_PREFIX_LETTERS = 4;
const SEPARATORS = new Set([' ', '-', '_', '.', '/', ':', '+', '(', ')']);

/** The longest example call line: one short line beside the notes (docs/learning.md). */
export const MAX_EXAMPLE_CALL_CHARS = 220;

/**
 * One line `Example call: {"arg": <shape>, …}` from the successful calls: only the argument names
 * the tool's schema declares (top-level `properties`), in the order they first appear; an argument
 * whose every value is null is left out; keys from the end are dropped until the line fits
 * `MAX_EXAMPLE_CALL_CHARS`. Null when no declared argument is left.
 */
export function buildExampleCall(
  successfulCalls: readonly CallRecord[],
  parameters: Record<string, unknown>,
): string | null {
  const declared = declaredArguments(parameters);
  const valuesByKey = new Map<string, unknown[]>();
  for (const call of successfulCalls) {
    if (!call.success) continue;
    for (const [key, value] of Object.entries(call.arguments)) {
      if (!declared.has(key)) continue;
      const list = valuesByKey.get(key) ?? [];
      list.push(value);
      valuesByKey.set(key, list);
    }
  }
  const entries: string[] = [];
  for (const [key, values] of valuesByKey) {
    const shape = shapeOf(values);
    if (shape !== null) entries.push(`${JSON.stringify(key)}: ${JSON.stringify(shape)}`);
  }
  while (entries.length > 0) {
    const line = `${EXAMPLE_CALL_PREFIX}{${entries.join(', ')}}`;
    if (line.length <= MAX_EXAMPLE_CALL_CHARS) return line;
    entries.pop();
  }
  return null;
}

/** The argument names a JSON Schema object declares at its top level. */
function declaredArguments(parameters: Record<string, unknown>): Set<string> {
  const props = parameters.properties;
  return new Set(typeof props === 'object' && props !== null && !Array.isArray(props) ? Object.keys(props) : []);
}

/** Digits masked as `#` (docs/learning.md). */
export function maskDigits(text: string): string {
  return text.replace(/\d/g, '#');
}

/** The shape one argument shows across the calls that passed it. Null values say nothing and are skipped. */
function shapeOf(values: readonly unknown[]): string | null {
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length === 0) return null;
  const kinds = new Set(present.map(kindOf));
  if (kinds.size > 1) return '<value>';
  const [kind] = kinds;
  if (kind === 'string') return stringShape(present.filter((v): v is string => typeof v === 'string'));
  return `<${kind ?? 'value'}>`;
}

function kindOf(value: unknown): 'string' | 'number' | 'boolean' | 'list' | 'object' | 'value' {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'object';
  return 'value';
}

/** The common masked form when it is a format by the rule above, else `<text>`. */
function stringShape(values: readonly string[]): string {
  const forms = new Set(values.map(maskDigits));
  const [form] = forms;
  return forms.size === 1 && form !== undefined && isFormat(form) ? form : '<text>';
}

/** True when little of a masked form is fixed (file comment); exported for its tests. */
export function isFormat(masked: string): boolean {
  if (masked.length > MAX_FORMAT_CHARS) return false;
  const chars = [...masked];
  const hashes = chars.filter((c) => c === '#').length;
  if (hashes < 2 || hashes * 2 < chars.length) return false;
  const firstHash = chars.indexOf('#');
  let letters = 0;
  for (const [i, c] of chars.entries()) {
    if (c === '#') continue;
    if (/\p{L}/u.test(c)) {
      letters++;
      if (i > firstHash) return false;
    } else if (!SEPARATORS.has(c)) {
      return false;
    }
  }
  return letters <= MAX_PREFIX_LETTERS;
}
