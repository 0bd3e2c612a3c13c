import { describe, expect, it } from 'vitest';
import { createHashEmbedder, hashEmbed } from '../../src/adapters/hash-embedder.ts';
import type { Embedder } from '../../src/core/ports.ts';
import {
  EXAMPLE_WEIGHT,
  buildRoutingIndex,
  embeddingParts,
  embeddingText,
  rankTools,
  toolVector,
} from '../../src/core/routing.ts';
import { embedTools } from '../../src/services/tool-vectors.ts';

const WEATHER = {
  name: 'get_weather',
  description: null,
  docstring: 'Current weather and the forecast for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  examples: [{ text: 'is it raining in Oslo' }, { text: '  ' }, { text: 'forecast for Lima' }],
};

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);

describe('embeddingParts', () => {
  it('splits the embedding text into the head the author wrote and the examples, one a line', () => {
    expect(embeddingParts(WEATHER)).toEqual({
      head: 'get weather\nCurrent weather and the forecast for a city.\ncity',
      examples: 'is it raining in Oslo\nforecast for Lima',
    });
    expect(embeddingText(WEATHER)).toBe(`${embeddingParts(WEATHER).head}\n${embeddingParts(WEATHER).examples ?? ''}`);
  });

  it('has no examples part for a row without examples, so its text is its head', () => {
    const bare = { ...WEATHER, examples: [] };
    expect(embeddingParts(bare)).toEqual({ head: embeddingText(bare), examples: null });
  });
});

describe('toolVector', () => {
  it('is the head vector itself for a row without examples', () => {
    const head = hashEmbed('weather for a city', 512);
    expect(toolVector(head, null)).toBe(head);
  });

  it('is the unit vector along head + EXAMPLE_WEIGHT · examples, each made unit first', () => {
    const head = new Float32Array([2, 0, 0]);
    const examples = new Float32Array([0, 0.5, 0]);
    const v = toolVector(head, examples);
    const norm = Math.hypot(1, EXAMPLE_WEIGHT);
    expect(Array.from(v)).toEqual([expect.closeTo(1 / norm, 6), expect.closeTo(EXAMPLE_WEIGHT / norm, 6), 0]);
  });

  it('keeps a row near what its description says while its examples still pull their own wordings closer', () => {
    const head = hashEmbed(embeddingParts(WEATHER).head, 512);
    const examples = hashEmbed(embeddingParts(WEATHER).examples ?? '', 512);
    const v = toolVector(head, examples);
    const whole = hashEmbed(embeddingText(WEATHER), 512);
    expect(dot(v, head)).toBeGreaterThan(dot(whole, head));
    const asked = hashEmbed('is it raining in Oslo', 512);
    expect(dot(v, asked)).toBeGreaterThan(dot(head, asked));
  });
});

describe('embedTools', () => {
  it('embeds every head and examples part in one embedder call and combines them per row', async () => {
    const hash = createHashEmbedder();
    const calls: number[] = [];
    const counting: Embedder = { ...hash, embed: (texts) => (calls.push(texts.length), hash.embed(texts)) };
    const bare = { ...WEATHER, name: 'news', docstring: 'Latest headlines.', examples: [] };
    const [weather, news] = await embedTools(counting, [WEATHER, bare]);
    expect(calls).toEqual([3]);
    const [head, examples, newsHead] = await hash.embed([
      embeddingParts(WEATHER).head,
      embeddingParts(WEATHER).examples ?? '',
      embeddingText(bare),
    ]);
    expect(Array.from(weather ?? [])).toEqual(Array.from(toolVector(head ?? new Float32Array(), examples ?? null)));
    expect(Array.from(news ?? [])).toEqual(Array.from(newsHead ?? []));
  });

  it('answers 502 upstream_error when the embedder returns the wrong number of vectors', async () => {
    const short: Embedder = { id: 'short', dimensions: 4, embed: () => Promise.resolve([]) };
    await expect(embedTools(short, [WEATHER])).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'embedder returned 0 vectors for 2 texts',
    });
  });

  it('lets a learned wording reach its tool without pulling the tool onto its neighbours’ requests', async () => {
    const hash = createHashEmbedder();
    const tools = [
      { ...WEATHER, examples: [{ text: 'do I need an umbrella tomorrow' }] },
      {
        name: 'send_email',
        description: null,
        docstring: 'Send an email to a recipient.',
        parameters: {},
        examples: [],
      },
    ];
    const vectors = await embedTools(hash, tools);
    const index = buildRoutingIndex(
      tools.map((t, i) => ({ name: t.name, text: embeddingText(t), vector: vectors[i] ?? new Float32Array(512) })),
    );
    const route = async (text: string) =>
      rankTools(index, { text, vector: (await hash.embed([text]))[0] ?? new Float32Array(512) }, 1)[0]?.name;
    expect(await route('umbrella tomorrow?')).toBe('get_weather');
    expect(await route('email my umbrella receipt to Ana')).toBe('send_email');
  });
});
