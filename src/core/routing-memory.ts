/**
 * Routing memory, apart from the model view: per tool, the wordings of requests it finally served
 * (hits and misses alike), already masked by the privacy rule before they reach this module. This
 * module only decides what a tool's memory holds: one copy of each wording (compared as retrieval
 * sees it), within a byte budget, and when the budget is full the wordings that cover the most.
 */
import { normalize, tokenize } from './text.ts';

/**
 * Default bytes of wording text per tool. docs/capacity.md: a routing snapshot is kept within
 * 48 MiB of an isolate; at 1 KiB a tool (about 9 wordings of ToolE-length requests) a 10,000-tool
 * agent with every memory full measured 43.0 MiB (31.8 MiB with none), counted as 46.5 MiB: it
 * still fits that cache alone.
 */
export const DEFAULT_MEMORY_BYTES = 1024;

/** One remembered wording: its masked text and when it was last served. */
export interface MemoryWording {
  text: string;
  /** Epoch milliseconds of the latest served request with this wording. */
  at: number;
}

const encoder = new TextEncoder();

/** UTF-8 bytes a wording takes in the budget. */
export function wordingBytes(text: string): number {
  return encoder.encode(text).length;
}

/** Two wordings are one when retrieval sees the same words in the same order. */
export function wordingKey(text: string): string {
  const tokens = tokenize(text);
  return tokens.length > 0 ? tokens.join(' ') : normalize(text);
}

/**
 * Merges served wordings into a tool's memory and trims it to `budgetBytes`. Duplicates keep one
 * copy (the later time, the later text). While over budget, the wording whose words the rest of
 * memory covers best goes first: a wording adding no word the others lack is dropped before one
 * that brings a word nothing else has; among equals the oldest goes. A single wording longer than
 * the budget is never kept. The result is ordered newest first.
 */
export function mergeMemory(
  current: readonly MemoryWording[],
  incoming: readonly MemoryWording[],
  budgetBytes: number,
): MemoryWording[] {
  if (!Number.isInteger(budgetBytes) || budgetBytes < 0) {
    throw new RangeError(`memory budget must be a non-negative integer of bytes, got ${budgetBytes}`);
  }
  const byKey = new Map<string, MemoryWording>();
  for (const w of [...current, ...incoming]) {
    const text = w.text.trim();
    if (text === '' || wordingBytes(text) > budgetBytes) continue;
    const key = wordingKey(text);
    const seen = byKey.get(key);
    if (seen === undefined || w.at >= seen.at) byKey.set(key, { text, at: w.at });
  }
  const kept = [...byKey.values()];
  let bytes = kept.reduce((sum, w) => sum + wordingBytes(w.text), 0);
  const words = kept.map((w) => new Set(tokenize(w.text)));
  const counts = new Map<string, number>();
  for (const set of words) for (const word of set) counts.set(word, (counts.get(word) ?? 0) + 1);
  while (bytes > budgetBytes && kept.length > 0) {
    let victim = 0;
    let victimNew = Number.POSITIVE_INFINITY;
    for (let i = 0; i < kept.length; i++) {
      let unique = 0;
      for (const word of words[i] ?? []) if (counts.get(word) === 1) unique++;
      const older = (kept[i]?.at ?? 0) < (kept[victim]?.at ?? 0);
      if (unique < victimNew || (unique === victimNew && older)) {
        victim = i;
        victimNew = unique;
      }
    }
    for (const word of words[victim] ?? []) counts.set(word, (counts.get(word) ?? 1) - 1);
    bytes -= wordingBytes(kept[victim]?.text ?? '');
    kept.splice(victim, 1);
    words.splice(victim, 1);
  }
  return kept.sort((a, b) => b.at - a.at || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}
