/** Waiting for what happens after an answer. No Workers module: the Node tests use it too. */

/** Polls until `check` returns a value other than undefined (for writes sent after the answer). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
