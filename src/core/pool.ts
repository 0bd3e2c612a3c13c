/**
 * Bounded concurrency for fan-out work such as augmenting tools ("Tools are augmented
 * concurrently with a bounded pool"). A Worker may hold at most six outgoing connections open at
 * once per invocation, so callers keep `concurrency` at or under that.
 */

/**
 * Maps `items` through `fn` with at most `concurrency` calls in flight; results keep the input
 * order. If a call rejects, no new item is started, the calls in flight are awaited, and the first
 * rejection is thrown (nothing is left running unobserved).
 */
export async function mapPool<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const width = Math.max(1, Math.min(items.length, Math.floor(concurrency) || 1));
  let next = 0;
  const failures: unknown[] = [];

  async function worker(): Promise<void> {
    while (failures.length === 0 && next < items.length) {
      const index = next++;
      const item = items[index] as T;
      try {
        results[index] = await fn(item, index);
      } catch (error) {
        failures.push(error);
      }
    }
  }

  await Promise.all(Array.from({ length: width }, () => worker()));
  if (failures.length > 0) throw failures[0];
  return results;
}

/**
 * Runs `fn` over consecutive slices of at most `size` items, one slice after another, and joins
 * the results in order (providers cap how many texts one embedding request may carry).
 */
export async function inBatches<T, R>(
  items: readonly T[],
  size: number,
  fn: (batch: T[]) => Promise<R[]>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await fn(items.slice(i, i + size))));
  return out;
}
