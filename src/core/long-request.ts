/**
 * Long requests (docs/api.md "Long requests"): a user message can be a pasted document or a stack
 * trace. It is accepted up to the body limit; routing reads a bounded window of it (its head and
 * its tail), and the log stores it capped with a visible marker. A capped text is never an example.
 */

/** Characters of a request routing reads: the head and the tail of a longer one. */
export const ROUTED_HEAD_CHARS = 1500;
export const ROUTED_TAIL_CHARS = 500;
/** Characters of a request the log keeps: the head and the tail around the marker. */
export const STORED_CHARS = 4000;
const STORED_TAIL_CHARS = 500;

const MARKER = /\[… \d+ characters cut …\]/;

/** The text routing embeds and ranks: the whole request, or its head and tail. */
export function routingWindow(text: string): string {
  if (text.length <= ROUTED_HEAD_CHARS + ROUTED_TAIL_CHARS) return text;
  return `${text.slice(0, ROUTED_HEAD_CHARS)}\n${text.slice(-ROUTED_TAIL_CHARS)}`;
}

/** The text the log stores: the request, or its head and tail with `[… N characters cut …]` between. */
export function storedRequest(text: string): string {
  if (text.length <= STORED_CHARS) return text;
  const probe = `\n[… ${text.length} characters cut …]\n`;
  const head = STORED_CHARS - STORED_TAIL_CHARS - probe.length;
  const cut = text.length - head - STORED_TAIL_CHARS;
  return `${text.slice(0, head)}\n[… ${cut} characters cut …]\n${text.slice(-STORED_TAIL_CHARS)}`;
}

/** True for a request the log stored capped. */
export function isCapped(text: string): boolean {
  return MARKER.test(text);
}
