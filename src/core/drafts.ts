/**
 * Draft definitions for unregistered tools (docs/learning.md): verbatim from a trace's `tools=[…]` when one
 * was sent, else inferred from the arguments the model formed — the argument names, their JSON
 * types across the logged calls, and the names every call sent as `required`.
 */
import type { ToolDraft } from '../schemas.ts';
import type { AuthorDefinition } from './tooldef.ts';

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';

/** Fixed order, so a union always reads the same. */
const TYPE_ORDER: readonly JsonType[] = ['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'];

/** The JSON-Schema type of one value (`integer` for whole numbers). */
export function jsonTypeOf(value: unknown): JsonType {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'object') return 'object';
  return 'string';
}

/**
 * A JSON-Schema object for the arguments of `calls`: every argument name seen (sorted), typed by
 * the values seen (a union when mixed; integer and number together read as number), `required`
 * = the names present in every call.
 */
export function inferParameters(calls: readonly Record<string, unknown>[]): Record<string, unknown> {
  const types = new Map<string, Set<JsonType>>();
  const counts = new Map<string, number>();
  for (const args of calls) {
    for (const [key, value] of Object.entries(args)) {
      types.set(key, (types.get(key) ?? new Set<JsonType>()).add(jsonTypeOf(value)));
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  const names = [...types.keys()].sort();
  const properties = Object.fromEntries(names.map((n) => [n, { type: schemaType(types.get(n) ?? new Set()) }]));
  const required = names.filter((n) => counts.get(n) === calls.length);
  return { type: 'object', properties, required };
}

function schemaType(seen: ReadonlySet<JsonType>): JsonType | JsonType[] {
  const kept = TYPE_ORDER.filter((t) => seen.has(t) && !(t === 'integer' && seen.has('number')));
  return kept.length === 1 ? (kept[0] ?? 'string') : kept;
}

/** The description of an inferred draft: says plainly that a person has to write it. */
export const draftDescription = (name: string): string => `DRAFT: describe what ${name} does and when to use it.`;

/** The draft for one unregistered name: the trace's definition, else one inferred from `calls`. */
export function draftFor(
  name: string,
  definition: AuthorDefinition | null,
  calls: readonly Record<string, unknown>[],
): { definition_source: 'metadata' | 'inferred'; draft: ToolDraft } {
  if (definition) {
    return {
      definition_source: 'metadata',
      draft: { name, description: definition.description, parameters: definition.parameters },
    };
  }
  return {
    definition_source: 'inferred',
    draft: { name, description: draftDescription(name), parameters: inferParameters(calls) },
  };
}
