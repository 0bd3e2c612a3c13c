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
 * whose memory shares fewer than MIN_SHARED wordings with every other has none. Among candidates
 * the one sharing the most wins, ties going to the earlier position, so the answer depends on the
 * toolbox alone.
 */
export function companionsOf(memories: readonly (readonly string[])[]): Map<number, number> {
  return new Map(companionTable(memories).companions);
}

/**
 * The companions of a toolbox and what they rest on (which tools hold each remembered wording), so
 * that one tool's memory can change without going over every tool again: the displacement re-check
 * tries memories one wording at a time at up to 10,000 tools.
 */
export interface CompanionTable {
  /** Each tool's companion by position, as `companionsOf` answers it. */
  readonly companions: ReadonlyMap<number, number>;
  /**
   * The table with tool `position`'s memory replaced by `texts`: its companions are
   * `companionsOf` of the changed memories; only the tools sharing a wording with the old or the new
   * memory are looked at again. This table is left as it was.
   */
  with(position: number, texts: readonly string[]): CompanionTable;
}

/** The distinct non-empty wording keys of one memory. */
function keysOf(texts: readonly string[]): string[] {
  return [...new Set(texts.map(wordingKey))].filter((key) => key !== '');
}

/** Tool `a`'s companion from the holders of its wordings, or undefined. */
function companionOf(
  a: number,
  keys: readonly string[],
  holders: ReadonlyMap<string, readonly number[]>,
): number | undefined {
  const counts = new Map<number, number>();
  for (const key of keys) for (const b of holders.get(key) ?? []) if (b !== a) counts.set(b, (counts.get(b) ?? 0) + 1);
  let best = -1;
  let most = MIN_SHARED - 1;
  for (const [b, n] of counts) if (n > most || (n === most && b < best)) [best, most] = [b, n];
  return best >= 0 ? best : undefined;
}

/** Builds the table of a toolbox's memories. */
export function companionTable(memories: readonly (readonly string[])[]): CompanionTable {
  const keys = memories.map(keysOf);
  const holders = new Map<string, number[]>();
  keys.forEach((list, i) => {
    for (const key of list) {
      const held = holders.get(key);
      if (held === undefined) holders.set(key, [i]);
      else held.push(i);
    }
  });
  const companions = new Map<number, number>();
  keys.forEach((list, a) => {
    if (!list.some((key) => (holders.get(key)?.length ?? 0) > 1)) return;
    const b = companionOf(a, list, holders);
    if (b !== undefined) companions.set(a, b);
  });
  return tableOf(keys, holders, companions);
}

function tableOf(
  keys: readonly (readonly string[])[],
  holders: ReadonlyMap<string, readonly number[]>,
  companions: ReadonlyMap<number, number>,
): CompanionTable {
  return {
    companions,
    with(position, texts) {
      if (!Number.isInteger(position) || position < 0 || position >= keys.length)
        throw new RangeError(`no tool at position ${position} of ${keys.length}`);
      const before = keys[position] ?? [];
      const after = keysOf(texts);
      const nextHolders = new Map(holders);
      const touched = new Set<number>([position]);
      for (const key of before) for (const b of holders.get(key) ?? []) touched.add(b);
      for (const key of before) {
        const held = (nextHolders.get(key) ?? []).filter((b) => b !== position);
        if (held.length === 0) nextHolders.delete(key);
        else nextHolders.set(key, held);
      }
      for (const key of after) {
        const held = nextHolders.get(key) ?? [];
        for (const b of held) touched.add(b);
        nextHolders.set(key, [...held, position]);
      }
      const nextKeys = [...keys];
      nextKeys[position] = after;
      const nextCompanions = new Map(companions);
      for (const a of touched) {
        const b = companionOf(a, nextKeys[a] ?? [], nextHolders);
        if (b === undefined) nextCompanions.delete(a);
        else nextCompanions.set(a, b);
      }
      return tableOf(nextKeys, nextHolders, nextCompanions);
    },
  };
}
