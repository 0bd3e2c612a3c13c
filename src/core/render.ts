/**
 * What the model is shown (docs/learning.md): the description (or docstring), then, when there is any,
 * a `Learned from use` section with usage notes, "Not for" lines and the example call. Learned
 * example requests only with `show_learned_examples`; synthetic ones never.
 */
import type { Example, ModelTool } from '../schemas.ts';

export interface RenderableTool {
  name: string;
  docstring: string;
  description: string | null;
  parameters: Record<string, unknown>;
  examples: Example[];
  notes: string[];
  avoid: string[];
  call_example: string | null;
}

export const LEARNED_HEADING = 'Learned from use:';

/** The OpenAI function definition the model is shown for a tool. */
export function modelView(tool: RenderableTool, showLearnedExamples: boolean): ModelTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: modelDescription(tool, showLearnedExamples),
      parameters: tool.parameters,
    },
  };
}

function modelDescription(tool: RenderableTool, showLearnedExamples: boolean): string {
  const base = tool.description ?? tool.docstring;
  const learned = [
    ...tool.notes.map((n) => `- ${n}`),
    ...tool.avoid.map((a) => `- ${a}`),
    ...(tool.call_example ? [`- ${tool.call_example}`] : []),
  ];
  const asked = showLearnedExamples ? tool.examples.filter((e) => e.source === 'learned').map((e) => e.text) : [];
  if (asked.length > 0) learned.push(`- Also asked for as: ${asked.map((t) => JSON.stringify(t)).join('; ')}`);
  if (learned.length === 0) return base;
  return `${base}\n\n${LEARNED_HEADING}\n${learned.join('\n')}`;
}

/** docs/learning.md stable-list rule: the toolbox's size in tokens, ≈ characters / 4 of the model views. */
export function toolboxTokens(views: readonly ModelTool[]): number {
  let chars = 0;
  for (const v of views) chars += JSON.stringify(v).length;
  return Math.ceil(chars / 4);
}

/** The tool shapes `/route` and `GET …/tools` answer in (docs/tool-delivery.md). */
export const TOOL_FORMATS = ['openai', 'anthropic', 'mcp'] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];

/** OpenAI Chat function tool; `defer_loading` sits beside `function` when the tool is deferred. */
export interface OpenAiView extends ModelTool {
  defer_loading?: true;
}
/** Anthropic Messages tool definition; `defer_loading: true` keeps it out of the prompt until referenced. */
export interface AnthropicView {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  defer_loading?: true;
}
/** MCP `tools/list` entry; MCP has no deferral field, so `_meta` carries the same mark. */
export interface McpView {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  _meta?: { defer_loading: true };
}
export type FormattedTool = OpenAiView | AnthropicView | McpView;

/** One model view (the OpenAI Chat shape) in the asked format, marked deferred when `deferred`. */
export function inFormat(view: ModelTool, format: ToolFormat, deferred = false): FormattedTool {
  const { name, description, parameters } = view.function;
  if (format === 'anthropic') {
    return deferred
      ? { name, description, input_schema: parameters, defer_loading: true }
      : { name, description, input_schema: parameters };
  }
  if (format === 'mcp') {
    return deferred
      ? { name, description, inputSchema: parameters, _meta: { defer_loading: true } }
      : { name, description, inputSchema: parameters };
  }
  return deferred
    ? { type: 'function', function: { name, description, parameters }, defer_loading: true }
    : { type: 'function', function: { name, description, parameters } };
}

/**
 * The whole list as the model sees it: sorted by name (code-unit order, not locale) so the bytes are
 * the same call after call while no tool changes; with `defer`, every tool but the pinned ones deferred.
 */
export function stableList(
  views: readonly ModelTool[],
  format: ToolFormat,
  defer: boolean,
  pinned: ReadonlySet<string>,
): FormattedTool[] {
  return [...views]
    .sort((a, b) => (a.function.name < b.function.name ? -1 : a.function.name > b.function.name ? 1 : 0))
    .map((v) => inFormat(v, format, defer && !pinned.has(v.function.name)));
}
