// Waiting for a local Worker to answer: shared by `npm start`, the benches and the Node-side tests.
// Plain JavaScript so that `npm start` (plain Node) can import it; types in wait-for-health.d.mts.

/**
 * Polls `${url}/healthz` every 250 ms until it answers 200 (true), or the process started for it has
 * exited (`dead()`) or `timeoutMs` has passed (false).
 */
export async function waitForHealth(url, timeoutMs, dead) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !dead()) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}
