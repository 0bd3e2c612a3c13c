/**
 * How the tools of an agent's MCP upstreams are named among its tools, and when a failing upstream
 * is tried again. Pure: the gateway's sync and cron code decide with these and store the outcome.
 */

/** One upstream's tool names as it lists them. */
export interface UpstreamTools {
  upstream: string;
  tools: readonly string[];
}

/**
 * The agent-level name of every upstream tool, keyed `upstream` then the upstream's own name. A name
 * listed by exactly one upstream and not one of the agent's own tools keeps its name; a name two
 * upstreams list, or one of the agent's own tools has, becomes `<upstream>.<name>` for every
 * upstream that lists it (the agent's own tool keeps its name). Deterministic whatever the order.
 */
export function upstreamToolNames(
  upstreams: readonly UpstreamTools[],
  ownTools: ReadonlySet<string>,
): Map<string, Map<string, string>> {
  const listedBy = new Map<string, number>();
  for (const u of upstreams) for (const name of new Set(u.tools)) listedBy.set(name, (listedBy.get(name) ?? 0) + 1);
  const out = new Map<string, Map<string, string>>();
  for (const u of upstreams) {
    const names = new Map<string, string>();
    for (const name of u.tools) {
      const collides = (listedBy.get(name) ?? 0) > 1 || ownTools.has(name);
      names.set(name, collides ? `${u.upstream}.${name}` : name);
    }
    out.set(u.upstream, names);
  }
  return out;
}

/** The first retry of a failed sync waits this long; each further failure doubles it, up to the cap. */
export const SYNC_BACKOFF_BASE_MS = 60_000;
export const SYNC_BACKOFF_CAP_MS = 6 * 60 * 60_000;

/** Milliseconds to wait before syncing again after `failures` failures in a row (0 = now). */
export function syncBackoffMs(failures: number): number {
  if (!Number.isFinite(failures) || failures <= 0) return 0;
  const exponent = Math.min(Math.floor(failures) - 1, 30);
  return Math.min(SYNC_BACKOFF_BASE_MS * 2 ** exponent, SYNC_BACKOFF_CAP_MS);
}

/** Whether an upstream whose last sync attempt was at `lastAttemptMs` and failed `failures` times is due. */
export function syncDue(nowMs: number, lastAttemptMs: number | undefined, failures: number): boolean {
  if (lastAttemptMs === undefined) return true;
  return nowMs - lastAttemptMs >= syncBackoffMs(failures);
}
