/**
 * Pinned definitions (docs/security.md "The MCP gateway"): what changed between the definition of
 * an upstream tool in force and the one its upstream lists now. A change does not reach the model
 * until a person approves it (a rug pull is a server changing a tool after people trusted it), so
 * each changed field becomes a finding that holds the new definition, says what it was and what it
 * is, and marks the new text.
 */
import { canonicalJson } from './tooldef.ts';
import type { DefinitionFinding } from './definition-check.ts';

/** A tool definition as an upstream lists it. */
export interface PinnedDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Characters of a field's text kept in a finding, as the definition check keeps them. */
const SHOWN = 500;

const shown = (text: string): string => (text.length > SHOWN ? `${text.slice(0, SHOWN - 1)}…` : text);

/** The properties of an input schema, by name (empty when it declares none). */
function properties(schema: Record<string, unknown>): Record<string, unknown> {
  const p = schema.properties;
  return typeof p === 'object' && p !== null && !Array.isArray(p) ? (p as Record<string, unknown>) : {};
}

function required(schema: Record<string, unknown>): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
}

/** What the schema says besides its properties and required list (type, additionalProperties, …). */
function rest(schema: Record<string, unknown>): string {
  const { properties: _p, required: _r, ...others } = schema;
  return canonicalJson(others);
}

/**
 * One finding per change (check `changed`): the description, each parameter added, removed or
 * changed, the required list, the rest of the schema. Empty when the two are the same definition.
 */
export function definitionChanges(before: PinnedDefinition, after: PinnedDefinition): DefinitionFinding[] {
  const out: DefinitionFinding[] = [];
  const change = (field: string, text: string, why: string) =>
    out.push({ severity: 'quarantine', check: 'changed', field, text: shown(text), match: shown(text), why });
  if (before.description !== after.description)
    change(
      'description',
      after.description,
      `the description changed since it was approved; it was: ${shown(before.description)}`,
    );
  const was = properties(before.inputSchema);
  const now = properties(after.inputSchema);
  for (const [name, schema] of Object.entries(now)) {
    const field = `parameters.properties.${name}`;
    if (!(name in was)) change(field, canonicalJson(schema), `parameter ${name} was added`);
    else if (canonicalJson(was[name]) !== canonicalJson(schema))
      change(field, canonicalJson(schema), `parameter ${name} changed; it was: ${shown(canonicalJson(was[name]))}`);
  }
  for (const name of Object.keys(was))
    if (!(name in now)) change(`parameters.properties.${name}`, '', `parameter ${name} was removed`);
  const req = { was: [...required(before.inputSchema)].sort(), now: [...required(after.inputSchema)].sort() };
  if (req.was.join(',') !== req.now.join(','))
    change(
      'parameters.required',
      req.now.join(', '),
      `the required parameters changed; they were: ${req.was.join(', ') || 'none'}`,
    );
  if (rest(before.inputSchema) !== rest(after.inputSchema))
    change('parameters', rest(after.inputSchema), `the schema changed; it was: ${shown(rest(before.inputSchema))}`);
  return out;
}

/**
 * True when the changes `definitionChanges(before, …)` found only add optional parameters: the same
 * description, the same required list, every old parameter as it was, and the rest of the schema
 * unchanged. Such a change cannot alter what an existing call means, so a policy may serve it
 * without a person.
 */
export function onlyAddsOptional(before: PinnedDefinition, changes: readonly DefinitionFinding[]): boolean {
  const was = properties(before.inputSchema);
  const prefix = 'parameters.properties.';
  return (
    changes.length > 0 && changes.every((c) => c.field.startsWith(prefix) && !(c.field.slice(prefix.length) in was))
  );
}
