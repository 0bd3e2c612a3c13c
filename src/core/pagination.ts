/**
 * Pages of a list route (docs/api.md "Pagination"): `limit` and an opaque `cursor` in, `next_cursor`
 * out (null on the last page). A cursor is the position after the page's last item, base64url JSON,
 * so a client can only pass it back, never build one; a cursor that does not decode is a 400.
 */

/** The position a cursor holds: sort-key values of the last item served. */
export type CursorKey = (string | number)[];

/** Encodes a position as an opaque cursor. */
export function encodeCursor(key: CursorKey): string {
  const bytes = new TextEncoder().encode(JSON.stringify(key));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The position a cursor holds, or null when it is not one this service wrote. */
export function decodeCursor(cursor: string): CursorKey | null {
  try {
    const binary = atob(cursor.replaceAll('-', '+').replaceAll('_', '/'));
    const key: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))));
    if (!Array.isArray(key) || key.length === 0) return null;
    return key.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))
      ? (key as CursorKey)
      : null;
  } catch {
    return null;
  }
}

/** One page of a list already in its final order, positioned by the count of items before it. */
export function pageByOffset<T>(
  items: readonly T[],
  limit: number,
  after: CursorKey | null,
): { items: T[]; next_cursor: string | null } {
  const start = typeof after?.[0] === 'number' ? Math.max(0, Math.floor(after[0])) : 0;
  const page = items.slice(start, start + limit);
  const end = start + page.length;
  return { items: page, next_cursor: end < items.length ? encodeCursor([end]) : null };
}
