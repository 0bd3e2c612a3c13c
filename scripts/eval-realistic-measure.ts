/**
 * The measures of the realistic agent (scripts/eval-realistic-agent.ts), from its labels and what
 * the Worker learned (rows and every revision the reviews answered). In process, pure; the rules
 * under test are only read through what they produced, so these run against any learning rules.
 *
 * - example precision: a learned example is right when its tool truly served the run(s) its wording
 *   came from (one of the tools of a multi-tool run counts);
 * - Not-for precision: "Not for …; use B" on A is right when B truly served every request the line
 *   cites and A did not;
 * - contradictions: an example on A that A's kept Not-for lines send elsewhere, plus mirror-image
 *   lines (A: "use B", B: "use A" on a shared request) — as scripts/eval-quality.ts counts them;
 * - note precision and recall: a note is right when its tool has the planted mistake and the note
 *   names the planted argument (the planted error is the only repeated error that names it);
 *   recall over the tools with a planted mistake;
 * - re-ask precision and recall of the service's re-ask decision (the labelled log replayed through src/core/attribution.ts) on the labelled pairs;
 * - personal values leaked: any generated value, in any of its forms, found in anything learned.
 *
 * A learned text is matched to runs by its words with values out (digits, the generated values'
 * words, `<value>`), exactly first, else as a masked request (its words in the request's order,
 * at least half of them), else by the ToolE wording it contains (or that contains it).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { attributeRuns } from '../src/core/attribution.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from '../src/core/records.ts';
import { groupRuns, type Run } from '../src/core/serving.ts';
import { DEFAULT_SETTINGS } from '../src/schemas.ts';
import { namedTool } from '../src/core/proposals.ts';
import { type Labels, PLANTED_ARGUMENT, type RunLabel } from './eval-realistic-agent.ts';
import { normalised, type PersonalValue, wordsOf } from './eval-realistic-data.ts';

/** A tool row as `GET …/tools` answers it (the fields read here). */
export interface LearnedRow {
  name: string;
  description: string | null;
  examples: { text: string; source: string }[];
  notes: string[];
  avoid: string[];
  call_example: string | null;
  /** Routing memory's wordings (absent when empty): read by routing only, and under the privacy rule too. */
  memory?: string[];
}

/** A revision as a review answers it (the fields read here). */
export interface LearnedRevision {
  revision_id: string;
  tool: string;
  status: string;
  queries_added: string[];
  queries_withdrawn: string[];
  notes_added: string[];
  avoid_added: string[];
  call_example: string | null;
  displaced: { request: string; tool: string }[];
  queries_displaced: { text: string }[];
  refused: { kind: string; text: string; reason: string; detail?: string }[];
  evidence: { kind: string; how?: string | null; text: string; served_by: string | null }[];
}

export interface Learned {
  rows: LearnedRow[];
  revisions: LearnedRevision[];
  /** Refusals a review answered outside any revision. */
  refused: { tool?: string; kind: string; text?: string; reason: string; detail?: string }[];
}

/** One leak: a value (in one of its forms) found in a learned text. */
export interface Leak {
  value: string;
  kind: string;
  form: string;
  match: 'exact' | 'normalised';
  where: string;
  text: string;
}

export interface RealisticQuality {
  examples: {
    learned: number;
    right: number;
    precision: number;
    unmatched: number;
    wrong_by_tool: Record<string, number>;
    /** The wrong examples (at most 200): the tool, the text, what truly served the runs it came from, and their kinds. */
    wrong: { tool: string; text: string; served_by: string[]; runs: string[] }[];
    /**
     * Example requests the checks refused, by reason: how many, and how many of them the tool truly
     * served (what each rule cost). A wording refused in several rounds counts each time.
     */
    refused: Record<string, { refused: number; right: number }>;
    /** Learned examples by the kind of miss their wording was found as (`how` of its evidence): how many, how many right. */
    by_how: Record<string, { learned: number; right: number }>;
  };
  /**
   * Routing memory's wordings: right when a run with that wording truly served the tool that
   * remembers it (as for examples); `unmatched` matched no run (counted wrong).
   */
  memory: {
    wordings: number;
    right: number;
    precision: number;
    unmatched: number;
    wrong: { tool: string; text: string; served_by: string[] }[];
  };
  not_for: { lines: number; right: number; precision: number; wrong: { tool: string; line: string }[] };
  contradictions: number;
  notes: {
    notes: number;
    right: number;
    precision: number | null;
    planted_tools: number;
    planted_with_note: number;
    recall: number;
    wrong: { tool: string; note: string }[];
  };
  reask: {
    pairs: number;
    labelled_reasks: number;
    predicted_reasks: number;
    true_positives: number;
    precision: number;
    recall: number;
    by_kind: Record<string, { pairs: number; said_reask: number }>;
  };
  leaks: {
    values_used: number;
    values_leaked: number;
    findings: number;
    by_kind: Record<string, number>;
    by_place: Record<string, number>;
    list: Leak[];
  };
  traffic: {
    runs: number;
    conversations: number;
    by_kind: Record<string, number>;
    served_none: number;
    outcomes_false: number;
    calls: number;
    failed_calls: number;
  };
}

/**
 * Matches learned texts to the runs they came from, by their words with values out. A learned text
 * whose values were masked (`<value>`, or cut out by the privacy rule with nothing left in their
 * place) lost words the request had: it still comes from a run when its words appear in the
 * request's in the same order and keep at least half of them (`MASKED_MIN_SHARE`).
 */
export class RunIndex {
  private readonly exact = new Map<string, RunLabel[]>();
  private readonly byWording = new Map<string, RunLabel[]>();
  /** word → the runs whose request key holds it, with that key's words. */
  private readonly byWord = new Map<string, { run: RunLabel; words: string[] }[]>();

  constructor(
    runs: readonly RunLabel[],
    private readonly valueWords: ReadonlySet<string>,
  ) {
    for (const r of runs) {
      const k = this.key(r.request);
      this.exact.set(k, [...(this.exact.get(k) ?? []), r]);
      const words = k.split(' ').filter((w) => w !== '');
      for (const w of new Set(words)) {
        const list = this.byWord.get(w) ?? [];
        list.push({ run: r, words });
        this.byWord.set(w, list);
      }
      for (const w of r.wordings) {
        const wk = this.key(w.text);
        this.byWording.set(wk, [...(this.byWording.get(wk) ?? []), r]);
      }
    }
  }

  key(text: string): string {
    return wordsOf(text.replace(/<value>/g, ' '))
      .filter((w) => !/\d/.test(w) && !this.valueWords.has(w))
      .join(' ');
  }

  /**
   * The runs a learned text came from: same words with values out, else the runs whose request it
   * is with values masked (class comment), else the runs of a wording it holds.
   */
  runsOf(text: string): RunLabel[] {
    const k = this.key(text);
    const hit = this.exact.get(k);
    if (hit) return hit;
    if (k.length < 8) return [];
    const masked = this.maskedFrom(k.split(' '));
    if (masked.length > 0) return masked;
    const out: RunLabel[] = [];
    for (const [wk, runs] of this.byWording) {
      if (wk.length >= 8 && (` ${k} `.includes(` ${wk} `) || ` ${wk} `.includes(` ${k} `))) out.push(...runs);
    }
    return out;
  }

  /** The runs whose request keeps `words` in order and has at most twice as many (class comment). */
  private maskedFrom(words: readonly string[]): RunLabel[] {
    if (words.length < 3) return [];
    // Candidates: the runs holding the learned text's rarest word.
    let candidates: { run: RunLabel; words: string[] }[] | undefined;
    for (const w of words) {
      const list = this.byWord.get(w) ?? [];
      if (candidates === undefined || list.length < candidates.length) candidates = list;
    }
    return (candidates ?? [])
      .filter((c) => words.length >= c.words.length * MASKED_MIN_SHARE && inOrder(words, c.words))
      .map((c) => c.run);
  }
}

/** A masked learned text keeps at least this share of its request's words (values out on both sides). */
const MASKED_MIN_SHARE = 0.5;

/** True when every word of `part` appears in `whole`, in the same order. */
function inOrder(part: readonly string[], whole: readonly string[]): boolean {
  let i = 0;
  for (const w of whole) if (w === part[i]) i++;
  return i === part.length;
}

const pct = (right: number, n: number): number => (n === 0 ? 1 : right / n);

/** Every measure of one seed. */
export function measureRealistic(
  labels: Labels,
  learned: Learned,
  generated: readonly PersonalValue[],
  /** False skips the re-ask test (a few ms a pair): the per-round figures do not need it. */
  withReAsk = true,
): RealisticQuality {
  // The values the traffic used (a persona's values it never typed, passed or quoted are not counted).
  const usedIds = new Set(labels.runs.flatMap((r) => r.values));
  const values = generated.filter((v) => usedIds.has(v.id));
  const valueWords = new Set(values.flatMap((v) => [v.text, String(v.arg), ...v.forms].flatMap(wordsOf)));
  const index = new RunIndex(labels.runs, valueWords);
  const names = new Set(learned.rows.map((r) => r.name));

  // Examples.
  let learnedCount = 0;
  let right = 0;
  let unmatched = 0;
  const wrongByTool: Record<string, number> = {};
  const wrongExamples: RealisticQuality['examples']['wrong'] = [];
  const exampleKeys = new Map<string, Set<string>>();
  const howOf = new Map<string, string>();
  for (const r of learned.revisions)
    for (const e of r.evidence)
      if (e.kind === 'missed_request') howOf.set(`${r.tool}\n${index.key(e.text)}`, e.how ?? '?');
  const byHow: Record<string, { learned: number; right: number }> = {};
  for (const row of learned.rows) {
    const keys = new Set<string>();
    for (const e of row.examples.filter((x) => x.source === 'learned')) {
      learnedCount++;
      keys.add(index.key(e.text));
      const runs = index.runsOf(e.text);
      if (runs.length === 0) unmatched++;
      const kind = howOf.get(`${row.name}\n${index.key(e.text)}`) ?? '?';
      const how = byHow[kind] ?? { learned: 0, right: 0 };
      byHow[kind] = how;
      how.learned++;
      if (runs.some((r) => r.served_by.includes(row.name))) {
        right++;
        how.right++;
      } else {
        wrongByTool[row.name] = (wrongByTool[row.name] ?? 0) + 1;
        if (wrongExamples.length < 200)
          wrongExamples.push({
            tool: row.name,
            text: e.text,
            served_by: [...new Set(runs.flatMap((r) => r.served_by))],
            runs: [...new Set(runs.map((r) => r.kind))],
          });
      }
    }
    exampleKeys.set(row.name, keys);
  }

  // Routing memory.
  let remembered = 0;
  let rightMemory = 0;
  let unmatchedMemory = 0;
  const wrongMemory: RealisticQuality['memory']['wrong'] = [];
  for (const row of learned.rows) {
    for (const text of row.memory ?? []) {
      remembered++;
      const runs = index.runsOf(text);
      if (runs.length === 0) unmatchedMemory++;
      if (runs.some((r) => r.served_by.includes(row.name))) rightMemory++;
      else if (wrongMemory.length < 200)
        wrongMemory.push({ tool: row.name, text, served_by: [...new Set(runs.flatMap((r) => r.served_by))] });
    }
  }

  // Not-for lines and contradictions.
  let lines = 0;
  let rightLines = 0;
  let contradictions = 0;
  const wrongLines: { tool: string; line: string }[] = [];
  const sends = new Map<string, Set<string>>();
  for (const row of learned.rows) {
    const sentAway = new Set<string>();
    for (const line of row.avoid) {
      lines++;
      const target = namedTool(line, names);
      const rev = learned.revisions.find(
        (r) => r.tool === row.name && r.status === 'applied' && r.avoid_added.includes(line),
      );
      const cited = (rev?.evidence ?? []).filter((e) => e.kind === 'confused_request' && e.served_by === target);
      const ok =
        cited.length > 0 &&
        cited.every((e) =>
          index.runsOf(e.text).some((r) => r.served_by.includes(target) && !r.served_by.includes(row.name)),
        );
      if (ok) rightLines++;
      else wrongLines.push({ tool: row.name, line });
      const keys = cited.map((e) => index.key(e.text));
      for (const k of keys) sentAway.add(k);
      const pair = `${row.name}\u0000${target}`;
      sends.set(pair, new Set([...(sends.get(pair) ?? []), ...keys]));
    }
    for (const k of exampleKeys.get(row.name) ?? []) if (sentAway.has(k)) contradictions++;
  }
  for (const [pair, requests] of sends) {
    const [a, b] = pair.split('\u0000');
    if (a === undefined || b === undefined || a > b) continue;
    const back = sends.get(`${b}\u0000${a}`);
    if (back && [...requests].some((r) => back.has(r))) contradictions++;
  }

  // Usage notes.
  const planted = new Set(labels.planted);
  let notes = 0;
  let rightNotes = 0;
  const wrongNotes: { tool: string; note: string }[] = [];
  const withNote = new Set<string>();
  for (const row of learned.rows) {
    for (const n of row.notes) {
      notes++;
      if (planted.has(row.name) && n.includes(PLANTED_ARGUMENT)) {
        rightNotes++;
        withNote.add(row.name);
      } else wrongNotes.push({ tool: row.name, note: n });
    }
  }

  const reask = withReAsk ? measureReAsks(labels) : measureReAsks({ ...labels, pairs: [] });

  // Leaks.
  const leaks = findLeaks(values, learnedTexts(learned));
  const leaked = new Set(leaks.map((l) => l.value));
  const count = <T>(items: readonly T[], keyOf: (x: T) => string): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const x of items) out[keyOf(x)] = (out[keyOf(x)] ?? 0) + 1;
    return out;
  };

  const refusedExamples: Record<string, { refused: number; right: number }> = {};
  const refusals = [
    ...learned.revisions.flatMap((r) => r.refused.map((x) => ({ ...x, tool: r.tool }))),
    ...learned.refused,
  ];
  for (const x of refusals) {
    if (x.kind !== 'request' || x.text === undefined || x.tool === undefined) continue;
    const tool = x.tool;
    const count = refusedExamples[x.reason] ?? { refused: 0, right: 0 };
    count.refused++;
    if (index.runsOf(x.text).some((r) => r.served_by.includes(tool))) count.right++;
    refusedExamples[x.reason] = count;
  }

  const calls = labels.runs.flatMap((r) => r.calls);
  return {
    examples: {
      learned: learnedCount,
      right,
      precision: pct(right, learnedCount),
      unmatched,
      wrong_by_tool: Object.fromEntries(Object.entries(wrongByTool).sort((a, b) => b[1] - a[1])),
      wrong: wrongExamples,
      refused: refusedExamples,
      by_how: byHow,
    },
    memory: {
      wordings: remembered,
      right: rightMemory,
      precision: pct(rightMemory, remembered),
      unmatched: unmatchedMemory,
      wrong: wrongMemory,
    },
    not_for: { lines, right: rightLines, precision: pct(rightLines, lines), wrong: wrongLines },
    contradictions,
    notes: {
      notes,
      right: rightNotes,
      precision: notes === 0 ? null : rightNotes / notes,
      planted_tools: planted.size,
      planted_with_note: withNote.size,
      recall: pct(withNote.size, planted.size),
      wrong: wrongNotes,
    },
    reask: { ...reask, pairs: labels.pairs.length },
    leaks: {
      values_used: values.length,
      values_leaked: leaked.size,
      findings: leaks.length,
      by_kind: count([...new Map(leaks.map((l) => [l.value, l])).values()], (l) => l.kind),
      by_place: count(leaks, placeOf),
      list: leaks,
    },
    traffic: {
      runs: labels.runs.length,
      conversations: new Set(labels.runs.map((r) => r.conversation)).size,
      by_kind: count(labels.runs, (r) => r.kind),
      served_none: labels.runs.filter((r) => r.served_by.length === 0).length,
      outcomes_false: labels.runs.filter((r) => r.outcome === false).length,
      calls: calls.length,
      failed_calls: calls.filter((c) => !c.success).length,
    },
  };
}

/**
 * The labelled traffic as the service's log: one routed turn per run (offered ranks as routing
 * answered them), its calls (those reported without the turn id too, as the agent sent them), and
 * the outcomes it reported; grouped into runs by the service's own code (serving.ts).
 */
export function replayLog(labels: Pick<Labels, 'runs'>): { runs: Run[]; outcomes: OutcomeRecord[] } {
  const at = (n: number): string => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  const turns: TurnRecord[] = [];
  const calls: CallRecord[] = [];
  const outcomes: OutcomeRecord[] = [];
  let seq = 0;
  for (const r of [...labels.runs].sort((a, b) => a.run - b.run)) {
    const base = r.run * 100;
    turns.push({
      seq: ++seq,
      turn_id: r.turn_id,
      request: r.request,
      conversation_id: r.conversation,
      routed: true,
      offered: r.offered.map((name, i) => ({ name, rank: i + 1, score: 0 })),
      created_at: at(base),
    });
    r.calls.forEach((c, i) => {
      calls.push({
        seq: ++seq,
        call_id: c.id,
        tool: c.tool,
        arguments: c.arguments,
        success: c.success,
        error: c.error ?? null,
        request: c.request,
        turn_id: c.turn_id ?? null,
        conversation_id: c.conversation_id,
        at: at(base + i + 1),
      });
    });
    if (r.outcome !== null) outcomes.push({ turn_id: r.turn_id, ok: r.outcome, served_by: null, at: at(base + 99) });
  }
  return { runs: groupRuns(turns, calls), outcomes };
}

/**
 * Precision and recall of the re-ask decision as the service makes it, on the labelled pairs: the
 * labelled log is replayed through the attribution of src/core/attribution.ts (the code a review
 * runs), and a pair is said to be a re-ask when its first run is credited to the tool that finally
 * served the next one (`via: next_request` with that run). That is the re-ask test of reask.ts, the
 * passed-over rule, and a run nothing served, which any served next request re-asks. A pair
 * whose two runs have no turn in the replay (never, with the generator's ids) is left out.
 */
export function measureReAsks(labels: Pick<Labels, 'runs' | 'pairs'>): RealisticQuality['reask'] {
  const byRun = new Map(labels.runs.map((r) => [r.run, r]));
  const attribution = labels.pairs.length === 0 ? new Map() : attributeRuns(...replayArgs(labels));
  let tp = 0;
  let predicted = 0;
  let labelled = 0;
  const byKind: Record<string, { pairs: number; said_reask: number }> = {};
  for (const p of labels.pairs) {
    const first = byRun.get(p.first);
    const next = byRun.get(p.next);
    if (!first || !next) continue;
    const a = attribution.get(`turn:${first.turn_id}`);
    const said = a?.via === 'next_request' && a.next?.key === `turn:${next.turn_id}`;
    const truth = p.label === 'reask';
    if (said) predicted++;
    if (truth) labelled++;
    if (said && truth) tp++;
    const k = byKind[p.kind] ?? { pairs: 0, said_reask: 0 };
    byKind[p.kind] = k;
    k.pairs++;
    if (said) k.said_reask++;
  }
  return {
    pairs: labels.pairs.length,
    labelled_reasks: labelled,
    predicted_reasks: predicted,
    true_positives: tp,
    precision: pct(tp, predicted),
    recall: pct(tp, labelled),
    by_kind: byKind,
  };
}

function replayArgs(labels: Pick<Labels, 'runs'>): [Run[], OutcomeRecord[], { minConversations: number }] {
  const { runs, outcomes } = replayLog(labels);
  return [runs, outcomes, { minConversations: DEFAULT_SETTINGS.min_conversations }];
}

/** Where a leak was found, without the tool, revision and index: `row notes`, `revision evidence`, `review refused`. */
function placeOf(l: Leak): string {
  const source = l.where.split(' ')[0] === 'tool' ? 'row' : (l.where.split(' ')[0] ?? '');
  return `${source} ${l.where.replace(/^[^:]*: /, '').replace(/\[\d+\]/g, '')}`;
}

/** Every text something learned holds, with where it is (`tool T: notes[0]`, `revision R (T): evidence[3]`). */
export function learnedTexts(learned: Learned): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  const add = (where: string, texts: readonly (string | null | undefined)[]): void => {
    texts.forEach((t, i) => {
      if (t) out.push({ where: `${where}[${i}]`, text: t });
    });
  };
  for (const row of learned.rows) {
    const w = `tool ${row.name}: `;
    add(
      `${w}examples`,
      row.examples.filter((e) => e.source !== 'synthetic').map((e) => e.text),
    );
    add(`${w}notes`, row.notes);
    add(`${w}avoid`, row.avoid);
    add(`${w}call_example`, [row.call_example]);
    add(`${w}description`, [row.description]);
    add(`${w}memory`, row.memory ?? []);
  }
  for (const r of learned.revisions) {
    const w = `revision ${r.revision_id} (${r.tool}): `;
    add(`${w}queries_added`, r.queries_added);
    add(`${w}queries_withdrawn`, r.queries_withdrawn);
    add(`${w}notes_added`, r.notes_added);
    add(`${w}avoid_added`, r.avoid_added);
    add(`${w}call_example`, [r.call_example]);
    add(
      `${w}displaced`,
      r.displaced.map((d) => d.request),
    );
    add(
      `${w}queries_displaced`,
      r.queries_displaced.map((d) => d.text),
    );
    add(
      `${w}refused`,
      r.refused.map((x) => x.text),
    );
    add(
      `${w}refused detail`,
      r.refused.map((x) => x.detail),
    );
    add(
      `${w}evidence`,
      r.evidence.map((e) => e.text),
    );
  }
  learned.refused.forEach((x, i) => {
    add(`review refusal ${i} (${x.tool ?? '?'}): refused`, [x.text]);
    add(`review refusal ${i} (${x.tool ?? '?'}): refused detail`, [x.detail]);
  });
  return out;
}

/**
 * Finds every form of every value in the texts: exact (the form as written, case aside) or
 * normalised (lower-case, whitespace and punctuation removed on both sides). A normalised form of
 * six characters or more (four with a digit) is looked for in the normalised text where it starts
 * and ends on a boundary of the text as written (a space, punctuation, or a change between letters
 * and digits): "4471 XK" is the order 4471-XK, "brand that" is not the name Brandt. A shorter one
 * (a first name) only as a whole word.
 */
/** The normalised text, with the offsets in it where a run of the text as written starts and ends. */
function withBoundaries(text: string): { n: string; starts: Set<number>; ends: Set<number> } {
  const starts = new Set<number>();
  const ends = new Set<number>();
  let n = '';
  let last: 'letter' | 'digit' | undefined;
  for (const ch of text.toLowerCase()) {
    const kind = /\p{N}/u.test(ch) ? 'digit' : /\p{L}/u.test(ch) ? 'letter' : undefined;
    if (kind !== last) {
      if (last !== undefined) ends.add(n.length);
      if (kind !== undefined) starts.add(n.length);
    }
    if (kind !== undefined) n += ch;
    last = kind;
  }
  if (last !== undefined) ends.add(n.length);
  return { n, starts, ends };
}

export function findLeaks(values: readonly PersonalValue[], texts: readonly { where: string; text: string }[]): Leak[] {
  const long = new Map<string, { v: PersonalValue; form: string; n: string }[]>();
  const short = new Map<string, { v: PersonalValue; form: string; n: string }[]>();
  const seen = new Set<string>();
  // Two generated customers can share a name: one value per text.
  const unique = [...new Map(values.map((v) => [`${v.kind}\u0000${v.text}`, v])).values()];
  for (const v of unique) {
    for (const form of [v.text, String(v.arg), ...v.forms]) {
      const n = normalised(form);
      if (n.length < 3 || seen.has(`${v.id}\u0000${n}`)) continue;
      seen.add(`${v.id}\u0000${n}`);
      const entry = { v, form, n };
      const isLong = n.length >= 6 || (/\d/.test(n) && n.length >= 4);
      const key = isLong ? n.slice(0, 4) : n;
      const map = isLong ? long : short;
      map.set(key, [...(map.get(key) ?? []), entry]);
    }
  }
  const out: Leak[] = [];
  for (const { where, text } of texts) {
    const { n, starts, ends } = withBoundaries(text);
    const lower = text.toLowerCase();
    const found = new Set<string>();
    // One finding per value and text: exact when one of its forms is there as written (case aside).
    const report = (e: { v: PersonalValue; form: string }): void => {
      const key = `${e.v.kind}\u0000${e.v.text}`;
      if (found.has(key)) return;
      found.add(key);
      const exact = [e.v.text, String(e.v.arg), ...e.v.forms].find((f) => lower.includes(f.toLowerCase()));
      out.push({
        value: e.v.text,
        kind: e.v.kind,
        form: exact ?? e.form,
        match: exact === undefined ? 'normalised' : 'exact',
        where,
        text: text.length > 160 ? `${text.slice(0, 157)}…` : text,
      });
    };
    for (let i = 0; i + 4 <= n.length; i++) {
      if (!starts.has(i)) continue;
      for (const e of long.get(n.slice(i, i + 4)) ?? [])
        if (n.startsWith(e.n, i) && ends.has(i + e.n.length)) report(e);
    }
    for (const w of wordsOf(text)) for (const e of short.get(w) ?? []) report(e);
  }
  return out;
}

/**
 * `npx tsx scripts/eval-realistic-measure.ts --labels FILE`: the re-ask test's precision and recall
 * on the labelled pairs of a labels file the realistic eval wrote (`--labels DIR`), with the rules in
 * the tree now; in seconds, without the Worker.
 */
function labelsMain(): void {
  const { values } = parseArgs({ options: { labels: { type: 'string' } } });
  if (values.labels === undefined) {
    process.stderr.write(
      'usage: npx tsx scripts/eval-realistic-measure.ts --labels DIR/realistic-labels-seed<N>.json\n',
    );
    process.exit(2);
  }
  const labels = JSON.parse(readFileSync(values.labels, 'utf8')) as Labels;
  const r = measureReAsks(labels);
  const p = (x: number): string => `${(x * 100).toFixed(1)}%`;
  process.stdout.write(
    `re-ask test on ${r.pairs} labelled pairs (${r.labelled_reasks} re-asks): precision ${p(r.precision)} (${r.true_positives} of ${r.predicted_reasks} said re-ask), recall ${p(r.recall)}\n`,
  );
  for (const [kind, k] of Object.entries(r.by_kind).sort())
    process.stdout.write(
      `  ${kind.padEnd(16)} ${String(k.pairs).padStart(5)} pairs, ${String(k.said_reask).padStart(5)} said re-ask\n`,
    );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) labelsMain();
