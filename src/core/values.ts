/**
 * Tokens that are values by their look (docs/security.md "Personal values"): whatever a person
 * types that names one thing rather than a kind of thing. Pure; used by the privacy rule and by the
 * re-ask test, where values never count as shared words.
 */

/** An e-mail address, a URL, or a token holding a digit (ids, amounts, dates, phone and card numbers). */
export function looksLikeValue(token: string): boolean {
  const t = token.trim();
  if (t === '') return false;
  if (/\d/.test(t)) return true;
  if (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(t)) return true;
  return /^(https?:\/\/|www\.)/i.test(t);
}
