/**
 * Polls `${url}/healthz` every 250 ms until it answers 200 (true), or the process started for it has
 * exited (`dead()`) or `timeoutMs` has passed (false).
 */
export function waitForHealth(url: string, timeoutMs: number, dead: () => boolean): Promise<boolean>;
