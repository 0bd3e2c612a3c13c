/**
 * The learning evaluation's results (bench/eval-learn.json) and the table printed on stdout.
 */
import type { CurvePoint, Precision, Recall } from './eval-common.ts';

/** What one round of traffic and reviews did (counts from the reviews' answers). */
export interface RoundFigures {
  round: number;
  /** Training wordings routed this round (one turn and one call each). */
  routed: number;
  /** Share of them routing offered the right tool (top 5), before this round's reviews. */
  offered_share: number;
  /** Review requests (passes) and the model calls they made. */
  passes: number;
  model_calls: number;
  revisions: number;
  applied: number;
  /** Example requests the applied revisions carried: kept + withdrawn + refused at apply. */
  examples_proposed: number;
  /** Example texts proposed for the first time this round (the stop rule: none → converged). */
  examples_new: number;
  /** Examples that stayed on the rows. */
  examples_kept: number;
  /** Examples the displacement re-check took back (docs/learning.md `queries_withdrawn`). */
  examples_withdrawn: number;
  revisions_withdrawn: number;
  /** Synthetic examples that gave way to learned ones (none here: ToolE tools are not augmented). */
  synthetic_displaced: number;
  notes_added: number;
  avoid_added: number;
  /** Refused example requests by reason, at review (checks) and at apply (`no_room`, `already_kept`). */
  refused: Record<string, number>;
  /** Offers `/route` answered for the most offered tools so far, and how many D1 holds (equal = no turn lost). */
  log_check: { answered: number; stored: number };
  seconds: number;
  /** Review requests sent again (eval-http.ts `review`): 0 in a run whose figures are reproducible. */
  review_retries: number;
}

/** bench/eval-learn.json. */
export interface LearnReport {
  generated_at: string;
  split: 'held-out' | 'validation';
  tools: number;
  setup: {
    embedder: string;
    model: string;
    /** The agent model (scripts/eval-agent.ts) and distinct training wordings per tool (null: all). */
    agent: 'perfect' | 'fallible';
    wordings: number | null;
    /** True when every learning setting is docs/configuration.md's default (max_tools aside: a throughput setting). */
    spec_defaults: boolean;
    /** Settings put on the learning agent (`PUT …/config`); empty = docs/configuration.md defaults. */
    agent_config: Record<string, number | boolean>;
    review_config: Record<string, number | boolean>;
    per_round: number;
    /** Distinct training wordings the rounds draw from, and the turns routed in all. */
    traffic_wordings: number;
    traffic_turns: number;
    measured_wordings: number;
  };
  /** cold and learned through `/route`; bm25, minisearch, minisearch+tok in process on the same wordings. */
  recall: Record<string, Recall>;
  rounds: RoundFigures[];
  /** Held-out R@5 on a seeded sample and precision after each round (round 0: before any). */
  curve: CurvePoint[];
  quality: Precision & {
    example_calls: number;
    model_calls: number;
    revisions_applied: number;
    revisions_withdrawn: number;
  };
  stopped: 'no_new_proposals' | 'max_rounds' | 'passes';
  final_examples: { learned: number; tools_with_learned: number; tools_at_cap: number };
  target: { learned_at5: number; met: boolean; cold_vs_bm25: boolean; learned_vs_bm25_wordings: boolean };
  wall_seconds: number;
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** Sum of one count over all rounds. */
export function total(
  report: LearnReport,
  key:
    | 'examples_kept'
    | 'examples_withdrawn'
    | 'examples_proposed'
    | 'model_calls'
    | 'revisions'
    | 'notes_added'
    | 'avoid_added'
    | 'revisions_withdrawn',
): number {
  return report.rounds.reduce((n, r) => n + r[key], 0);
}

/** The stdout table: recall, then one line per round, then the totals. */
export function formatLearnReport(r: LearnReport): string {
  const rows: [string, Recall | undefined, string][] = [
    ['whetstone, cold', r.recall.cold, '/route, descriptions only'],
    ['whetstone, learned', r.recall.learned, `/route after ${r.rounds.length} rounds`],
    ['bm25 (ours)', r.recall.bm25, 'in process, descriptions'],
    ['minisearch', r.recall.minisearch, 'out of the box'],
    ['minisearch+tok', r.recall['minisearch+tok'], 'with our tokenizer'],
    ['bm25 + wordings', r.recall['bm25+wordings'], 'in process, descriptions + the training wordings'],
    ['bm25 + asked', r.recall['bm25+asked'], 'the same, the wordings the traffic asked'],
    ['bm25 + asked twice', r.recall['bm25+asked-twice'], 'the same, the wordings asked in two conversations'],
  ];
  const q = r.quality;
  const lines = [
    `ToolE learning, ${r.setup.agent} agent, ${r.setup.wordings ?? 'all'} wordings per tool, ${r.tools} tools, measured on ${r.setup.measured_wordings} ${r.split} wordings; traffic ${r.setup.traffic_turns} turns drawn from ${r.setup.traffic_wordings} training wordings, ${r.setup.per_round} per tool a round`,
    `settings: ${r.setup.spec_defaults ? 'docs/configuration.md defaults' : `NOT the defaults: ${JSON.stringify(r.setup.agent_config)}`}; each review ${JSON.stringify(r.setup.review_config)}, auto_apply; ${r.setup.embedder}, ${r.setup.model}`,
    '',
    `${'ranker'.padEnd(22)}${'R@1'.padStart(8)}${'R@5'.padStart(8)}  note`,
    ...rows.map(
      ([label, x, note]) =>
        `${label.padEnd(22)}${pct(x?.at1 ?? 0).padStart(8)}${pct(x?.at5 ?? 0).padStart(8)}  ${note}`,
    ),
    '',
    `${'round'.padEnd(6)}${'routed'.padStart(7)}${'offered'.padStart(9)}${'calls'.padStart(7)}${'revs'.padStart(6)}${'new'.padStart(6)}${'kept'.padStart(6)}${'withdrawn'.padStart(11)}${'notes'.padStart(7)}${'not-for'.padStart(9)}${'s'.padStart(6)}  refused`,
    ...r.rounds.map(
      (x) =>
        `${String(x.round).padEnd(6)}${String(x.routed).padStart(7)}${pct(x.offered_share).padStart(9)}${String(x.model_calls).padStart(7)}${String(x.revisions).padStart(6)}${String(x.examples_new).padStart(6)}` +
        `${String(x.examples_kept).padStart(6)}${String(x.examples_withdrawn).padStart(11)}${String(x.notes_added).padStart(7)}${String(x.avoid_added).padStart(9)}` +
        `${x.seconds.toFixed(0).padStart(6)}  ${Object.entries(x.refused)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    ),
    '',
    `stopped: ${r.stopped}; ${total(r, 'model_calls')} model calls, ${r.rounds.reduce((n, x) => n + x.applied, 0)} revisions applied; ` +
      `examples kept ${total(r, 'examples_kept')}, withdrawn by displacement ${total(r, 'examples_withdrawn')} (${total(r, 'revisions_withdrawn')} revisions); ` +
      `rows hold ${r.final_examples.learned} learned examples on ${r.final_examples.tools_with_learned} tools (${r.final_examples.tools_at_cap} at max_queries)`,
    `precision: examples ${pct(q.examples)} (${q.learned_examples}, ${q.unlabelled_examples} not a ToolE wording), Not-for ${pct(q.not_for)} (${q.not_for_lines} lines), routing memory ${pct(q.memory)} (${q.memory_wordings} wordings), contradictions ${q.contradictions}, note recall ${r.setup.agent === 'perfect' ? 'n/a (the perfect agent makes no mistake)' : `${pct(q.note_recall)} (${q.planted_tools} tools with a planted mistake)`}; ${q.example_calls} example calls, ${q.revisions_applied} revisions applied, ${q.revisions_withdrawn} with examples withdrawn`,
    `routing memory's wrong wordings (tool: wording [ToolE's labels]): ${
      (q.memory_wrong ?? [])
        .slice(0, 8)
        .map((m) => `${m.tool}: "${m.text}" [${m.labels.join(', ') || 'no ToolE wording'}]`)
        .join(' | ') || 'none'
    }`,
    `curve (R@5 on a held-out sample): ${r.curve.map((p) => `${p.round}: ${pct(p.at5)}`).join(', ')}`,
    `log check: ${r.rounds.every((x) => x.log_check.stored >= x.log_check.answered) ? 'every checked turn /route answered is in the log' : 'TURNS WERE LOST (see log_check per round)'}`,
    `target: learned R@5 ≥ ${pct(r.target.learned_at5)}: ${r.target.met ? 'MET' : 'NOT MET'}; cold R@5 ≥ bm25 R@5: ${r.target.cold_vs_bm25 ? 'yes' : 'no'}; learned R@5 ≥ bm25 + wordings R@5: ${r.target.learned_vs_bm25_wordings ? 'yes' : 'no'}; wall time ${r.wall_seconds.toFixed(0)} s`,
  ];
  return lines.join('\n');
}
