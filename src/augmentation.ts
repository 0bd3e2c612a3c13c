/**
 * Augmentation at registration: exactly one
 * model call per tool, its reply checked by `parseAugmentReply`, run over a bounded pool. Nothing
 * here writes: the caller stores the description and the `synthetic` examples of the tools that
 * came back `ok`, and registers the others with their plain docstring, reporting the reason.
 */
import { ApiError } from './errors.ts';
import { buildAugmentTask, parseAugmentReply, type AugmentResult } from './core/augment.ts';
import type { AugmentInput, ChatModel } from './core/ports.ts';
import { mapPool } from './core/pool.ts';

/**
 * Default number of tools augmented at once. A Worker keeps at most six outgoing connections open
 * per invocation; four leaves room for the store and the embedder.
 */
export const DEFAULT_AUGMENT_CONCURRENCY = 4;

export interface AugmentOptions {
  /** Model calls in flight at once (default 4). */
  concurrency?: number;
}

/**
 * Augments each tool with one call to `model`. Never throws: a provider failure (timeout after the
 * adapter's retries, 5xx, bad key) becomes `{ok: false, reason: 'upstream_error: …'}` for that tool
 * only. A model with nothing to say (the extractive model) gives `model gave no reply (<id>)`.
 * Tools are keyed by name; a name given twice is augmented once, from its last definition.
 */
export async function augmentTools(
  model: ChatModel,
  tools: readonly AugmentInput[],
  opts: AugmentOptions = {},
): Promise<Map<string, AugmentResult>> {
  const byName = new Map<string, AugmentInput>();
  for (const tool of tools) byName.set(tool.name, tool);
  const unique = [...byName.values()];
  const concurrency = opts.concurrency ?? DEFAULT_AUGMENT_CONCURRENCY;
  const results = await mapPool(unique, concurrency, (tool) => augmentOne(model, tool));
  return new Map(unique.map((tool, i) => [tool.name, results[i] ?? { ok: false, reason: 'not augmented' }]));
}

async function augmentOne(model: ChatModel, tool: AugmentInput): Promise<AugmentResult> {
  let raw: string | null;
  try {
    raw = await model.complete(buildAugmentTask(tool));
  } catch (err) {
    return { ok: false, reason: upstreamReason(model, err) };
  }
  const result = parseAugmentReply(raw, { definition: `${tool.name} ${tool.docstring}` });
  if (!result.ok && raw === null) return { ok: false, reason: `${result.reason} (${model.id})` };
  return result;
}

/** Every failure of the call itself reads as an upstream error naming the model, never a stack. */
function upstreamReason(model: ChatModel, err: unknown): string {
  if (err instanceof ApiError && err.code === 'upstream_error') return `upstream_error: ${err.message}`;
  const what = err instanceof Error ? err.message || err.name : String(err);
  return `upstream_error: ${model.id}: ${what.slice(0, 300)}`;
}
