import { describe, expect, it } from 'vitest';
import { createHashEmbedder, hashEmbed } from '../../src/adapters/hash-embedder.ts';

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] ?? 0) * (b[i] ?? 0);
  return s;
}

function norm(a: Float32Array): number {
  return Math.sqrt(dot(a, a));
}

describe('createHashEmbedder', () => {
  it('defaults to 512 dimensions with a versioned id', () => {
    const embedder = createHashEmbedder();
    expect(embedder.id).toBe('hash-v1-512');
    expect(embedder.dimensions).toBe(512);
    expect(createHashEmbedder({ dimensions: 256 }).id).toBe('hash-v1-256');
  });

  it('refuses a dimension it cannot hash into', () => {
    expect(() => createHashEmbedder({ dimensions: 0 })).toThrow(RangeError);
    expect(() => createHashEmbedder({ dimensions: 12.5 })).toThrow(RangeError);
  });

  it('returns one L2-normalised vector of the right length per text, in order', async () => {
    const texts = ['What is the weather in Paris tomorrow?', 'convert 100 USD to EUR', 'x'];
    const vectors = await createHashEmbedder().embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(512);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('is deterministic: the same text always gives the same vector, across instances', async () => {
    const [a] = await createHashEmbedder().embed(['Book a table for two at an Italian restaurant']);
    const [b] = await createHashEmbedder().embed(['Book a table for two at an Italian restaurant']);
    expect(a).toEqual(b);
    expect(Array.from(hashEmbed('weather forecast', 16))).toEqual(Array.from(hashEmbed('weather forecast', 16)));
  });

  it('ignores case, punctuation and stopwords', () => {
    expect(hashEmbed('The WEATHER, in Paris!', 512)).toEqual(hashEmbed('weather paris', 512));
  });

  it('gives the zero vector for an empty or all-stopword text', () => {
    expect(norm(hashEmbed('', 512))).toBe(0);
    expect(norm(hashEmbed('could you please help me with this', 512))).toBe(0);
  });

  it('puts a paraphrase nearer than an unrelated request', () => {
    const tool = hashEmbed('Get the current weather forecast for any city', 512);
    const near = hashEmbed("what's the weather going to be like in Berlin tomorrow", 512);
    const far = hashEmbed('translate this paragraph into Japanese', 512);
    expect(dot(tool, near)).toBeGreaterThan(dot(tool, far) + 0.1);
  });

  it('matches word forms the stemmer leaves apart through character n-grams', () => {
    const base = hashEmbed('forecasting', 512);
    expect(dot(base, hashEmbed('forecaster', 512))).toBeGreaterThan(0.3);
    expect(dot(base, hashEmbed('spreadsheet', 512))).toBeLessThan(0.15);
  });
});
