/**
 * A long request's answer goes out after one turn of the event loop (docs/decisions.md "A long
 * request answers after one turn of the event loop").
 *
 * workerd's HTTP server closes an idle keep-alive connection 5 s after an answer, but it reckons
 * those 5 s from its event loop's clock, and that clock moves only when the loop waits for I/O. A
 * request that keeps the loop busy for 5 s or more — under `wrangler dev` a review that
 * auto-applies dozens of revisions is such a request, since the local D1 and the Durable Object
 * run in the same process and nothing waits — makes the server close the connection the moment its
 * answer is written. `wrangler dev`'s proxy has pooled that connection by then and may write the
 * next request into it: that request is lost, and the proxy answers 503 "Your worker restarted
 * mid-request" although nothing restarted. A 0 ms timer fires only after the loop has polled, which
 * moves the clock, so the keep-alive starts when the answer is sent.
 *
 * Requests shorter than LONG_REQUEST_MS answer at once: they cannot have held the loop long enough
 * to matter, and the hot path (`/route`) pays nothing.
 */

/** A request that took at least this long lets the event loop turn once before answering. */
export const LONG_REQUEST_MS = 1_000;

export interface LoopTurnOptions {
  /** Wall-clock milliseconds (Date.now: in workerd it moves during a request, unlike the loop's clock). */
  now?: () => number;
  /** Resolves after one turn of the event loop (a 0 ms timer). */
  turn?: () => Promise<void>;
}

/** One turn of the event loop: a timer resolves only after the loop has polled for I/O. */
export function loopTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Wraps a fetch handler: its answer waits one loop turn when the request took LONG_REQUEST_MS or more. */
export function answerAfterLoopTurn<A extends unknown[]>(
  handler: (request: Request, ...rest: A) => Response | Promise<Response>,
  { now = () => Date.now(), turn = loopTurn }: LoopTurnOptions = {},
): (request: Request, ...rest: A) => Promise<Response> {
  return async (request, ...rest) => {
    const started = now();
    const response = await handler(request, ...rest);
    if (now() - started >= LONG_REQUEST_MS) await turn();
    return response;
  };
}
