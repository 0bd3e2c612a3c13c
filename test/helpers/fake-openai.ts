/**
 * The fake OpenAI-compatible server of test/global-setup.ts as the workerd tests drive it: a model
 * name of a test's own, an env whose model or embedder is that name on the fake, the replies the
 * fake gives it, and what the fake received for it.
 */
import { env } from 'cloudflare:workers';
import { inject } from 'vitest';

/** The fake's base URL. */
export const FAKE = inject('fakeOpenAI');

let seq = 0;
/** A model name no other test uses. */
export function modelName(label: string): string {
  seq += 1;
  return `${label}-${seq}-${Math.random().toString(36).slice(2, 8)}`;
}

/** An env whose LLM is a model of its own on the fake; `extra` adds settings (a timeout). */
export function fakeModelEnv(label: string, extra: { LLM_TIMEOUT_MS?: string } = {}) {
  const model = modelName(label);
  return {
    model,
    env: { ...env, LLM: `openai:${model}`, OPENAI_BASE_URL: `${FAKE}/v1`, OPENAI_API_KEY: 'test', ...extra },
  };
}

/** An env whose embedder is a model of its own on the fake, 8 dimensions. */
export function fakeEmbedderEnv(label: string) {
  const model = modelName(label);
  return {
    model,
    env: {
      ...env,
      EMBEDDER: `openai:${model}`,
      EMBEDDER_DIMENSIONS: '8',
      OPENAI_BASE_URL: `${FAKE}/v1`,
      OPENAI_API_KEY: 'test',
    },
  };
}

/** Queues the fake's answers to `model`, in order; throws when the fake refuses them. */
export async function script(model: string, replies: unknown[]): Promise<void> {
  const res = await fetch(`${FAKE}/_script`, { method: 'POST', body: JSON.stringify({ model, replies }) });
  if (!res.ok) throw new Error(`the fake refused the script: ${res.status} ${await res.text()}`);
}

/** What the fake received for a model: its HTTP calls, the logical ones (retries counted once), each attempt's number, the bodies. */
export interface Received {
  calls: number;
  logical_calls: number;
  attempts: (number | null)[];
  // biome-ignore lint/suspicious/noExplicitAny: request bodies as the fake stored them, read by each test its own way
  bodies: Record<string, any>[];
}

/** What the fake received for `model`. */
export async function received(model: string): Promise<Received> {
  const res = await fetch(`${FAKE}/_calls?model=${encodeURIComponent(model)}`);
  return (await res.json()) as Received;
}
