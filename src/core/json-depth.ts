/**
 * How deeply a JSON text nests. Every later reader of stored JSON (canonical hashing,
 * argument scrubbing, draft inference, example calls) walks it recursively, so a body nested
 * thousands of levels deep would overflow the stack there — a 500, or a review that fails every
 * time. The edge refuses such bodies; this counts without recursion and without parsing.
 */

/** The deepest nesting of arrays and objects in `text` (0 for a scalar); brackets in strings do not count. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}
