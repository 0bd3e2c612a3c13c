/**
 * Routing memory, apart from the model view: per tool, the wordings of requests it finally served
 * (hits and misses alike), already masked by the privacy rule before they reach this module. This
 * module only decides what a tool's memory holds: one copy of each wording (compared as retrieval
 * sees it), within a byte budget, and when the budget is full the wordings that cover the most.
 * A wording routes only once requests saying it were served by the tool in `min_conversations`
 * distinct conversations: until then it waits, pending, with the conversations seen so far, as no
 * other learned line rests on one conversation.
 */
import { contentWords, fnv64Hex, normalize, SAME_MEANING_JACCARD, tokenize } from './text.ts';

/**
 * Wording text an agent's memory holds at most, all its tools together. docs/capacity.md: a routing
 * snapshot is kept within 48 MiB of an isolate; a 10,000-tool agent with 1 KiB a tool (about 9
 * wordings of ToolE-length requests) and every memory full measured 43.0 MiB (31.8 MiB with none),
 * counted as 46.5 MiB: it still fits that cache alone. A smaller toolbox gets the same text in
 * fewer, larger memories: its vectors and views take far less of the snapshot.
 */
export const AGENT_MEMORY_BYTES = 10_000 * 1024;

/**
 * Default bytes of wording text per tool: the most `memory_bytes` allows. A toolbox of more than
 * AGENT_MEMORY_BYTES / 16 KiB (625) tools gets its share of AGENT_MEMORY_BYTES instead
 * (`memoryBudget`): 1 KiB a tool at 10,000.
 */
export const DEFAULT_MEMORY_BYTES = 16_384;

/**
 * The bytes one tool's memory may hold in a toolbox of `tools`: `memoryBytes` (the setting), and no
 * more than the tool's share of AGENT_MEMORY_BYTES, so a large toolbox's snapshot keeps within an
 * isolate whatever the setting says. 0 when memory is off.
 */
export function memoryBudget(memoryBytes: number, tools: number): number {
  return Math.min(memoryBytes, Math.floor(AGENT_MEMORY_BYTES / Math.max(1, tools)));
}

/** One remembered wording: its masked text and when it was last served. */
export interface MemoryWording {
  text: string;
  /** Epoch milliseconds of the latest served request with this wording. */
  at: number;
  /**
   * Present while the wording waits: the distinct conversations in which the tool served requests
   * saying it, fewer than `min_conversations`. Routing never reads a pending wording; absent, it
   * routes (and so does every wording stored before the rule).
   */
  pending?: string[];
  /**
   * Present while every run it rests on was served together with other tools (a request for
   * several things); a run of this tool alone saying it clears it. The other tools hold the same
   * wording, and that is no contest between them (`indexClaims`).
   */
  together?: true;
}

/**
 * What a pending wording keeps of a conversation: a mark (`fnv64Hex`, 16 hex digits), not
 * its id. A tool row outlives the log's retention, and counting distinct conversations needs no
 * more; two conversations sharing a mark count as one, which only delays a wording.
 */
export function conversationMark(id: string): string {
  return fnv64Hex(id);
}

/** A wording on its way into memory: `conversations` it was served in (absent: it routes at once). */
export interface IncomingWording {
  text: string;
  at: number;
  conversations?: readonly string[];
  /**
   * Every run it rests on was served together with other tools: it asks for more than this tool
   * did, so no routed wording of the tool vouches for it; it routes from its own conversations.
   */
  together?: boolean;
}

/** The wordings routing reads: those no longer pending. */
export function routedWordings<T extends { pending?: readonly string[] }>(memory: readonly T[]): T[] {
  return memory.filter((w) => w.pending === undefined);
}

/** Wordings claimed for tools (example requests, memories, served runs), searchable by what a wording says. */
export interface Claims {
  /**
   * The tools with a claimed wording that says what `text` says (`sameWords`). With `holder`, a
   * claimed wording that `holder` claims too as a request it served together with other tools
   * (`together`; the same words in the same order) is left out: tools that served one request
   * together each hold it ("book a flight to Rome and a hotel near the Colosseum"), and `holder`
   * then asked alone for the part it served is no contest. Two tools holding one wording that
   * each served alone are a contest (a wrong pick beside the right tool), and stay one.
   */
  claimants(text: string, holder?: string): Set<string>;
}

/**
 * The words of a set that any set saying the same (`sameWords`) while no larger must share one
 * of: two sets saying the same share at least SAME_MEANING_JACCARD of the smaller one's words, so
 * the smaller misses at most the rest, and any one word more than that includes a shared one.
 * The rarest first (`rarity`), so the postings they are looked up in stay short.
 */
function prefixWords(set: ReadonlySet<string>, rarity: (word: string) => number): string[] {
  const size = set.size - Math.ceil(SAME_MEANING_JACCARD * set.size) + 1;
  return [...set].sort((a, b) => rarity(a) - rarity(b) || (a < b ? -1 : a > b ? 1 : 0)).slice(0, size);
}

/**
 * Indexes claimed wordings so that a look-up reads only claims that may say the same: a claim no
 * larger than the wording shares one of its own prefix words with it, and a claim no smaller
 * holds one of the wording's (`prefixWords`); each such claim is then compared whole. A review
 * holds every tool's memory against the wordings of its window, and reading every claim that shares
 * a common word ("help", "find") grows with the window times the whole memory of a big toolbox.
 */
export function indexClaims(claims: readonly { tool: string; text: string; together?: boolean }[]): Claims {
  const words = claims.map((c) => contentWords(c.text));
  const frequency = new Map<string, number>();
  for (const set of words) for (const w of set) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  const rarity = (word: string): number => frequency.get(word) ?? 0;
  const holding = new Map<string, number[]>();
  const byPrefix = new Map<string, number[]>();
  const add = (postings: Map<string, number[]>, word: string, at: number): void => {
    const list = postings.get(word);
    if (list) list.push(at);
    else postings.set(word, [at]);
  };
  const byTool = new Map<string, number[]>();
  words.forEach((set, at) => {
    for (const w of set) add(holding, w, at);
    for (const w of prefixWords(set, rarity)) add(byPrefix, w, at);
    const claim = claims[at];
    if (claim?.together === true) add(byTool, claim.tool, at);
  });
  // Each tool's wordings served together as keys (`wordingKey`), found when a look-up first names it as holder.
  const keysByTool = new Map<string, ReadonlySet<string>>();
  const keysOf = (tool: string): ReadonlySet<string> => {
    let keys = keysByTool.get(tool);
    if (!keys) {
      keys = new Set((byTool.get(tool) ?? []).map((at) => wordingKey(claims[at]?.text ?? '')));
      keysByTool.set(tool, keys);
    }
    return keys;
  };
  return {
    claimants(text, holder) {
      const mine = contentWords(text);
      const out = new Set<string>();
      if (mine.size === 0) return out;
      const compared = new Set<number>();
      const compare = (at: number): void => {
        if (compared.has(at)) return;
        compared.add(at);
        const claim = claims[at];
        const theirs = words[at];
        if (!claim || !theirs || out.has(claim.tool) || !sameWords(theirs, mine)) return;
        if (holder !== undefined && claim.tool !== holder && keysOf(holder).has(wordingKey(claim.text))) return;
        out.add(claim.tool);
      };
      for (const w of mine) for (const at of byPrefix.get(w) ?? []) compare(at);
      for (const w of prefixWords(mine, rarity)) for (const at of holding.get(w) ?? []) compare(at);
      return out;
    },
  };
}

/**
 * True when two wordings, as their content words (`contentWords`), say the same: one holds at least
 * SAME_MEANING_JACCARD of the other's (the request around a wording may add a greeting, a "now", a
 * masked name). Callers comparing many wordings find each one's words once.
 */
export function sameWords(x: ReadonlySet<string>, y: ReadonlySet<string>): boolean {
  if (x.size === 0 || y.size === 0) return false;
  return sharedWords(x, y) >= Math.ceil(SAME_MEANING_JACCARD * Math.min(x.size, y.size));
}

/**
 * True when two wordings say the same whole (`sameWords` both ways): each holds at least
 * SAME_MEANING_JACCARD of the other's content words. A part of a request ("a hotel near the
 * Colosseum") says what the request says for `sameWords`, never the whole of a request for two
 * things ("book a flight to Rome and a hotel near the Colosseum").
 */
export function sameWhole(x: ReadonlySet<string>, y: ReadonlySet<string>): boolean {
  if (x.size === 0 || y.size === 0) return false;
  return sharedWords(x, y) >= Math.ceil(SAME_MEANING_JACCARD * Math.max(x.size, y.size));
}

/** How many words two sets share. */
function sharedWords(x: ReadonlySet<string>, y: ReadonlySet<string>): number {
  let shared = 0;
  for (const w of x) if (y.has(w)) shared++;
  return shared;
}

/**
 * `memory` (or wordings on their way in) without those that one of `said`, a tool's example
 * requests, says (`sameWords`): routing reads the examples already, so a second copy would spend
 * the byte budget on nothing new and weigh that wording twice in the tool's vector and its lexical
 * document. The same array when nothing goes.
 */
export function withoutSaid<T extends { text: string }>(memory: readonly T[], said: readonly string[]): readonly T[] {
  if (said.length === 0 || memory.length === 0) return memory;
  const saidWords = said.map((text) => contentWords(text));
  const kept = memory.filter((w) => {
    const words = contentWords(w.text);
    return !saidWords.some((s) => sameWords(s, words));
  });
  return kept.length === memory.length ? memory : kept;
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
 * Merges served wordings into a tool's memory and trims it to `budgetBytes`. A wording with the
 * same words in the same order as one held is that one (the later text and time are kept); one
 * that says what a pending wording says (`sameWords`) adds its conversations to it. A pending
 * wording routes once its conversations reach `minConversations`; a new wording saying what a
 * routed one says routes at once, as another way of asking what the tool was already found to
 * serve, unless it was served `together` with other tools: a request for two things holds the one
 * it shares with a routed wording beside words this tool did not serve, from one conversation, so
 * it waits for its own conversations like any new wording, marked `together` until a run of the
 * tool alone says it. Routed and pending wordings each keep within the budget: while the routed
 * are over it, the one whose words the rest covers best goes first (a wording adding no word the
 * others lack before one that brings a word nothing else has; among equals the oldest); while the
 * pending are over it, the oldest goes. A single wording longer than the budget is never kept.
 * The result is ordered newest first, the routed before the pending.
 */
export function mergeMemory(
  current: readonly MemoryWording[],
  incoming: readonly IncomingWording[],
  budgetBytes: number,
  minConversations = 1,
): MemoryWording[] {
  if (!Number.isInteger(budgetBytes) || budgetBytes < 0) {
    throw new RangeError(`memory budget must be a non-negative integer of bytes, got ${budgetBytes}`);
  }
  interface Held {
    text: string;
    at: number;
    seen: Set<string> | null;
    /** `wordingKey(text)` and `contentWords(text)`, found once: each wording is compared with every other. */
    key: string;
    words: ReadonlySet<string>;
    /** Every run it rests on was served together with other tools (`MemoryWording.together`). */
    together: boolean;
  }
  const held: Held[] = [];
  const byKey = new Map<string, Held>();
  // A wording served together is never vouched for by a routed wording saying what it says: not
  // when it comes in, nor when it is placed again as held, however many merges later.
  const place = (w: IncomingWording | MemoryWording, seen: Set<string> | null): void => {
    const together = w.together === true;
    const text = w.text.trim();
    if (text === '' || wordingBytes(text) > budgetBytes) return;
    const key = wordingKey(text);
    const words = contentWords(text);
    const same = byKey.get(key) ?? held.find((h) => h.seen !== null && sameWords(h.words, words));
    if (same === undefined) {
      const vouched =
        seen === null ||
        seen.size >= minConversations ||
        (!together && held.some((h) => h.seen === null && sameWords(h.words, words)));
      const h = { text, at: w.at, seen: vouched ? null : seen, key, words, together };
      held.push(h);
      byKey.set(key, h);
      return;
    }
    if (same.key === key && w.at >= same.at) same.text = text;
    same.at = Math.max(same.at, w.at);
    if (!together) same.together = false;
    if (same.seen === null) return;
    if (seen === null) same.seen = null;
    else for (const c of seen) same.seen.add(c);
    if (same.seen !== null && same.seen.size >= minConversations) same.seen = null;
  };
  for (const w of current) place(w, w.pending ? new Set(w.pending) : null);
  for (const w of incoming) place(w, w.conversations ? new Set(w.conversations) : null);
  const marked = (h: Held) => (h.together ? { together: true as const } : {});
  const routed = withinBudget(
    held.filter((h) => h.seen === null),
    budgetBytes,
    true,
  ).map((h) => ({ text: h.text, at: h.at, ...marked(h) }));
  const pending = withinBudget(
    held.filter((h) => h.seen !== null),
    budgetBytes,
    false,
  ).map((h) => ({ text: h.text, at: h.at, pending: [...(h.seen ?? [])].sort(), ...marked(h) }));
  const newestFirst = (a: MemoryWording, b: MemoryWording): number =>
    b.at - a.at || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0);
  return [...routed.sort(newestFirst), ...pending.sort(newestFirst)];
}

/**
 * `kept` trimmed to the budget: by coverage (the wording adding the fewest words the others lack
 * goes first, the oldest among equals), or by age alone.
 */
function withinBudget<T extends { text: string; at: number }>(
  wordings: readonly T[],
  budgetBytes: number,
  byCoverage: boolean,
): T[] {
  const kept = [...wordings];
  let bytes = kept.reduce((sum, w) => sum + wordingBytes(w.text), 0);
  const words = kept.map((w) => new Set(tokenize(w.text)));
  const counts = new Map<string, number>();
  for (const set of words) for (const word of set) counts.set(word, (counts.get(word) ?? 0) + 1);
  while (bytes > budgetBytes && kept.length > 0) {
    let victim = 0;
    let victimNew = Number.POSITIVE_INFINITY;
    for (let i = 0; i < kept.length; i++) {
      let unique = 0;
      if (byCoverage) for (const word of words[i] ?? []) if (counts.get(word) === 1) unique++;
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
  return kept;
}
