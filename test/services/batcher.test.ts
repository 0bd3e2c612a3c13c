import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/services/batcher.ts';

/** A runner that records each batch and answers when released. */
function gatedRunner() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const run = async (items: number[]): Promise<string[]> => {
    batches.push(items);
    await new Promise<void>((release) => gates.push(release));
    return items.map((i) => `r${i}`);
  };
  const releaseAll = async (): Promise<void> => {
    for (let spins = 0; spins < 50; spins++) {
      for (const release of gates.splice(0)) release();
      await new Promise((r) => setTimeout(r, 0));
    }
  };
  return { batches, run, releaseAll };
}

describe('Batcher (group commit)', () => {
  it('runs a lone item at once and answers it', async () => {
    const b = new Batcher(async (items: number[]) => items.map((i) => i * 2));
    expect(await b.submit(21)).toBe(42);
  });

  it('serves items queued during a batch with ONE later batch that starts after them', async () => {
    const { batches, run, releaseAll } = gatedRunner();
    const b = new Batcher(run);
    const first = b.submit(1);
    await new Promise((r) => setTimeout(r, 0));
    const rest = [2, 3, 4, 5].map((i) => b.submit(i));
    await new Promise((r) => setTimeout(r, 0));
    expect(batches).toEqual([[1]]);
    await releaseAll();
    expect(await Promise.all([first, ...rest])).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
  });

  it('caps a batch at maxBatch items', async () => {
    const seen: number[][] = [];
    const b = new Batcher(async (items: number[]) => (seen.push(items), items), { maxBatch: 2 });
    const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => b.submit(i)));
    expect(answers).toEqual([1, 2, 3, 4, 5]);
    expect(Math.max(...seen.map((s) => s.length))).toBe(2);
    expect(seen.flat().sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('rejects every item of a failed batch with its error, and recovers for the next', async () => {
    let fail = true;
    const b = new Batcher(async (items: number[]) => {
      if (fail) throw new Error('D1 is down');
      return items;
    });
    await expect(b.submit(1)).rejects.toThrow('D1 is down');
    fail = false;
    expect(await b.submit(2)).toBe(2);
  });

  it('with patience, stops waiting on a batch that never settles and runs the item itself', async () => {
    let calls = 0;
    const b = new Batcher(
      (items: number[]) => {
        calls += 1;
        return calls === 1 ? new Promise<number[]>(() => {}) : Promise.resolve(items);
      },
      { patienceMs: 20 },
    );
    void b.submit(1); // its leader hangs for ever, as one whose request the runtime cancelled
    await new Promise((r) => setTimeout(r, 0));
    expect(await b.submit(2)).toBe(2);
    expect(calls).toBe(2);
  });
});
