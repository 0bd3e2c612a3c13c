/**
 * What a revision would make the model see (the dashboard's before/after diff). Pure and
 * built on the one renderer (src/core/render.ts) so the preview can never drift from the model view:
 * the revision's notes, "Not for" lines and example call go under `Learned from use`, its example
 * requests are learned examples (shown only with `show_learned_examples`, docs/learning.md). Lines the row
 * already has are not repeated, so previewing an applied revision shows no change.
 */
import type { ModelTool } from '../schemas.ts';
import { modelView, type RenderableTool } from './render.ts';

/** The parts of a revision that change what the model is shown (docs/api.md Revision). */
export interface RevisionAdditions {
  notes_added: readonly string[];
  avoid_added: readonly string[];
  queries_added: readonly string[];
  call_example: string | null;
}

/** The model view of `tool` now and with `additions` applied. */
export function previewRevision(
  tool: RenderableTool,
  additions: RevisionAdditions,
  showLearnedExamples: boolean,
): { before: ModelTool; after: ModelTool } {
  const known = new Set(tool.examples.map((e) => e.text));
  const after: RenderableTool = {
    ...tool,
    notes: union(tool.notes, additions.notes_added),
    avoid: union(tool.avoid, additions.avoid_added),
    call_example: additions.call_example ?? tool.call_example,
    examples: [
      ...tool.examples,
      ...additions.queries_added
        .filter((q) => !known.has(q))
        .map((text) => ({ text, source: 'learned' as const, revision_id: null })),
    ],
  };
  return { before: modelView(tool, showLearnedExamples), after: modelView(after, showLearnedExamples) };
}

function union(kept: readonly string[], added: readonly string[]): string[] {
  return [...kept, ...added.filter((line, i) => !kept.includes(line) && added.indexOf(line) === i)];
}
