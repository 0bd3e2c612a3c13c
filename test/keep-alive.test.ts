/**
 * A long request answers after one turn of the event loop (src/keep-alive.ts): workerd's HTTP
 * server reckons its 5 s keep-alive from the loop's clock, which a request that never lets the loop
 * wait leaves behind, so the connection would close the moment the answer is written. Counted, not
 * timed: how many loop turns (0 ms timers) an answer waits for, with the wall clock stubbed.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import worker from '../src/index.ts';
import { answerAfterLoopTurn, LONG_REQUEST_MS } from '../src/keep-alive.ts';

/** A wall clock that moves by `step` ms each time it is read. */
function clock(step: number): () => number {
  let t = 1_000_000;
  return () => {
    t += step;
    return t;
  };
}

const request = (path = '/healthz') => new Request(`http://whetstone.test${path}`);

describe('a long request answers after one turn of the event loop', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('waits for exactly one turn, before the answer is returned, when the request took LONG_REQUEST_MS or more', async () => {
    const events: string[] = [];
    const fetch = answerAfterLoopTurn(
      async () => {
        events.push('handled');
        return new Response('ok');
      },
      {
        now: clock(LONG_REQUEST_MS),
        turn: async () => {
          events.push('turn');
        },
      },
    );
    const res = await fetch(request());
    events.push('answered');
    expect(await res.text()).toBe('ok');
    expect(events).toEqual(['handled', 'turn', 'answered']);
  });

  it('answers a short request at once: no turn', async () => {
    let turns = 0;
    const fetch = answerAfterLoopTurn(async () => new Response('ok'), {
      now: clock(LONG_REQUEST_MS / 2 - 1),
      turn: async () => {
        turns += 1;
      },
    });
    await fetch(request());
    expect(turns).toBe(0);
  });

  it('answers an error of a long request after the turn too', async () => {
    let turns = 0;
    const fetch = answerAfterLoopTurn(async () => new Response('no', { status: 500 }), {
      now: clock(LONG_REQUEST_MS),
      turn: async () => {
        turns += 1;
      },
    });
    expect((await fetch(request())).status).toBe(500);
    expect(turns).toBe(1);
  });

  it("the Worker's own fetch: one 0 ms timer before a long request's answer, none for a short one", async () => {
    const ctx = { waitUntil: () => {}, passThroughOnException: () => {} } as unknown as ExecutionContext;
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const zeroTimers = () => timers.mock.calls.filter(([, ms]) => ms === 0).length;

    const fast = vi.spyOn(Date, 'now').mockImplementation(clock(0));
    expect((await worker.fetch(request(), env, ctx)).status).toBe(200);
    expect(zeroTimers()).toBe(0);
    fast.mockRestore();

    vi.spyOn(Date, 'now').mockImplementation(clock(LONG_REQUEST_MS));
    expect((await worker.fetch(request(), env, ctx)).status).toBe(200);
    expect(zeroTimers()).toBe(1);
  });
});
