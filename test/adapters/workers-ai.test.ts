/**
 * The Workers AI adapters against a fake `AI` binding that reproduces the binding's shapes
 * (`{messages}` → `{response}`, `{text: [...]}` → `{shape, data}`), its errors
 * (`InferenceUpstreamError` with `"<code>: <description>"`) and its limits (256 output tokens when
 * `max_tokens` is not given, at most 100 texts per embedding call, no abort signal).
 */
import { describe, expect, it } from 'vitest';
import {
  createWorkersAIEmbedder,
  createWorkersAIModel,
  isRetryableWorkersAIError,
  type AiRunner,
} from '../../src/adapters/workers-ai.ts';
import { augmentTools } from '../../src/augmentation.ts';
import { AUGMENT_TOOL as TOOL, GOOD_AUGMENT as GOOD, SIX_REQUESTS as REQUESTS } from '../helpers/augment.ts';

/** The binding's error class (in workerd's source: cloudflare/internal/ai-api.ts). */
class InferenceUpstreamError extends Error {
  constructor(message: string, name = 'InferenceUpstreamError') {
    super(message);
    this.name = name;
  }
}

type Step = { output: unknown } | { error: Error } | { hang: true };

/** A fake `AI` binding: answers from a script (the last step repeats) and records every run. */
function fakeAi(steps: Step[], dims = 768): AiRunner & { runs: { model: string; inputs: Record<string, unknown> }[] } {
  const queue = [...steps];
  let last: Step | undefined;
  const runs: { model: string; inputs: Record<string, unknown> }[] = [];
  return {
    runs,
    async run(model, inputs) {
      runs.push({ model, inputs });
      if (Array.isArray(inputs.text) || typeof inputs.text === 'string') return embed(inputs.text, dims);
      const step = queue.shift() ?? last;
      last = step;
      if (step === undefined) throw new InferenceUpstreamError('5007: No such model or task');
      if ('hang' in step) return new Promise<never>(() => {}); // the binding takes no signal
      if ('error' in step) throw step.error;
      return limitTokens(step.output, inputs.max_tokens);
    },
  };
}

/** Workers AI text models stop at 256 tokens unless `max_tokens` says otherwise (≈4 chars a token). */
function limitTokens(output: unknown, maxTokens: unknown): unknown {
  const budget = (typeof maxTokens === 'number' ? maxTokens : 256) * 4;
  if (typeof output === 'object' && output !== null && 'response' in output && typeof output.response === 'string') {
    return { ...output, response: output.response.slice(0, budget) };
  }
  return output;
}

function embed(text: string | string[], dims: number): { shape: number[]; data: number[][] } {
  const texts = Array.isArray(text) ? text : [text];
  if (texts.length > 100) throw new InferenceUpstreamError('3006: Request is too large');
  const data = texts.map((t) => Array.from({ length: dims }, (_, i) => ((t.charCodeAt(i % t.length) || 1) % 7) + 1));
  return { shape: [texts.length, dims], data };
}

const MODEL = '@cf/meta/llama-3.1-8b-instruct';
const OK = { ok: true, description: GOOD.description, requests: REQUESTS };

describe('workers-ai:<model> chat', () => {
  it('a good reply, with a completion budget large enough for it', async () => {
    // Padded past 256 tokens: without max_tokens the binding would cut the JSON off.
    const long = { ...GOOD, description: `${GOOD.description}${' It covers car, home and travel claims.'.repeat(23)}` };
    const reply = `Here you go: ${JSON.stringify(long)}`;
    expect(reply.length).toBeGreaterThan(256 * 4);
    const ai = fakeAi([{ output: { response: reply } }]);
    const out = await augmentTools(createWorkersAIModel(ai, MODEL), [TOOL]);
    expect(out.get('lookup_claim')).toEqual({ ...OK, description: long.description });
    expect(ai.runs).toHaveLength(1);
    expect(ai.runs[0]?.model).toBe(MODEL);
    expect(ai.runs[0]?.inputs).toMatchObject({ max_tokens: 1024 });
    expect(ai.runs[0]?.inputs.messages).toHaveLength(2);
  });

  it('reads OpenAI-shaped and already-parsed JSON replies', async () => {
    const shaped = fakeAi([
      { output: { choices: [{ message: { role: 'assistant', content: JSON.stringify(GOOD) } }] } },
    ]);
    expect((await augmentTools(createWorkersAIModel(shaped, MODEL), [TOOL])).get('lookup_claim')).toEqual(OK);
    const parsed = fakeAi([{ output: { response: GOOD } }]);
    expect((await augmentTools(createWorkersAIModel(parsed, MODEL), [TOOL])).get('lookup_claim')).toEqual(OK);
  });

  it('a reply with no text is no reply', async () => {
    const ai = fakeAi([{ output: { tool_calls: [] } }]);
    const out = await augmentTools(createWorkersAIModel(ai, MODEL), [TOOL]);
    expect(out.get('lookup_claim')).toEqual({ ok: false, reason: `model gave no reply (workers-ai:${MODEL})` });
  });

  it('out of capacity (3040) then success: one logical call, two runs', async () => {
    const ai = fakeAi([
      { error: new InferenceUpstreamError('3040: Capacity temporarily exceeded, please try again.') },
      { output: { response: JSON.stringify(GOOD) } },
    ]);
    const out = await augmentTools(createWorkersAIModel(ai, MODEL, { baseDelayMs: 1 }), [TOOL]);
    expect(out.get('lookup_claim')).toEqual(OK);
    expect(ai.runs).toHaveLength(2);
  });

  it('a run that never answers times out on every attempt: upstream_error', async () => {
    const ai = fakeAi([{ hang: true }]);
    const out = await augmentTools(createWorkersAIModel(ai, MODEL, { timeoutMs: 50, retries: 1, baseDelayMs: 1 }), [
      TOOL,
    ]);
    expect(out.get('lookup_claim')).toEqual({
      ok: false,
      reason: `upstream_error: workers-ai:${MODEL}: no answer within 50 ms (2 attempts)`,
    });
    expect(ai.runs).toHaveLength(2);
  });

  it('the daily allocation used up (3036) is not retried', async () => {
    const ai = fakeAi([
      { error: new InferenceUpstreamError('3036: You have used up your daily free allocation of 10,000 neurons.') },
    ]);
    const out = await augmentTools(createWorkersAIModel(ai, MODEL, { baseDelayMs: 1 }), [TOOL]);
    expect(out.get('lookup_claim')).toEqual({
      ok: false,
      reason: `upstream_error: workers-ai:${MODEL}: 3036: You have used up your daily free allocation of 10,000 neurons. (1 attempt)`,
    });
    expect(ai.runs).toHaveLength(1);
  });

  it('classifies binding errors', () => {
    expect(isRetryableWorkersAIError(new TypeError('Network connection lost.'))).toBe(true);
    expect(isRetryableWorkersAIError(new InferenceUpstreamError('3007: Request timeout'))).toBe(true);
    expect(isRetryableWorkersAIError(new InferenceUpstreamError('5007: No such model @cf/x or task'))).toBe(false);
    expect(isRetryableWorkersAIError(new InferenceUpstreamError('Internal server error'))).toBe(true);
    expect(isRetryableWorkersAIError(Object.assign(new Error('upstream'), { httpCode: 503 }))).toBe(true);
    expect(isRetryableWorkersAIError(Object.assign(new Error('bad input'), { httpCode: 400 }))).toBe(false);
    expect(isRetryableWorkersAIError('not an error')).toBe(false);
  });
});

describe('workers-ai:<model> embeddings', () => {
  it('embeds bge-base in batches within the binding limit, unit length, input order', async () => {
    const ai = fakeAi([]);
    const embedder = createWorkersAIEmbedder(ai, '@cf/baai/bge-base-en-v1.5');
    expect(embedder.id).toBe('workers-ai:@cf/baai/bge-base-en-v1.5');
    expect(embedder.dimensions).toBe(768);
    const texts = Array.from({ length: 120 }, (_, i) => `tool text ${i}`);
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(120);
    expect(ai.runs.map((r) => (r.inputs.text as string[]).length)).toEqual([50, 50, 20]);
    expect(ai.runs[2]?.inputs.text).toEqual(texts.slice(100));
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    const [again] = await embedder.embed(['tool text 7']);
    expect(again).toEqual(vectors[7]);
  });

  it('a reply of the wrong length or count is an upstream_error', async () => {
    const short = createWorkersAIEmbedder(fakeAi([], 384), '@cf/baai/bge-base-en-v1.5');
    await expect(short.embed(['a'])).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'workers-ai:@cf/baai/bge-base-en-v1.5: returned a 384-dimensional vector, expected 768',
    });
    const missing: AiRunner = { run: async () => ({ shape: [0, 768], data: [] }) };
    await expect(
      createWorkersAIEmbedder(missing, '@cf/baai/bge-small-en-v1.5').embed(['a', 'b']),
    ).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'workers-ai:@cf/baai/bge-small-en-v1.5: returned 0 vectors for 2 texts',
    });
  });

  it('retries a capacity error on embeddings', async () => {
    let runs = 0;
    const flaky: AiRunner = {
      run: async (_model, inputs) => {
        runs += 1;
        if (runs === 1) throw new InferenceUpstreamError('3040: No more data centers to forward the request to');
        return embed(inputs.text as string[], 384);
      },
    };
    const vectors = await createWorkersAIEmbedder(flaky, '@cf/baai/bge-small-en-v1.5', { baseDelayMs: 1 }).embed(['a']);
    expect(vectors[0]).toHaveLength(384);
    expect(runs).toBe(2);
  });

  it('an unknown model needs its vector length', () => {
    expect(() => createWorkersAIEmbedder(fakeAi([]), '@cf/some/new-embedder')).toThrow(
      /set a positive integer vector length/,
    );
    expect(createWorkersAIEmbedder(fakeAi([]), '@cf/some/new-embedder', { dimensions: 512 }).dimensions).toBe(512);
  });
});
