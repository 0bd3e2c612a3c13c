/**
 * Draft definitions for unregistered tools (docs/learning.md): from a trace's `tools=[…]` when one
 * was sent, else inferred from the arguments the model formed — the argument names, their JSON
 * types across the logged calls, and the names every call sent as `required`.
 *
 * A trace's definition is whatever an agent key sent, so it is untrusted (docs/security.md "Trace
 * drafts"): its descriptions are screened by the check every learned line passes and served
 * normalised; a flagged draft is `untrusted`, with the reasons, and the dashboard makes the operator
 * edit it before it can be registered.
 */
import type { ToolDraft } from '../schemas.ts';
import { checkLineText } from './safety.ts';
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

/** A draft, where it came from, and whether a person must edit it before it is registered. */
export interface Drafted {
  definition_source: 'metadata' | 'inferred';
  draft: ToolDraft;
  untrusted: boolean;
  untrusted_reasons: string[];
}

/** The draft for one unregistered name: the trace's definition (screened), else one inferred from `calls`. */
export function draftFor(
  name: string,
  definition: AuthorDefinition | null,
  calls: readonly Record<string, unknown>[],
): Drafted {
  if (definition) {
    const screened = screenDraft({ name, description: definition.description, parameters: definition.parameters });
    return {
      definition_source: 'metadata',
      draft: screened.draft,
      untrusted: screened.reasons.length > 0,
      untrusted_reasons: screened.reasons,
    };
  }
  return {
    definition_source: 'inferred',
    draft: { name, description: draftDescription(name), parameters: inferParameters(calls) },
    untrusted: false,
    untrusted_reasons: [],
  };
}

/**
 * Every line of the draft's description, and every `description` or `title` in its parameters,
 * through `checkLineText` against the draft's own words (a draft is its own language): the draft
 * with those texts normalised, and what was refused or suspicious, each reason naming where.
 */
export function screenDraft(draft: ToolDraft): { draft: ToolDraft; reasons: string[] } {
  const reasons: string[] = [];
  const own = { definition: `${draft.name} ${draft.description}` };
  const screen = (where: string, text: string): string =>
    text
      .split('\n')
      .map((line) => {
        const checked = checkLineText(line, own);
        if (checked.refused) reasons.push(`${where}: refused: ${checked.refused}`);
        for (const why of checked.suspicious) reasons.push(`${where}: ${why}`);
        return checked.text;
      })
      .join('\n');
  const walk = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}[${i}]`));
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        (k === 'description' || k === 'title') && typeof v === 'string'
          ? screen(`${path}.${k}`, v)
          : walk(v, `${path}.${k}`),
      ]),
    );
  };
  const description = screen('description', draft.description);
  const parameters = walk(draft.parameters, 'parameters') as Record<string, unknown>;
  return { draft: { name: draft.name, description, parameters }, reasons };
}
