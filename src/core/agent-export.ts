/**
 * The agent export format (docs/api.md "Export and import"): NDJSON, one JSON object per line, each
 * with a `type`. The first line is the agent (its settings); then tools with their learned state,
 * tool versions, revisions, reviews, pins, and the log (trace tool definitions, turns, calls,
 * outcomes). Keys and vectors are never exported: keys are secrets of one deployment, and vectors
 * are rebuilt by the importing deployment's embedder.
 *
 * Pure: parsing and checking a whole import before anything is written, and the renaming of
 * revision and review ids another agent of the importing deployment already uses.
 */
import { z } from '@hono/zod-openapi';
import { Example, Revision, RoutedTool, SettingsPatch, ToolName } from '../schemas.ts';

/** Bumped when a line changes shape; an import of another format is refused. */
export const EXPORT_FORMAT = 1;

const Json = z.record(z.string(), z.unknown());
const Time = z.string().min(1).max(64);
const Text = z.string().max(100_000);

const AgentLine = z
  .object({
    type: z.literal('agent'),
    format: z.literal(EXPORT_FORMAT),
    agent: z.string(),
    created_at: Time,
    settings: SettingsPatch,
    last_review_at: Time.nullable(),
    /** The source's highest call `seq` its last review read (mapped onto the imported calls). */
    last_review_seq: z.number().int().min(0),
  })
  .strict();
const ToolLine = z
  .object({
    type: z.literal('tool'),
    name: ToolName,
    docstring: Text,
    description: Text.nullable(),
    parameters: Json,
    examples: z.array(Example),
    notes: z.array(z.string()),
    avoid: z.array(z.string()),
    call_example: Text.nullable(),
    /**
     * Routing memory; bundles written before it had none. `pending`: the conversations of a wording
     * not yet routed; `together`: every run it rests on was served together with other tools.
     */
    memory: z
      .array(
        z
          .object({
            text: Text,
            at: z.number().int().min(0),
            pending: z.array(Text).max(1000).optional(),
            together: z.literal(true).optional(),
          })
          .strict(),
      )
      .optional()
      .default([]),
    queries_source: z.literal('augmentation').nullable(),
    version: z.number().int().min(1),
    definition_hash: z.string(),
    reviewed_seq: z.number().int().min(0),
    created_at: Time,
    updated_at: Time,
  })
  .strict();
const ToolVersionLine = z
  .object({
    type: z.literal('tool_version'),
    name: ToolName,
    version: z.number().int().min(1),
    definition: Json,
    source: z.string(),
    created_at: Time,
  })
  .strict();
const RevisionLine = Revision.extend({
  type: z.literal('revision'),
  approved_key: z.string().nullable(),
  undone_key: z.string().nullable(),
  /** The row's learned state before apply, as undo reads it. */
  before_row: Json.nullable(),
  review_id: z.string().nullable(),
}).strict();
const ReviewLine = z
  .object({
    type: z.literal('review'),
    review_id: z.string().min(1),
    created_at: Time,
    trigger: z.enum(['api', 'cron']),
    summary: Json,
  })
  .strict();
const PinLine = z.object({ type: z.literal('pin'), tool: ToolName, pinned_at: Time, pinned_by: z.string() }).strict();
const TraceToolLine = z
  .object({ type: z.literal('trace_tool'), name: ToolName, definition: Json, seen_at: Time })
  .strict();
const TurnLine = z
  .object({
    type: z.literal('turn'),
    seq: z.number().int(),
    turn_id: z.string().min(1),
    request: Text.nullable(),
    conversation_id: z.string().nullable(),
    routed: z.boolean(),
    offered: z.array(RoutedTool),
    source: z.enum(['route', 'trace', 'call']),
    created_at: Time,
  })
  .strict();
const CallLine = z
  .object({
    type: z.literal('call'),
    seq: z.number().int(),
    call_id: z.string().min(1),
    tool: z.string().min(1),
    arguments: Json,
    success: z.boolean(),
    error: Text.nullable(),
    request: Text.nullable(),
    turn_id: z.string().nullable(),
    conversation_id: z.string().nullable(),
    at: Time,
  })
  .strict();
const OutcomeLine = z
  .object({
    type: z.literal('outcome'),
    turn_id: z.string().min(1),
    ok: z.boolean(),
    served_by: z.string().nullable(),
    at: Time,
  })
  .strict();

/** One line of an export. */
export const ExportLine = z.discriminatedUnion('type', [
  AgentLine,
  ToolLine,
  ToolVersionLine,
  RevisionLine,
  ReviewLine,
  PinLine,
  TraceToolLine,
  TurnLine,
  CallLine,
  OutcomeLine,
]);
export type ExportLine = z.infer<typeof ExportLine>;
export type AgentLine = z.infer<typeof AgentLine>;
export type ToolLine = z.infer<typeof ToolLine>;
export type ToolVersionLine = z.infer<typeof ToolVersionLine>;
export type RevisionLine = z.infer<typeof RevisionLine>;
export type ReviewLine = z.infer<typeof ReviewLine>;
export type PinLine = z.infer<typeof PinLine>;
export type TraceToolLine = z.infer<typeof TraceToolLine>;
export type TurnLine = z.infer<typeof TurnLine>;
export type CallLine = z.infer<typeof CallLine>;
export type OutcomeLine = z.infer<typeof OutcomeLine>;

/** A whole import, checked, grouped by type (each group in the order of the file). */
export interface ImportBundle {
  agent: AgentLine;
  tools: ToolLine[];
  versions: ToolVersionLine[];
  revisions: RevisionLine[];
  reviews: ReviewLine[];
  pins: PinLine[];
  traceTools: TraceToolLine[];
  turns: TurnLine[];
  calls: CallLine[];
  outcomes: OutcomeLine[];
}

/** Why an import was refused: the 1-based line and what is wrong with it. */
export interface ImportError {
  line: number;
  message: string;
  issues: unknown[];
}

export type ParsedImport = { ok: true; bundle: ImportBundle } | { ok: false; error: ImportError };

/**
 * Parses and checks a whole NDJSON import: every line JSON of a known type, the agent line first
 * and only once, no tool, version, revision, review, pin, turn, call or outcome twice. Blank lines
 * are skipped. The first problem wins.
 */
export function parseImport(text: string): ParsedImport {
  const lines = text.split('\n');
  const seen = new Set<string>();
  let bundle: ImportBundle | null = null;
  for (const [i, raw] of lines.entries()) {
    const line = i + 1;
    if (raw.trim() === '') continue;
    const fail = (message: string, issues: unknown[] = []): ParsedImport => ({
      ok: false,
      error: { line, message: `line ${line}: ${message}`, issues },
    });
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return fail('not valid JSON');
    }
    const parsed = ExportLine.safeParse(json);
    if (!parsed.success) return fail('does not match its line type', parsed.error.issues);
    const item = parsed.data;
    if (item.type === 'agent') {
      if (bundle) return fail('a second agent line');
      bundle = emptyBundle(item);
      continue;
    }
    if (!bundle) return fail('the first line must be the agent line ({"type": "agent", …})');
    const key = identity(item);
    if (seen.has(key)) return fail(`${key} appears twice`);
    seen.add(key);
    add(bundle, item);
  }
  if (!bundle) return { ok: false, error: { line: 1, message: 'line 1: the import has no agent line', issues: [] } };
  return { ok: true, bundle };
}

function emptyBundle(agent: AgentLine): ImportBundle {
  return {
    agent,
    tools: [],
    versions: [],
    revisions: [],
    reviews: [],
    pins: [],
    traceTools: [],
    turns: [],
    calls: [],
    outcomes: [],
  };
}

/** What makes a line unique within its type (the table's key within one agent), as the error names it. */
function identity(item: Exclude<ExportLine, AgentLine>): string {
  switch (item.type) {
    case 'tool':
    case 'trace_tool':
      return `${item.type} ${JSON.stringify(item.name)}`;
    case 'tool_version':
      return `tool_version ${JSON.stringify(item.name)} version ${item.version}`;
    case 'revision':
      return `revision ${JSON.stringify(item.revision_id)}`;
    case 'review':
      return `review ${JSON.stringify(item.review_id)}`;
    case 'pin':
      return `pin ${JSON.stringify(item.tool)}`;
    case 'turn':
    case 'outcome':
      return `${item.type} ${JSON.stringify(item.turn_id)}`;
    case 'call':
      return `call ${JSON.stringify(item.call_id)}`;
  }
}

/** The list of the bundle each line type goes to. */
const LIST_OF = {
  tool: 'tools',
  tool_version: 'versions',
  revision: 'revisions',
  review: 'reviews',
  pin: 'pins',
  trace_tool: 'traceTools',
  turn: 'turns',
  call: 'calls',
  outcome: 'outcomes',
} as const satisfies Record<Exclude<ExportLine, AgentLine>['type'], Exclude<keyof ImportBundle, 'agent'>>;

function add(b: ImportBundle, item: Exclude<ExportLine, AgentLine>): void {
  (b[LIST_OF[item.type]] as Exclude<ExportLine, AgentLine>[]).push(item);
}

/** The revision and review ids of a bundle: they are unique across the whole deployment, not per agent. */
export function globalIds(b: ImportBundle): string[] {
  return [...b.revisions.map((r) => r.revision_id), ...b.reviews.map((r) => r.review_id)];
}

/**
 * The bundle with each id of `renamed` (old → new) replaced wherever it appears: a revision's own id,
 * learned examples and displaced queries that name it, tool version sources (`revision:<id>`,
 * `undo:<id>`), a revision's review id. Ids are opaque tokens, so a string equal to one is that id.
 */
export function renameIds(b: ImportBundle, renamed: ReadonlyMap<string, string>): ImportBundle {
  if (renamed.size === 0) return b;
  const rename = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const m = /^(revision|undo):(.+)$/.exec(v);
      if (m?.[2] && renamed.has(m[2])) return `${m[1]}:${renamed.get(m[2])}`;
      return renamed.get(v) ?? v;
    }
    if (Array.isArray(v)) return v.map(rename);
    if (typeof v === 'object' && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rename(x)]));
    return v;
  };
  return rename(b) as ImportBundle;
}

/**
 * Maps a review mark (a call `seq` of the exporting deployment) onto the imported calls: the new
 * seq of the newest imported call at or before it, or 0. `pairs` are [old seq, new seq] in order.
 */
export function seqMapper(pairs: readonly (readonly [number, number])[]): (mark: number) => number {
  return (mark) => {
    let lo = 0;
    let hi = pairs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((pairs[mid]?.[0] ?? 0) <= mark) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : (pairs[lo - 1]?.[1] ?? 0);
  };
}
