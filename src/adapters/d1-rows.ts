/** Reading D1 rows the same way in every store. */

/** The row `sql` selects with `binds`, mapped by `map`; null when it selects none. */
export async function firstRow<Row, T>(
  db: D1Database,
  sql: string,
  binds: unknown[],
  map: (row: Row) => T,
): Promise<T | null> {
  const row = await db
    .prepare(sql)
    .bind(...binds)
    .first<Row>();
  return row ? map(row) : null;
}
