/**
 * JSON objects inside a model's reply text. Models wrap their JSON in chatter ("Sure! Here it is:
 * {…} Hope that helps"), so both augmentation and review replies look for the objects inside.
 */

/** Upper bound on how many `{` we try as the start of an object, to keep the scan linear-ish. */
const MAX_OBJECT_STARTS = 16;

/**
 * Every top-level JSON object in `text`, in order: each balanced `{…}` (string-aware) that
 * `JSON.parse` accepts as an object. Arrays and scalars are not objects and are skipped.
 */
export function jsonObjectsIn(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  let from = 0;
  for (let tries = 0; tries < MAX_OBJECT_STARTS; tries++) {
    const start = text.indexOf('{', from);
    if (start < 0) break;
    const end = balancedEnd(text, start);
    if (end < 0) {
      from = start + 1;
      continue;
    }
    const value = tryParse(text.slice(start, end + 1));
    if (isPlainObject(value)) {
      found.push(value);
      from = end + 1;
    } else {
      from = start + 1;
    }
  }
  return found;
}

/** Index of the `}` closing the `{` at `start`, skipping braces inside strings; -1 if none. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
