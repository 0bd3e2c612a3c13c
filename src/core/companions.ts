/**
 * Tools used together (docs/learning.md "Used together"). A request that several tools served
 * together is remembered by each of them (routing memory), so two tools whose memories hold the same
 * wordings have served the same requests. Each tool's companion is the tool whose memory shares the
 * most wordings with its own, when they share at least `MIN_SHARED`: one shared wording is one
 * request, two are a habit of the agent's users. Derived from memory alone, a companion needs no store
 * of its own and goes away with the memory it rests on (undo, the byte budget).
 */
import { wordingKey } from './routing-memory.ts';

/** Shared remembered wordings that make two tools companions: more than one request. */
export const MIN_SHARED = 2;

/**
 * Each tool's companion, by position: `memories[i]` is the remembered wordings of tool i. A tool
 * whose memory shares fewer than MIN_SHARED wordings with every other has none. Ties between two
 * candidates go to the earlier position, so the answer depends on the toolbox alone.
 */
export function companionsOf(memories: readonly (readonly string[])[]): Map<number, number> {
  const holders = new Map<string, number[]>();
  memories.forEach((texts, i) => {
    for (const key of new Set(texts.map(wordingKey))) {
      if (key === '') continue;
      const list = holders.get(key);
      if (list === undefined) holders.set(key, [i]);
      else list.push(i);
    }
  });
  const shared = new Map<number, Map<number, number>>();
  for (const list of holders.values()) {
    if (list.length < 2) continue;
    for (const a of list) {
      const counts = shared.get(a) ?? new Map<number, number>();
      shared.set(a, counts);
      for (const b of list) if (b !== a) counts.set(b, (counts.get(b) ?? 0) + 1);
    }
  }
  const out = new Map<number, number>();
  for (const [a, counts] of shared) {
    let best = -1;
    let most = MIN_SHARED - 1;
    for (const [b, n] of counts) if (n > most || (n === most && best >= 0 && b < best)) [best, most] = [b, n];
    if (best >= 0) out.set(a, best);
  }
  return out;
}
