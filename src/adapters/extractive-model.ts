/**
 * The extractive model (docs/configuration.md): the offline background model. It writes a review reply from the
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
  /** Fewest cites a proposed line rests on; ReviewInput carries no settings, so docs/configuration.md's default. */
  minCites?: number;
  /** Most example requests one reply proposes (docs/configuration.md `max_new_queries`). */
  maxRequests?: number;
  /** Most "Not for" lines one reply proposes (docs/configuration.md `max_avoid`). */
  maxAvoid?: number;
}

type Proposed = ProposalReply['notes'][number];

const NOTE_CHARS = 220;
const MAX_NOTES = 2;
const MAX_SHARED_WORDS = 4;
/**
 * Example requests are proposed up to twice the review's places (`max_new_queries`): it cannot see
 * what the checks will refuse (a wording its tool was not seen asked in, one the log credits to
 * another tool), and a refused wording should leave its place to the next candidate, not empty.
 * The checks keep the first that pass and refuse the rest as `cap_reached`.
 */
const SPARE_CANDIDATES = 2;

/**
 * Builds the extractive model: no network and no cost, deterministic (the same evidence always
 * gives the same reply), so reviews run offline and tests can pin its output.
 */
export function createExtractiveModel(options: ExtractiveOptions = {}): ChatModel {
  const opts: Required<ExtractiveOptions> = {
    minCites:
      options.minCites ??
      Math.min(DEFAULT_SETTINGS.min_failures, DEFAULT_SETTINGS.min_misses, DEFAULT_SETTINGS.min_confusions),
    maxRequests: options.maxRequests ?? DEFAULT_SETTINGS.max_new_queries,
    maxAvoid: options.maxAvoid ?? DEFAULT_SETTINGS.max_avoid,
  };
  return {
    id: 'extractive',
    // In-process and synchronous in effect: no network, no retries.
    longestCallMs: 1_000,
    complete(task: ModelTask): Promise<string | null> {
      if (task.kind !== 'review') return Promise.resolve(null);
      return Promise.resolve(JSON.stringify(writeReview(task.input, opts)));
    },
  };
}

/**
 * The reply the extractive model writes for one tool's evidence. The agent's thresholds, when the
 * task carries them, decide how much evidence a line needs (docs/configuration.md); else the options do.
 */
export function writeReview(input: ReviewInput, opts: Required<ExtractiveOptions>): ProposalReply {
  const t = input.thresholds;
  return {
    notes: usageNotes(input.failed_calls, t?.min_failures ?? opts.minCites),
    requests: exampleRequests(
      input,
      t?.min_misses ?? opts.minCites,
      SPARE_CANDIDATES * (t?.max_new_queries ?? opts.maxRequests),
    ),
    avoid: notForLines(input.confused_requests, input.other_tools, {
      ...opts,
      minCites: t?.min_confusions ?? opts.minCites,
      maxAvoid: t?.max_avoid ?? opts.maxAvoid,
    }),
  };
}

/**
 * One note per error that repeats (digits masked, case and punctuation aside), most frequent first.
 * Only failures that were the caller's fault count: an outage or a business outcome (`why_no_note`)
 * says nothing about how to call the tool.
 */
function usageNotes(failed: ReviewInput['failed_calls'], minCites: number): Proposed[] {
  const groups = new Map<string, ReviewInput['failed_calls']>();
  for (const f of failed) {
    if (f.why_no_note !== undefined) continue;
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
  if (arg && /\b(too (large|long|big|many)|exceeds?|maximum|limit)\b/i.test(error))
    return `keep ${arg} within the limit`;
  if (arg && /\b(invalid|malformed|format|expected|must)\b/i.test(error)) return `check the format of ${arg}`;
  return null;
}

/**
 * Example requests from the missed wordings. A wording cites every missed request it shares a word
 * with (itself too), and is a candidate when that makes at least `minCites`: a wording that shares
 * no word with enough others is not proposed, it may be a new task. Candidates are taken greedily
 * by what they add to the tool's text (its docstring, the examples it keeps, those chosen before):
 * each word not yet there counts once per OTHER missed wording that has it, so the first examples
 * carry the words the misses have in common, and a tool's few places (`max_new_queries` a review,
 * `max_queries` in all) go to wordings that bring new words rather than repeat known ones; ties
 * keep the log's order. A wording that says the same as a kept example (a review re-reads calls an
 * earlier one learned from) or as one chosen before is not proposed, but still counts as evidence.
 * On a validation carve of the ToolE training split, keeping 12 of each tool's missed wordings this
 * way routes R@5 85.2% / R@1 61.4%, against 84.0% / 59.5% for the first 12 (README "Evaluation").
 */
function exampleRequests(input: ReviewInput, minCites: number, max: number): Proposed[] {
  const kept = input.kept_examples ?? [];
  const items = input.missed_requests
    .map((m) => ({
      id: m.id,
      text: oneLine(withoutPlaceholders(m.text)),
      words: contentWords(withoutPlaceholders(m.text)),
    }))
    .filter((i) => i.text !== '' && i.text.length <= LIMITS.exampleChars);
  const others = new Map<string, number>();
  for (const item of items) for (const w of item.words) others.set(w, (others.get(w) ?? 0) + 1);
  const candidates = items
    .map((item) => ({ item, cites: items.filter((o) => [...o.words].some((w) => item.words.has(w))).map((o) => o.id) }))
    .filter((c) => c.cites.length >= minCites && !kept.some((k) => saysTheSame(k, c.item.text)));
  const covered = contentWords([input.docstring, ...kept].join('\n'));
  const out: Proposed[] = [];
  while (out.length < max) {
    const [chosen] = candidates.splice(
      mostNewWords(
        candidates.map((c) => c.item.words),
        covered,
        others,
      ),
      1,
    );
    if (!chosen) return out;
    if (out.some((o) => saysTheSame(o.text, chosen.item.text))) continue;
    out.push({ text: chosen.item.text, cites: chosen.cites });
    for (const w of chosen.item.words) covered.add(w);
  }
  return out;
}

/** Index of the word set whose words not in `covered` weigh most (weight = others having it); first on ties. */
function mostNewWords(
  sets: readonly ReadonlySet<string>[],
  covered: ReadonlySet<string>,
  others: ReadonlyMap<string, number>,
): number {
  let best = 0;
  let bestGain = -1;
  sets.forEach((words, at) => {
    let gain = 0;
    for (const w of words) if (!covered.has(w)) gain += (others.get(w) ?? 1) - 1;
    if (gain > bestGain) [best, bestGain] = [at, gain];
  });
  return best;
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
