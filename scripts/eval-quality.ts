/**
 * How right the learned lines are, against ToolE's labels (`npm run eval`):
 * - example precision: the share of learned examples on the rows whose wording ToolE labels with
 *   the tool they sit on;
 * - Not-for precision: the share of "Not for" lines on the rows whose named tool is the label of
 *   every request the line rests on (its revision's evidence);
 * - contradictions: a request that is a learned example on T and evidence of one of T's kept
 *   "Not for" lines, plus mirror-image pairs (A: "use B" and B: "use A" on a shared request);
 * - note recall: the share of tools with a planted argument mistake whose notes name that argument;
 * - memory precision: the share of routing memory's wordings labelled with the tool that keeps them.
 * Also the learning curve as an SVG.
 */
import type { BenchWorker } from './bench/worker.ts';
import type { EvalQuery } from './eval-data.ts';
import { hasMistake, PLANTED_ARGUMENT } from './eval-agent.ts';
import { api, type RevisionSummary } from './eval-http.ts';
import type { CurvePoint, Precision } from './eval-common.ts';
import type { LearnReport } from './eval-learn-report.ts';
import { namedTool } from '../src/core/proposals.ts';

const key = (text: string): string => text.trim().toLowerCase().replace(/\s+/g, ' ');

/** Wording → the tools ToolE labels it with. */
export function goldOf(queries: readonly EvalQuery[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const q of queries) out.set(key(q.text), (out.get(key(q.text)) ?? new Set()).add(q.tool));
  return out;
}

interface Row {
  name: string;
  examples: { text: string; source: string }[];
  notes: string[];
  avoid: string[];
  /** Routing memory's wordings (absent when empty). */
  memory?: string[];
}

/**
 * A masked text keeps at least this share of its wording's words: the privacy rule masks values and
 * rare words, not the request (the realistic agent's measure uses the same share).
 */
const MASKED_MIN_SHARE = 0.5;

const words = (text: string): string[] =>
  text
    .replace(/<value>/g, ' ')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');

/**
 * The labels of a learned text. Most are a ToolE wording as it was typed; one whose personal values
 * the privacy rule masked (or dropped, in an example) is the wording whose words it keeps in order,
 * at least MASKED_MIN_SHARE of them: the nearest such (fewest words beyond), every one of those
 * equally near counting. A fixed allowance of four masked words left a request naming three
 * domains or two cities unmatched, and counted wrong.
 */
export function labeller(
  gold: ReadonlyMap<string, ReadonlySet<string>>,
): (text: string) => ReadonlySet<string> | undefined {
  const entries = [...gold].map(([wording, labels]) => ({ words: words(wording), labels }));
  const memo = new Map<string, ReadonlySet<string> | undefined>();
  return (text) => {
    const exact = gold.get(key(text));
    if (exact) return exact;
    if (memo.has(text)) return memo.get(text);
    const kept = words(text);
    let out: Set<string> | undefined;
    let nearest = Number.POSITIVE_INFINITY;
    if (kept.length > 0) {
      for (const e of entries) {
        const beyond = e.words.length - kept.length;
        if (beyond < 0 || beyond > nearest || kept.length < e.words.length * MASKED_MIN_SHARE) continue;
        let i = 0;
        for (const w of e.words) if (w === kept[i]) i++;
        if (i !== kept.length) continue;
        if (beyond < nearest) out = undefined;
        nearest = beyond;
        out = new Set([...(out ?? []), ...e.labels]);
      }
    }
    memo.set(text, out);
    return out;
  };
}

/** The precision figures of the agent's rows now, from the revisions applied so far. */
export async function learnedPrecision(
  w: BenchWorker,
  agent: string,
  revisions: readonly RevisionSummary[],
  gold: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<Precision> {
  const { tools } = await api<{ tools: Row[] }>(w, 'GET', `/v1/agents/${agent}/tools`);
  const names = new Set(tools.map((t) => t.name));
  let examples = 0;
  let rightExamples = 0;
  let unlabelled = 0;
  let lines = 0;
  let rightLines = 0;
  let contradictions = 0;
  let remembered = 0;
  let rightMemory = 0;
  const wrongMemory: Precision['memory_wrong'] = [];
  const sends = new Map<string, Set<string>>();
  const labelsOf = labeller(gold);
  for (const row of tools) {
    for (const text of row.memory ?? []) {
      remembered++;
      const labels = labelsOf(text);
      if (labels?.has(row.name)) rightMemory++;
      else if (wrongMemory.length < 50) wrongMemory.push({ tool: row.name, text, labels: [...(labels ?? [])] });
    }
    const learned = row.examples.filter((e) => e.source === 'learned');
    examples += learned.length;
    for (const e of learned) {
      const labels = labelsOf(e.text);
      if (!labels) unlabelled++;
      else if (labels.has(row.name)) rightExamples++;
    }
    const sentAway = new Set<string>();
    for (const line of row.avoid) {
      lines++;
      const target = namedTool(line, names);
      const rev = revisions.find((r) => r.tool === row.name && r.status === 'applied' && r.avoid_added.includes(line));
      const requests = (rev?.evidence ?? [])
        .filter((e) => e.kind === 'confused_request' && e.served_by === target)
        .map((e) => key(e.text));
      if (requests.length > 0 && requests.every((r) => labelsOf(r)?.has(target))) rightLines++;
      for (const r of requests) sentAway.add(r);
      const pair = `${row.name}\u0000${target}`;
      sends.set(pair, new Set([...(sends.get(pair) ?? []), ...requests]));
    }
    contradictions += learned.filter((e) => sentAway.has(key(e.text))).length;
  }
  for (const [pair, requests] of sends) {
    const [a, b] = pair.split('\u0000');
    if (a === undefined || b === undefined || a > b) continue;
    const back = sends.get(`${b}\u0000${a}`);
    if (back && [...requests].some((r) => back.has(r))) contradictions++;
  }
  const planted = tools.filter((t) => hasMistake(t.name));
  const named = planted.filter((t) => t.notes.some((n) => n.includes(PLANTED_ARGUMENT)));
  return {
    examples: examples === 0 ? 1 : rightExamples / examples,
    not_for: lines === 0 ? 1 : rightLines / lines,
    contradictions,
    note_recall: planted.length === 0 ? 1 : named.length / planted.length,
    learned_examples: examples,
    not_for_lines: lines,
    planted_tools: planted.length,
    unlabelled_examples: unlabelled,
    memory: remembered === 0 ? 1 : rightMemory / remembered,
    memory_wordings: remembered,
    memory_wrong: wrongMemory,
  };
}

/** The learning curve as a small self-contained SVG: R@5, example and Not-for precision per round. */
export function learningCurveSvg(report: LearnReport): string {
  const width = 640;
  const height = 320;
  const pad = { left: 48, right: 150, top: 28, bottom: 40 };
  const points = report.curve;
  const rounds = Math.max(1, points.length - 1);
  const x = (round: number) => pad.left + (round / rounds) * (width - pad.left - pad.right);
  const lo = 0.5;
  const y = (v: number) => pad.top + (1 - (Math.max(lo, v) - lo) / (1 - lo)) * (height - pad.top - pad.bottom);
  const series: [string, string, (p: CurvePoint) => number][] = [
    ['held-out R@5', '#1f6feb', (p) => p.at5],
    ['example precision', '#2da44e', (p) => p.examples],
    ['Not-for precision', '#bf8700', (p) => p.not_for],
  ];
  const grid = [0.5, 0.6, 0.7, 0.8, 0.9, 1].map(
    (v) =>
      `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(1)}</text>`,
  );
  const ticks = points.map(
    (p) => `<text x="${x(p.round)}" y="${height - pad.bottom + 16}" text-anchor="middle">${p.round}</text>`,
  );
  const lines = series.map(([label, color, value], i) => {
    const path = points.map((p) => `${x(p.round).toFixed(1)},${y(value(p)).toFixed(1)}`).join(' ');
    const last = points.at(-1);
    const end = last ? ` ${(100 * value(last)).toFixed(1)}%` : '';
    return (
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${path}"/>` +
      `<text x="${width - pad.right + 8}" y="${pad.top + 16 + i * 18}" fill="${color}">${label}${end}</text>`
    );
  });
  const title = `Learning on ToolE: ${report.setup.agent} agent, ${report.setup.wordings ?? 'all'} wordings per tool (held-out)`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    '<rect width="100%" height="100%" fill="#fff"/>',
    `<text x="${pad.left}" y="16" font-weight="bold">${title}</text>`,
    ...grid,
    ...ticks,
    `<text x="${(pad.left + width - pad.right) / 2}" y="${height - 8}" text-anchor="middle">round</text>`,
    ...lines,
    '</svg>',
    '',
  ].join('\n');
}
