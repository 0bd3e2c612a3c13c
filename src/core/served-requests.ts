/**
 * The requests the log says each tool finally served, indexed by word, so that a proposed example
 * can be held against how the log served requests saying the same thing (docs/learning.md "The log
 * decides who serves a wording").
 */
import { indexWordSets, SAME_MEANING_JACCARD } from './text.ts';

/** One served request: the tools that finally served its run, its conversation, its content words. */
export interface ServedRequest {
  tools: readonly string[];
  conversation: string;
  words: ReadonlySet<string>;
}

/** Served requests, searchable by the words a line says. */
export interface ServedRequests {
  /**
   * Per tool, the conversations whose served requests say what `words` say: a request says it when
   * it holds at least `SAME_MEANING_JACCARD` of those words (one in five aside). The request may
   * say more: a name, an order number or a second ask around the same wording.
   */
  saying(words: ReadonlySet<string>): Map<string, Set<string>>;
}

export function indexServedRequests(requests: readonly ServedRequest[]): ServedRequests {
  const postings = indexWordSets(requests.map((r) => r.words));
  return {
    saying(words) {
      const out = new Map<string, Set<string>>();
      if (words.size === 0) return out;
      const needed = Math.ceil(SAME_MEANING_JACCARD * words.size);
      for (const [at, n] of postings.shared(words)) {
        const r = requests[at];
        if (n < needed || !r) continue;
        for (const tool of r.tools) out.set(tool, (out.get(tool) ?? new Set()).add(r.conversation));
      }
      return out;
    },
  };
}
