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
    function: { name: tool.name, description: modelDescription(tool, showLearnedExamples), parameters: tool.parameters },
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
