/**
 * Polls `${url}/healthz` every 250 ms until it answers 200 (true), or the process started for it has
 * exited (`dead()`) or `timeoutMs` has passed (false). With `token` (the admin token the Worker was
 * started with) the Worker must also take it (`GET /v1/agents?limit=1` answers 200): a port picked
 * free can be taken by another run's Worker before ours binds it, and that one answers /healthz too.
 */
export function waitForHealth(url: string, timeoutMs: number, dead: () => boolean, token?: string): Promise<boolean>;
