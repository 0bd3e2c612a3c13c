import { describe, expect, it } from 'vitest';
import { createExactIndex } from '../../src/adapters/exact-index.ts';

/** A unit vector along axis `i` (plus a little of axis `j` to make scores differ). */
function unit(i: number, j = i, w = 0): Float32Array {
  const v = new Float32Array(4);
  v[i] = 1;
  v[j] = (v[j] ?? 0) + w;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

describe('createExactIndex', () => {
  it('is consistent: a query sees an upsert at once, best first by cosine', async () => {
    const index = createExactIndex();
    expect(index.consistent).toBe(true);
    await index.upsert('exact-a', [
      { id: 'weather', vector: unit(0) },
      { id: 'flights', vector: unit(1) },
      { id: 'forecast', vector: unit(0, 1, 0.5) },
    ]);
    const matches = await index.query('exact-a', unit(0), 2);
    expect(matches.map((m) => m.id)).toEqual(['weather', 'forecast']);
    expect(matches[0]?.score).toBeCloseTo(1, 6);
    expect(matches[1]?.score).toBeCloseTo(1 / Math.hypot(1, 0.5), 6);
  });

  it('no longer returns a removed vector, and keeps the others', async () => {
    const index = createExactIndex();
    await index.upsert('exact-b', [
      { id: 'a', vector: unit(0) },
      { id: 'b', vector: unit(1) },
      { id: 'c', vector: unit(2) },
    ]);
    await index.remove('exact-b', ['a', 'never-there']);
    const ids = (await index.query('exact-b', unit(0), 10)).map((m) => m.id);
    expect(ids).not.toContain('a');
    expect(ids.sort()).toEqual(['b', 'c']);
    expect((await index.query('exact-b', unit(2), 1))[0]?.id).toBe('c');
  });

  it('replaces a vector upserted again under the same id', async () => {
    const index = createExactIndex();
    await index.upsert('exact-c', [{ id: 't', vector: unit(0) }]);
    await index.upsert('exact-c', [{ id: 't', vector: unit(3) }]);
    const matches = await index.query('exact-c', unit(3), 5);
    expect(matches).toEqual([{ id: 't', score: expect.closeTo(1, 6) }]);
  });

  it('keeps agents apart and answers nothing for an unknown agent', async () => {
    const index = createExactIndex();
    await index.upsert('exact-d1', [{ id: 'x', vector: unit(0) }]);
    expect(await index.query('exact-d2', unit(0), 5)).toEqual([]);
    expect((await index.query('exact-d1', unit(0), 5)).map((m) => m.id)).toEqual(['x']);
  });

  it('shares one store per isolate, so a second adapter sees the first one’s vectors', async () => {
    await createExactIndex().upsert('exact-e', [{ id: 'y', vector: unit(1) }]);
    expect((await createExactIndex().query('exact-e', unit(1), 1))[0]?.id).toBe('y');
  });

  it('grows past its first capacity and breaks score ties by id', async () => {
    const index = createExactIndex();
    const items = Array.from({ length: 40 }, (_, i) => ({ id: `t${String(i).padStart(2, '0')}`, vector: unit(i % 4) }));
    await index.upsert('exact-f', items);
    const matches = await index.query('exact-f', unit(0), 3);
    expect(matches.map((m) => m.id)).toEqual(['t00', 't04', 't08']);
  });

  it('rejects a query of another dimension', async () => {
    const index = createExactIndex();
    await index.upsert('exact-g', [{ id: 'x', vector: unit(0) }]);
    await expect(index.query('exact-g', new Float32Array(3), 1)).rejects.toThrow(RangeError);
  });
});
