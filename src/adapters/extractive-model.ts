/**
 * The extractive model (SPEC §2): the offline background model. It writes a review reply from the
 * evidence itself — the missed wordings, the repeated error, the words the confused requests
 * share — as the JSON a real model would send, and that reply goes through exactly the same
 * parsing and checks (proposals.ts). Augmentation with it returns no reply, so tools register with
 * their plain docstring.
 */
import type { ChatModel, ModelTask, ReviewInput } from '../core/ports.ts';
import { saysTheSame } from '../core/displacement.ts';
import type { ProposalReply } from '../core/proposals.ts';
import { withoutPlaceholders } from '../core/scrub.ts';
import { contentWords, isStopword, normalize, stem } from '../core/text.ts';
import { DEFAULT_SETTINGS, LIMITS } from '../schemas.ts';

export interface ExtractiveOptions {
  /** Fewest cites a proposed line rests on; ReviewInput carries no settings, so SPEC §6's default. */
  minCites?: number;
  /** Most example requests one reply proposes (SPEC §6 `max_new_queries`). */
  maxRequests?: number;
  /** Most "Not for" lines one reply proposes (SPEC §6 `max_avoid`). */
  maxAvoid?: number;
}

type Proposed = ProposalReply['notes'][number];

const NOTE_CHARS = 220;
const MAX_NOTES = 2;
const MAX_SHARED_WORDS = 4;

/**
 * Builds the extractive model: no network and no cost, deterministic (the same evidence always
 * gives the same reply), so reviews run offline and tests can pin its output.
 */
export function createExtractiveModel(options: ExtractiveOptions = {}): ChatModel {
  const opts: Required<ExtractiveOptions> = {
    minCites: options.minCites ?? Math.min(DEFAULT_SETTINGS.min_failures, DEFAULT_SETTINGS.min_misses, DEFAULT_SETTINGS.min_confusions),
    maxRequests: options.maxRequests ?? DEFAULT_SETTINGS.max_new_queries,
    maxAvoid: options.maxAvoid ?? DEFAULT_SETTINGS.max_avoid,
  };
  return {
    id: 'extractive',
    complete(task: ModelTask): Promise<string | null> {
      if (task.kind !== 'review') return Promise.resolve(null);
      return Promise.resolve(JSON.stringify(writeReview(task.input, opts)));
    },
  };
}

/**
 * The reply the extractive model writes for one tool's evidence. The agent's thresholds, when the
 * task carries them, decide how much evidence a line needs (SPEC §6); else the options do.
 */
export function writeReview(input: ReviewInput, opts: Required<ExtractiveOptions>): ProposalReply {
  const t = input.thresholds;
  return {
    notes: usageNotes(input.failed_calls, t?.min_failures ?? opts.minCites),
    requests: exampleRequests(input.missed_requests, input.kept_examples ?? [], t?.min_misses ?? opts.minCites, t?.max_new_queries ?? opts.maxRequests),
    avoid: notForLines(input.confused_requests, input.other_tools, {
      ...opts,
      minCites: t?.min_confusions ?? opts.minCites,
      maxAvoid: t?.max_avoid ?? opts.maxAvoid,
    }),
  };
}

/** One note per error that repeats (digits masked, case and punctuation aside), most frequent first. */
function usageNotes(failed: ReviewInput['failed_calls'], minCites: number): Proposed[] {
  const groups = new Map<string, ReviewInput['failed_calls']>();
  for (const f of failed) {
    const key = normalize(f.error.replace(/\d/g, '#'));
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  return [...groups.values()]
    .filter((g) => g.length >= minCites)
    .sort((a, b) => b.length - a.length)
    .slice(0, MAX_NOTES)
    .flatMap((g) => (g[0] ? [{ text: noteText(g[0].error, g[0].arguments), cites: g.map((f) => f.id) }] : []));
}

/** `Calls fail with "<error, shortened>"; <fix hint>.` in at most 220 characters, one line. */
function noteText(error: string, argumentNames: readonly string[]): string {
  const hint = fixHint(error, argumentNames);
  const tail = hint ? `"; ${hint}.` : '".';
  const head = 'Calls fail with "';
  return head + shorten(oneLine(error), NOTE_CHARS - head.length - tail.length) + tail;
}

/**
 * A fix the error itself suggests, for the argument it names; null when none is derivable. Only
 * what the error says is used: a missing argument, a format it shows, a prefix, a limit, a format.
 */
function fixHint(error: string, argumentNames: readonly string[]): string | null {
  const arg = argumentNames.find((a) => new RegExp(`(^|[^\\w])${escapeRegex(a)}([^\\w]|$)`, 'i').test(error));
  const format = /(?<![\w#])[A-Za-z]{0,4}[-_./:]?#{2,}[#\-_./:]*/.exec(error)?.[0];
  if (/\bprefix|\bstarts? with\b/i.test(error)) return arg ? `pass ${arg} with its prefix` : null;
  if (arg && /\b(missing|required)\b/i.test(error)) return `always pass ${arg}`;
  if (arg && format) return `pass ${arg} as ${format}`;
  if (arg && /\b(too (large|long|big|many)|exceeds?|maximum|limit)\b/i.test(error)) return `keep ${arg} within the limit`;
  if (arg && /\b(invalid|malformed|format|expected|must)\b/i.test(error)) return `check the format of ${arg}`;
  if (/\b(time[ds]? ?out|rate.?limit|unavailable|429|503)\b/i.test(error)) return 'the failure is transient, so a retry can work';
  return null;
}

/**
 * Example requests from the missed wordings: the wordings are grouped by a word they share (the
 * word most uncovered wordings share first), and each wording of a group of at least `minCites`
 * becomes an example citing its whole group, so it shares that word with every request it cites.
 * A wording that shares no word with enough others is not proposed: it may be a new task. A wording
 * that says the same as an example the tool keeps is not proposed again (it would be refused as
 * `already_kept` and take one of the `max` places; a review re-reads calls an earlier one learned
 * from), but it still counts as evidence for the others of its group.
 */
function exampleRequests(missed: ReviewInput['missed_requests'], kept: readonly string[], minCites: number, max: number): Proposed[] {
  const items = missed
    .map((m) => ({ id: m.id, text: oneLine(withoutPlaceholders(m.text)), words: contentWords(withoutPlaceholders(m.text)) }))
    .filter((i) => i.text !== '' && i.text.length <= LIMITS.exampleChars);
  const out: Proposed[] = [];
  const proposed = new Set<string>();
  for (const group of wordGroups(items, minCites)) {
    const cites = group.map((i) => i.id);
    for (const item of group) {
      const key = normalize(item.text);
      if (out.length >= max || proposed.has(key) || kept.some((k) => saysTheSame(k, item.text))) continue;
      proposed.add(key);
      out.push({ text: item.text, cites });
    }
  }
  return out;
}

interface Worded {
  id: string;
  text: string;
  words: Set<string>;
}

/** Greedy cover: repeatedly the word shared by most not-yet-covered items, while it has `min` items. */
function wordGroups<T extends Worded>(items: readonly T[], min: number): T[][] {
  const groups: T[][] = [];
  const covered = new Set<string>();
  for (;;) {
    let best: { word: string; fresh: number; group: T[] } | null = null;
    for (const word of [...new Set(items.flatMap((i) => [...i.words]))].sort()) {
      const group = items.filter((i) => i.words.has(word));
      const fresh = group.filter((i) => !covered.has(i.id)).length;
      if (group.length >= min && fresh > 0 && (best === null || fresh > best.fresh)) best = { word, fresh, group };
    }
    if (best === null) return groups;
    groups.push(best.group);
    for (const i of best.group) covered.add(i.id);
  }
}

/**
 * "Not for" lines: the confused requests grouped by the tool that served them, then by a word they
 * share; the line names the words every request of the group shares, in the first one's wording.
 */
function notForLines(
  confused: ReviewInput['confused_requests'],
  otherTools: readonly string[],
  opts: Required<ExtractiveOptions>,
): Proposed[] {
  const byTool = new Map<string, Worded[]>();
  for (const c of confused) {
    if (!otherTools.includes(c.served_by)) continue;
    const item = { id: c.id, text: withoutPlaceholders(c.text), words: contentWords(withoutPlaceholders(c.text)) };
    byTool.set(c.served_by, [...(byTool.get(c.served_by) ?? []), item]);
  }
  const out: Proposed[] = [];
  for (const [tool, items] of [...byTool].sort((a, b) => b[1].length - a[1].length)) {
    const group = wordGroups(items, opts.minCites)[0];
    if (!group || out.length >= opts.maxAvoid) continue;
    const phrase = sharedPhrase(group);
    const kind = /^requests?$/.test(phrase.split(' ').at(-1) ?? '') ? phrase : `${phrase} requests`;
    out.push({ text: `Not for ${kind}; use ${tool}.`, cites: group.map((i) => i.id) });
  }
  return out;
}

/** The words all items share, as the first item spells them, in its order (at most four). */
function sharedPhrase(group: readonly Worded[]): string {
  const [first, ...rest] = group;
  if (!first) return '';
  const shared = [...first.words].filter((w) => rest.every((i) => i.words.has(w)));
  const seen = new Set<string>();
  const surface: string[] = [];
  for (const word of normalize(first.text).split(' ')) {
    const s = stem(word);
    if (isStopword(word) || !shared.includes(s) || seen.has(s) || surface.length >= MAX_SHARED_WORDS) continue;
    seen.add(s);
    surface.push(word);
  }
  return surface.join(' ');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Cuts at a word boundary to at most `max` characters, marking the cut with an ellipsis. */
function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}
