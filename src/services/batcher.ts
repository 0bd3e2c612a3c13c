/**
 * Group commit for one isolate: concurrent callers queue items, and whoever finds no
 * batch in flight runs the queue as one batch, in its own request context, while the others wait.
 * Under load N requests cost one D1 round trip instead of N. Without `lingerMs` a lone request
 * runs its batch at once; with it (writes after the answer) the leader first waits that long for
 * company.
 *
 * Two properties the callers rely on:
 * - an item is only ever served by a batch that STARTED after the item was queued, so a read
 *   batched this way sees every write that finished before its request arrived (the `/route`
 *   rule that a tools write is visible to the next route);
 * - a batch is run by a request that is itself waiting for that batch, so its I/O belongs to a live
 *   request context (a Worker cancels the I/O of a request that has finished).
 */

interface Entry<I, O> {
  item: I;
  done: boolean;
  result?: O;
  error?: unknown;
}

/** Runs `items` together; returns one result per item, in order. */
export type BatchRunner<I, O> = (items: I[]) => Promise<O[]>;

export interface BatcherOptions {
  /** Most items in one batch (D1 caps statements per batch and bytes per request). */
  maxBatch?: number;
  /**
   * How long a waiter trusts another request's batch before running its item itself. Only for
   * idempotent work (reads): a batch led by a request the runtime cancelled never settles.
   */
  patienceMs?: number;
  /** How long a leader waits for more items before it takes the queue (work off the hot path). */
  lingerMs?: number;
}

const ABANDONED = Symbol('abandoned');

/** A per-isolate group committer over `run`. */
export class Batcher<I, O> {
  readonly #run: BatchRunner<I, O>;
  readonly #maxBatch: number;
  readonly #patienceMs: number | undefined;
  readonly #lingerMs: number;
  #queue: Entry<I, O>[] = [];
  #inFlight: Promise<void> | null = null;

  constructor(run: BatchRunner<I, O>, opts: BatcherOptions = {}) {
    this.#run = run;
    this.#maxBatch = opts.maxBatch ?? 200;
    this.#patienceMs = opts.patienceMs;
    this.#lingerMs = opts.lingerMs ?? 0;
  }

  /** Queues `item` and resolves with its result once a batch holding it has run. */
  async submit(item: I): Promise<O> {
    let entry: Entry<I, O> = { item, done: false };
    this.#queue.push(entry);
    while (!entry.done) {
      const running = this.#inFlight;
      if (running === null) {
        const started = this.#lead().finally(() => {
          if (this.#inFlight === started) this.#inFlight = null;
        });
        this.#inFlight = started;
        await started;
      } else if ((await this.#wait(running)) === ABANDONED && !entry.done) {
        // The leader's batch hung: stop waiting on it, queue this item again, lead if nobody does.
        if (this.#inFlight === running) this.#inFlight = null;
        if (!this.#queue.includes(entry)) {
          entry = { item, done: false };
          this.#queue.push(entry);
        }
      }
    }
    if ('error' in entry) throw entry.error;
    return entry.result as O;
  }

  #wait(running: Promise<void>): Promise<void | typeof ABANDONED> {
    const patience = this.#patienceMs;
    if (patience === undefined) return running;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<typeof ABANDONED>(
      (resolve) => (timer = setTimeout(() => resolve(ABANDONED), patience)),
    );
    return Promise.race([running, timeout]).finally(() => clearTimeout(timer));
  }

  /** Takes the queue (after the linger) and runs it; the items queued meanwhile join this batch. */
  async #lead(): Promise<void> {
    if (this.#lingerMs > 0) await new Promise((resolve) => setTimeout(resolve, this.#lingerMs));
    await this.#runBatch(this.#queue.splice(0, this.#maxBatch));
  }

  /** Settles every entry of the batch; never rejects, so waiters only ever see their own outcome. */
  async #runBatch(batch: Entry<I, O>[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      const results = await this.#run(batch.map((e) => e.item));
      batch.forEach((e, i) => {
        e.result = results[i];
        e.done = true;
      });
    } catch (error) {
      for (const e of batch) {
        e.error = error;
        e.done = true;
      }
    }
  }
}
