/**
 * The privacy rule (privacy.ts) bound to one read of the log: the index of which words how many
 * conversations used is built once from every request and error read, and each tool's own words
 * once, so masking the thousands of texts of a review costs one pass each.
 */
import { buildPrivacyIndex, maskPersonal, type PrivacyIndex, toolVocabulary } from './privacy.ts';
import type { CallRecord, StoredTool, TurnRecord } from './records.ts';

/** Masks every personal value of a text about a tool (null: no tool's words are spared). */
export interface LogMasker {
  mask(text: string, tool: string | null, values: readonly unknown[]): string;
}

/** A tool's definition as the privacy rule reads it. */
export interface DefinedTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The texts of the log, each with the conversation it belongs to (a lone call or turn is its own). */
function* logTexts(log: {
  turns: readonly TurnRecord[];
  calls: readonly CallRecord[];
}): Generator<{ text: string; conversation: string }> {
  for (const t of log.turns) {
    if (t.request !== null) yield { text: t.request, conversation: t.conversation_id ?? `turn:${t.turn_id}` };
  }
  for (const c of log.calls) {
    const conversation = c.conversation_id ?? (c.turn_id === null ? `call:${c.call_id}` : `turn:${c.turn_id}`);
    if (c.request !== null) yield { text: c.request, conversation };
    if (c.error !== null) yield { text: c.error, conversation };
  }
}

/** Builds the masker for one read of the log (file comment). */
export function createLogMasker(
  log: { turns: readonly TurnRecord[]; calls: readonly CallRecord[] },
  tools: Iterable<DefinedTool>,
  minConversations: number,
): LogMasker {
  const index: PrivacyIndex = buildPrivacyIndex(logTexts(log));
  const definitions = new Map<string, DefinedTool>();
  for (const t of tools) definitions.set(t.name, t);
  // Every registered tool's name is the agent's own word: a "Not for" line names one.
  const names = toolVocabulary({ name: [...definitions.keys()].join(' '), description: '', parameters: {} });
  const vocabularies = new Map<string, ReadonlySet<string>>();
  const vocabularyOf = (tool: string | null): ReadonlySet<string> => {
    if (tool === null) return names;
    let v = vocabularies.get(tool);
    if (!v) {
      const def = definitions.get(tool);
      v = def ? new Set([...names, ...toolVocabulary(def)]) : names;
      vocabularies.set(tool, v);
    }
    return v;
  };
  return {
    mask(text, tool, values) {
      return maskPersonal(text, { index, minConversations, vocabulary: vocabularyOf(tool), values });
    },
  };
}

/** A stored tool as the masker reads its definition: name, docstring and description, parameters. */
export function definedTool(t: StoredTool): DefinedTool {
  return { name: t.name, description: [t.docstring, t.description ?? ''].join('\n'), parameters: t.parameters };
}
