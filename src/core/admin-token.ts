/**
 * How strong an ADMIN_TOKEN must be (docs/configuration.md): the token has every right and is
 * compared, not looked up, so a guessable one is a way in that no rate limit closes. A deployment
 * whose token fails this check refuses to serve until it is replaced. Pure: the rule only.
 */

/** Characters the token must have: 32 random base64 characters are 192 bits. */
export const ADMIN_TOKEN_MIN_CHARS = 32;
/** Different characters it must use: rules out `aaaa…`, `abab…` and other patterns. */
export const ADMIN_TOKEN_MIN_DISTINCT = 10;

/** Why `token` is too weak to be the ADMIN_TOKEN, or null when it is strong enough. */
export function adminTokenWeakness(token: string): string | null {
  const length = [...token].length;
  if (length < ADMIN_TOKEN_MIN_CHARS)
    return `it is ${length} characters long; at least ${ADMIN_TOKEN_MIN_CHARS} are needed`;
  const distinct = new Set(token).size;
  if (distinct < ADMIN_TOKEN_MIN_DISTINCT)
    return `it uses ${distinct} different characters; at least ${ADMIN_TOKEN_MIN_DISTINCT} are needed`;
  return null;
}
