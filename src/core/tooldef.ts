/**
 * One shape for the four ToolDef shapes of docs/api.md (plain, OpenAI, MCP, Anthropic). The parameter
 * schema is always the author's, kept verbatim.
 */
import type { ToolDef } from '../schemas.ts';

/** The author's definition in one shape: what the registry versions and hashes. */
export interface AuthorDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface NormalizedTool {
  definition: AuthorDefinition;
  /** Examples supplied by hand in the ToolDef (source `unknown`). */
  examples: string[];
}

const EMPTY_SCHEMA = { type: 'object', properties: {} };

/** Reads any accepted ToolDef shape into the author's definition. */
export function normalizeToolDef(def: ToolDef): NormalizedTool {
  const examples = def.examples ?? [];
  if ('function' in def) {
    const f = def.function;
    return {
      definition: { name: f.name, description: f.description ?? '', parameters: f.parameters ?? EMPTY_SCHEMA },
      examples,
    };
  }
  if ('inputSchema' in def) {
    return {
      definition: { name: def.name, description: def.description ?? '', parameters: def.inputSchema },
      examples,
    };
  }
  if ('input_schema' in def) {
    return {
      definition: { name: def.name, description: def.description ?? '', parameters: def.input_schema },
      examples,
    };
  }
  return {
    definition: { name: def.name, description: def.description ?? '', parameters: def.parameters ?? EMPTY_SCHEMA },
    examples,
  };
}

/** Top-level argument names of a JSON-Schema object, in the author's order. */
export function argumentNames(parameters: Record<string, unknown>): string[] {
  const props = parameters.properties;
  return typeof props === 'object' && props !== null && !Array.isArray(props) ? Object.keys(props) : [];
}

/**
 * A canonical JSON text of a value (object keys sorted), so that re-registering the same definition
 * with keys in another order is recognised as identical (a no-op).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
