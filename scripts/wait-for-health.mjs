// Waiting for a local Worker to answer: shared by `npm start`, the benches and the Node-side tests.
// Plain JavaScript so that `npm start` (plain Node) can import it; types in wait-for-health.d.mts.

/**
 * Polls `${url}/healthz` every 250 ms until it answers 200 (true), or the process started for it has
 * exited (`dead()`) or `timeoutMs` has passed (false). With `token` (the admin token the Worker was
 * started with) the Worker must also take it (`GET /v1/agents?limit=1` answers 200): a port picked
 * free can be taken by another run's Worker before ours binds it, and that one answers /healthz too.
 */
export async function waitForHealth(url, timeoutMs, dead, token) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !dead()) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) {
        if (token === undefined) return true;
        const ours = await fetch(`${url}/v1/agents?limit=1`, { headers: { authorization: `Bearer ${token}` } });
        if (ours.ok) return true;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}
