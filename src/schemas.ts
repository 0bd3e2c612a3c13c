/**
 * The zod schemas of the v1 API (docs/api.md). They validate requests, validate model replies, produce
 * the OpenAPI document and type the client: types come from `z.infer`, never hand-written twins.
 */
import { z } from '@hono/zod-openapi';
import { DEFAULT_MEMORY_BYTES } from './core/routing-memory.ts';

/** docs/api.md limits; each one past it is a 400 (or 413 for the body). */
export const LIMITS = {
  bodyBytes: 1024 * 1024,
  /** The body of `POST …/import` (an export): read whole and checked before anything is written. */
  importBytes: 16 * 1024 * 1024,
  toolsPerPut: 1000,
  callsPerPost: 1000,
  /** A request text is accepted up to the body limit; the log keeps this many (src/core/long-request.ts). */
  requestChars: 4000,
  descriptionChars: 8000,
  errorChars: 4000,
  /** A call's `arguments` as JSON (UTF-8 bytes): a reported call, or a tool call in a trace. */
  argumentBytes: 16 * 1024,
  examplesPerTool: 50,
  exampleChars: 500,
  traceMessages: 1000,
  schemaBytes: 64 * 1024,
  idChars: 128,
  /** Nesting of arrays and objects in a JSON body, or in a trace's arguments text. */
  jsonDepth: 64,
} as const;

export const AgentId = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'agent ids are 1-64 characters of A-Z a-z 0-9 _ . -');
export const ToolName = z
  .string()
  .regex(/^[A-Za-z0-9_.\-/]{1,128}$/, 'tool names are 1-128 characters of A-Z a-z 0-9 _ . - /');
const Id = z.string().min(1).max(LIMITS.idChars);
/** Any length the body allows: routing reads a window, the log keeps a capped copy (docs/api.md). */
const RequestText = z.string().min(1);
const IsoTime = z.iso.datetime({ offset: true });

/** UTF-8 bytes of a value as JSON (a string counts as the text it is). */
function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value)).length;
}

/**
 * The issue for one call's arguments past `LIMITS.argumentBytes`, naming the call (its id, or its
 * tool when it has none), or null when they fit.
 */
function argumentsTooLarge(args: unknown, id: string | null | undefined, tool: string): string | null {
  const bytes = jsonBytes(args);
  if (bytes <= LIMITS.argumentBytes) return null;
  const call = id ? `call "${id}" (tool ${tool})` : `a call of tool ${tool}`;
  return `the arguments of ${call} are ${bytes.toLocaleString('en-US')} bytes as JSON; at most ${LIMITS.argumentBytes.toLocaleString('en-US')} are allowed`;
}

/** A JSON-Schema object for tool parameters: `type: "object"` (or absent), kept verbatim. */
export const ParameterSchema = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === undefined || s.type === 'object', {
    message: 'the parameter schema must be a JSON-Schema object ({"type": "object", …})',
  })
  .refine((s) => s.properties === undefined || isPlainObject(s.properties), {
    message: '"properties" must be an object',
  })
  .refine((s) => JSON.stringify(s).length <= LIMITS.schemaBytes, {
    message: `the parameter schema is larger than ${LIMITS.schemaBytes} bytes`,
  });

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const HandExamples = z.array(z.string().min(1).max(LIMITS.exampleChars)).max(LIMITS.examplesPerTool);
const Description = z.string().max(LIMITS.descriptionChars);

const PlainDef = z.object({
  name: ToolName,
  description: Description.optional(),
  parameters: ParameterSchema.optional(),
  examples: HandExamples.optional(),
});
const OpenAIDef = z.object({
  type: z.literal('function'),
  function: z.object({
    name: ToolName,
    description: Description.optional(),
    parameters: ParameterSchema.optional(),
    strict: z.boolean().nullish(),
  }),
  examples: HandExamples.optional(),
});
const McpDef = z.object({
  name: ToolName,
  description: Description.optional(),
  inputSchema: ParameterSchema,
  examples: HandExamples.optional(),
});
const AnthropicDef = z.object({
  name: ToolName,
  description: Description.optional(),
  input_schema: ParameterSchema,
  examples: HandExamples.optional(),
});

/** Any of the four common tool shapes (docs/api.md ToolDef). */
export const ToolDef = z
  .union([OpenAIDef, McpDef, AnthropicDef, PlainDef])
  .openapi('ToolDef', { description: 'plain, OpenAI, MCP or Anthropic tool definition' });
export type ToolDef = z.infer<typeof ToolDef>;

export const ExampleSource = z.enum(['synthetic', 'learned', 'unknown']);
export const Example = z.object({
  text: z.string(),
  source: ExampleSource,
  revision_id: z.string().nullable(),
});
export type Example = z.infer<typeof Example>;

export const ModelTool = z
  .object({
    type: z.literal('function'),
    function: z.object({
      name: z.string(),
      description: z.string(),
      parameters: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi('ModelTool');
export type ModelTool = z.infer<typeof ModelTool>;

export const ToolRow = z
  .object({
    name: z.string(),
    docstring: z.string(),
    description: z.string().nullable(),
    parameters: z.record(z.string(), z.unknown()),
    examples: z.array(Example),
    notes: z.array(z.string()),
    avoid: z.array(z.string()),
    call_example: z.string().nullable(),
    queries_source: z.literal('augmentation').nullable(),
    version: z.number().int(),
    updated_at: z.string(),
    model_view: ModelTool,
    /** The wordings routing remembers for the tool, newest first; absent when none. Never in `model_view`. */
    memory: z.array(z.string()).optional(),
    /** Wordings served in fewer than `min_conversations` conversations so far: kept, not yet routed; absent when none. */
    memory_pending: z.number().int().optional(),
  })
  .openapi('ToolRow');
export type ToolRow = z.infer<typeof ToolRow>;

export const PutToolsBody = z
  .object({
    tools: z.array(ToolDef).max(LIMITS.toolsPerPut),
    augment: z.boolean().optional().default(false),
  })
  .strict();

export const AugmentOutcome = z.object({
  name: z.string(),
  augmented: z.boolean(),
  reason: z.string().nullable(),
});
export const PutToolsAnswer = z.object({
  tools: z.array(ToolRow),
  augmentation: z.array(AugmentOutcome).optional(),
});

export const ToolVersion = z.object({
  version: z.number().int(),
  definition: z.record(z.string(), z.unknown()),
  source: z.string(),
  created_at: z.string(),
});

export const RouteBody = z
  .object({
    request: RequestText,
    conversation_id: Id.optional(),
    k: z.number().int().min(1).max(50).optional(),
    format: z.enum(['openai', 'anthropic', 'mcp']).optional(),
  })
  .strict();
/** A model view in one of the three formats (src/core/render.ts `inFormat`). */
export const FormattedTool = z.union([
  ModelTool.extend({ defer_loading: z.literal(true).optional() }),
  z.object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
    defer_loading: z.literal(true).optional(),
  }),
  z.object({
    name: z.string(),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()),
    _meta: z.object({ defer_loading: z.literal(true) }).optional(),
  }),
]);
export const RoutedTool = z.object({ name: z.string(), rank: z.number().int(), score: z.number() });
export type RoutedTool = z.infer<typeof RoutedTool>;
export const RouteResult = z
  .object({
    turn_id: z.string(),
    routed: z.boolean(),
    tools: z.array(RoutedTool),
    model_tools: z.array(FormattedTool),
  })
  .openapi('RouteResult');
export type RouteResult = z.infer<typeof RouteResult>;

export const CallIn = z
  .object({
    id: Id.optional(),
    tool: ToolName,
    arguments: z.record(z.string(), z.unknown()).default({}),
    success: z.boolean(),
    error: z.string().max(LIMITS.errorChars).nullish(),
    request: RequestText.nullish(),
    turn_id: Id.nullish(),
    conversation_id: Id.nullish(),
    at: IsoTime.optional(),
  })
  .strict()
  .superRefine((call, ctx) => {
    const message = argumentsTooLarge(call.arguments, call.id, call.tool);
    if (message) ctx.addIssue({ code: 'custom', path: ['arguments'], message });
  })
  .openapi('Call');
export type CallIn = z.infer<typeof CallIn>;
export const PostCallsBody = z.object({ calls: z.array(CallIn).min(1).max(LIMITS.callsPerPost) }).strict();
export const PostCallsAnswer = z.object({ accepted: z.number().int(), duplicates: z.number().int() });

export const OutcomeBody = z.object({ turn_id: Id, ok: z.boolean(), served_by: ToolName.nullish() }).strict();

export const KeyRole = z.enum(['agent', 'operator', 'approver', 'read_only']);
export type KeyRole = z.infer<typeof KeyRole>;
/** An entry of a key's tool lists: a tool name, or `upstream:<name>` for every tool of an upstream. */
const ToolAccessEntry = z.union([ToolName, z.string().regex(/^upstream:[A-Za-z0-9_-]{1,32}$/)]);
export const ToolAccess = z
  .object({
    allow: z.array(ToolAccessEntry).max(1000).optional(),
    deny: z.array(ToolAccessEntry).max(1000).optional(),
  })
  .strict()
  .openapi('ToolAccess', {
    description:
      'the tools the key may use through the MCP endpoint: deny wins; with allow, only what it names (docs/integrations.md)',
  });
export const CreateKeyBody = z.object({ role: KeyRole, tool_access: ToolAccess.optional() }).strict();
export const CreatedKey = z.object({
  key_id: z.string(),
  key: z.string(),
  role: KeyRole,
  tool_access: ToolAccess.optional(),
});

/** A right on an agent (docs/api.md "Rights"): what a route needs. */
export const Right = z.enum(['read', 'agent', 'decide', 'operator', 'admin']);
/** `GET …/whoami`: who the token is on this agent and what it may do there. */
export const WhoAmI = z
  .object({
    /** `admin` for the ADMIN_TOKEN, else the key's role. */
    role: z.union([KeyRole, z.literal('admin')]),
    /** The key's id; null for the ADMIN_TOKEN. */
    key_id: z.string().nullable(),
    rights: z.array(Right),
  })
  .openapi('WhoAmI');
export type Right = z.infer<typeof Right>;
export type WhoAmI = z.infer<typeof WhoAmI>;

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.unknown()),
    }),
  })
  .openapi('Error');

/** docs/configuration.md tool-learning settings, with their ranges. `review_schedule` is "off" or "*\/N" minutes. */
export const Settings = z
  .object({
    min_calls: z.number().int().min(1).max(10_000),
    min_failures: z.number().int().min(1).max(1000),
    min_misses: z.number().int().min(1).max(1000),
    min_confusions: z.number().int().min(1).max(1000),
    min_conversations: z.number().int().min(1).max(1000),
    max_notes: z.number().int().min(0).max(20),
    max_avoid: z.number().int().min(0).max(10),
    max_queries: z.number().int().min(0).max(50),
    max_new_queries: z.number().int().min(0).max(50),
    max_calls_per_tool: z.number().int().min(1).max(500),
    max_tools: z.number().int().min(1).max(100),
    min_offers: z.number().int().min(1).max(1_000_000),
    min_turns: z.number().int().min(1).max(1_000_000),
    show_learned_examples: z.boolean(),
    top_k: z.number().int().min(1).max(50),
    stable_tool_list_tokens: z.number().int().min(0).max(1_000_000),
    review_schedule: z
      .string()
      .regex(
        /^(off|\*\/([1-9]|[1-9][0-9]|[1-9][0-9][0-9]|1[0-3][0-9][0-9]|14[0-3][0-9]|1440))$/,
        'review_schedule is "off" or "*/N" with N minutes from 1 to 1440',
      ),
    auto_apply: z.boolean(),
    log_retention_days: z.number().int().min(1).max(365),
    /** Tools the agent may hold: a `PUT …/tools` that would pass it is a 400 (docs/capacity.md). */
    max_registered_tools: z.number().int().min(1).max(100_000),
    /** Model calls an hour, reviews (dry runs too) and augmentation together; 0 = none. */
    model_calls_per_hour: z.number().int().min(0).max(1_000_000),
    /** Bytes of routing memory per tool, at most its share of AGENT_MEMORY_BYTES (docs/learning.md "Routing memory"); 0 = off. */
    memory_bytes: z.number().int().min(0).max(16_384),
    /** Apply memory revisions at once as "whetstone:routing_memory"; false leaves them for approval. */
    memory_auto_apply: z.boolean(),
    /** A settled UTC day whose hit rate fell by more than this share of the day before's sends `quality.dropped`; 1 = never. */
    hit_rate_drop_share: z.number().min(0).max(1),
    /**
     * A changed definition of an upstream tool already served: "hold" it for a person (the one in
     * force stays), or "apply_optional_additions": serve at once a change that only adds optional
     * parameters and passes the checks (every other change is still held).
     */
    definition_changes: z.enum(['hold', 'apply_optional_additions']),
  })
  .strict()
  .openapi('Settings');
export type Settings = z.infer<typeof Settings>;
export const SettingsPatch = Settings.partial().strict();
export type SettingsPatch = z.infer<typeof SettingsPatch>;

export const DEFAULT_SETTINGS: Settings = {
  min_calls: 3,
  min_failures: 2,
  min_misses: 2,
  min_confusions: 2,
  min_conversations: 2,
  max_notes: 4,
  max_avoid: 2,
  max_queries: 12,
  max_new_queries: 4,
  max_calls_per_tool: 24,
  max_tools: 8,
  min_offers: 5,
  min_turns: 20,
  show_learned_examples: false,
  top_k: 5,
  stable_tool_list_tokens: 0,
  review_schedule: '*/10',
  auto_apply: false,
  log_retention_days: 30,
  // 10,000 tools: a routing snapshot of about 31 MiB with the exact index (3.14 MiB per 1,000
  // tools, docs/capacity.md), under the 48 MiB an isolate keeps.
  max_registered_tools: 10_000,
  // Eight tools every ten minutes is 48 an hour from the schedule; the rest is room for manual
  // reviews and registrations with `augment`.
  model_calls_per_hour: 500,
  memory_bytes: DEFAULT_MEMORY_BYTES,
  memory_auto_apply: true,
  // A quarter: a day routing offered the serving tool for 60% of requests after 80% the day before.
  hit_rate_drop_share: 0.25,
  // A trusted tool's definition changes only with a person's approval (a rug pull is such a change).
  definition_changes: 'hold',
};

export const EvidenceKind = z.enum(['failed_call', 'missed_request', 'confused_request', 'successful_call']);
export const Evidence = z
  .object({
    evidence_id: z.string(),
    kind: EvidenceKind,
    tool: z.string(),
    /** The request or error text, argument values scrubbed. */
    text: z.string(),
    /** Argument names of the call (never values). */
    arguments: z.array(z.string()),
    how: z.enum(['not_offered', 'ranked_low', 'next_request', 're_asked', 'ranked_first', 'verified']).nullable(),
    served_by: z.string().nullable(),
    turn_id: z.string().nullable(),
    call_id: z.string().nullable(),
    at: z.string(),
    /**
     * A failed call that was not the caller's fault (an outage, a business outcome): why no usage
     * note may rest on it (docs/learning.md "Whose fault a failure is"). Absent otherwise.
     */
    why_no_note: z.string().optional(),
  })
  .openapi('Evidence');
export type Evidence = z.infer<typeof Evidence>;

export const RefusalReason = z.enum([
  'no_evidence',
  'wrong_evidence',
  'below_threshold',
  'no_shared_word',
  'argument_value',
  'aimed_at_model',
  'too_long',
  'not_one_line',
  'cap_reached',
  'bad_shape',
  'unknown_tool',
  'own_tool',
  'not_served_by_target',
  'duplicate',
  'no_room',
  'already_kept',
  'invalid_reply',
  'contradicts',
  'personal_value',
  'quotes_one_caller',
]);
export type RefusalReason = z.infer<typeof RefusalReason>;
export const Refusal = z.object({
  tool: z.string(),
  kind: z.enum(['note', 'request', 'avoid', 'call_example', 'reply']),
  text: z.string(),
  reason: RefusalReason,
  detail: z.string(),
});
export type Refusal = z.infer<typeof Refusal>;
/**
 * A proposed line that passed every check but reads as suspicious (docs/security.md "Learned lines"):
 * `auto_apply` leaves its revision proposed for a person, and says why here.
 */
export const HeldLine = z
  .object({
    kind: z.enum(['note', 'request', 'avoid', 'call_example']),
    text: z.string(),
    reasons: z.array(z.string()),
  })
  .openapi('HeldLine');
export type HeldLine = z.infer<typeof HeldLine>;

export const RankChange = z.object({
  request: z.string(),
  before: z.number().int().nullable(),
  after: z.number().int().nullable(),
});
export const Displacement = z.object({ request: z.string(), tool: z.string() });
export type Displacement = z.infer<typeof Displacement>;

/** The lines of a revision an approver may edit before applying. */
export const RevisionLines = z
  .object({
    notes_added: z.array(z.string()),
    queries_added: z.array(z.string()),
    avoid_added: z.array(z.string()),
    call_example: z.string().nullable(),
  })
  .openapi('RevisionLines');

/** A run a memory wording rests on: the turn (or lone call) whose request the tool served. */
export const MemoryRun = z.object({
  turn_id: z.string().nullable(),
  call_id: z.string().nullable(),
  at: z.string(),
  /** The tool served the request together with others (each changed something it asked for). */
  together: z.boolean(),
  /** The added wording this run's request says (absent on revisions stored before it was recorded). */
  wording: z.string().optional(),
  /** The run's conversation: a wording routes once served in `min_conversations` distinct ones. */
  conversation: z.string().nullable().optional(),
});
/** What a revision of kind `memory` changes in a tool's routing memory (docs/learning.md "Routing memory"). */
export const MemoryChange = z
  .object({
    /** Wordings the revision adds (after apply: the ones that made it in). */
    added: z.array(z.string()),
    /** Wordings the displacement re-check withdrew at apply. */
    withdrawn: z.array(z.string()),
    /** Wordings the byte budget let go at apply, to make room (those covering the least). */
    dropped: z.array(z.string()),
    runs: z.array(MemoryRun),
  })
  .openapi('MemoryChange');
export type MemoryChange = z.infer<typeof MemoryChange>;

export const RevisionStatus = z.enum(['proposed', 'applied', 'dismissed', 'undone']);
export const Revision = z
  .object({
    revision_id: z.string(),
    tool: z.string(),
    status: RevisionStatus,
    created_at: z.string(),
    applied_at: z.string().nullable(),
    approved_by: z.string().nullable(),
    notes_added: z.array(z.string()),
    queries_added: z.array(z.string()),
    avoid_added: z.array(z.string()),
    call_example: z.string().nullable(),
    queries_withdrawn: z.array(z.string()),
    displaced: z.array(Displacement),
    queries_displaced: z.array(Example),
    refused: z.array(Refusal),
    evidence: z.array(Evidence),
    ranks: z.array(RankChange),
    base_version: z.number().int(),
    applied_version: z.number().int().nullable(),
    dismiss_reason: z.string().nullable(),
    /** Who took it back and when (an undo keeps who applied it in approved_by). */
    undone_at: z.string().nullable(),
    undone_by: z.string().nullable(),
    /** Lines a person must read before this revision is applied; absent when none (`auto_apply` skips it). */
    held: z.array(HeldLine).optional(),
    /** Present when an approver edited the lines before applying: the lines as proposed (the fields above are what was applied). */
    proposed: RevisionLines.optional(),
    /** Who edited the lines before applying; absent when they were applied as proposed. */
    edited_by: z.string().optional(),
    /** `memory` for a revision of routing memory (its lines are empty); absent on a revision of learned lines. */
    kind: z.literal('memory').optional(),
    /** What a memory revision changes; present exactly when `kind` is `memory`. */
    memory: MemoryChange.optional(),
  })
  .openapi('Revision');
export type Revision = z.infer<typeof Revision>;

export const Flag = z
  .object({
    tool: z.string(),
    flag: z.enum(['retrieved_never_called', 'never_retrieved']),
    offered_turns: z.number().int(),
    calls: z.number().int(),
    routed_turns: z.number().int(),
  })
  .openapi('Flag');
export type Flag = z.infer<typeof Flag>;

export const Skip = z.object({ tool: z.string(), reason: z.string() });
export const Review = z
  .object({
    review_id: z.string(),
    dry_run: z.boolean(),
    revisions: z.array(Revision),
    refused: z.array(Refusal),
    skipped: z.array(Skip),
    flags: z.array(Flag),
    model_calls: z.number().int(),
    /** Runs read whose attribution is doubtful (docs/learning.md "Doubtful runs"): they taught nothing. */
    doubtful_runs: z.number().int(),
    /** The review's routing-memory revisions (applied unless `memory_auto_apply` is false); absent when none. */
    memory: z.array(Revision).optional(),
  })
  .openapi('Review');
export type Review = z.infer<typeof Review>;

export const ReviewBody = z
  .object({
    dry_run: z.boolean().optional().default(false),
    auto_apply: z.boolean().optional(),
    config: SettingsPatch.optional(),
  })
  .strict();

const ApprovedBy = z.string().min(1).max(200);
/** A line as an approver may write it: the checks then hold it to a line's length (longer is refused here). */
const EditedLine = z.string().max(2000);
/** An edit of the lines before applying: each field absent stays as proposed. */
export const LineEdit = z
  .object({
    notes_added: z.array(EditedLine).max(50).optional(),
    queries_added: z.array(EditedLine).max(50).optional(),
    avoid_added: z.array(EditedLine).max(50).optional(),
    call_example: EditedLine.nullable().optional(),
  })
  .strict()
  .openapi('LineEdit');
export const ApplyBody = z.object({ approved_by: ApprovedBy, edit: LineEdit.optional() }).strict();
export const UndoBody = z.object({ approved_by: ApprovedBy }).strict();
/** Apply or dismiss several revisions: each decided on its own (a repeated id is refused). */
export const BulkBody = z
  .object({
    action: z.enum(['apply', 'dismiss']),
    approved_by: ApprovedBy,
    revision_ids: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(100)
      .refine((ids) => new Set(ids).size === ids.length, 'revision_ids repeats an id'),
    reason: z.string().max(1000).optional(),
  })
  .strict();
export const BulkAnswer = z
  .object({
    results: z.array(
      z.object({
        revision_id: z.string(),
        ok: z.boolean(),
        status: RevisionStatus.optional(),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
      }),
    ),
    decided: z.number().int(),
    failed: z.number().int(),
  })
  .openapi('BulkAnswer');
export const DismissBody = z.object({ approved_by: ApprovedBy, reason: z.string().max(1000).optional() }).strict();

// ── Try before apply (docs/api.md "Try before apply") ───────────────────────────────────
/** A try run of a proposed revision, optionally with the lines an approver edited (as apply takes them). */
export const TryBody = z.object({ edit: LineEdit.optional() }).strict();

/** What the model called for one request, and what the tool's test endpoint answered for it. */
export const TryPick = z
  .object({
    /** The tool the model called; null when it answered without a call. */
    tool: z.string().nullable(),
    arguments: z.record(z.string(), z.unknown()),
    /** The tool's test endpoint's answer (`{result}` or `{error}`); null when the tool has none. */
    test: z.object({ result: z.unknown().optional(), error: z.string().optional() }).nullable(),
  })
  .openapi('TryPick');

export const TryRequest = z
  .object({
    request: z.string(),
    /** `evidence`: the revision rests on it (`evidence_kind`); `served`: a recent call of the tool. */
    source: z.enum(['evidence', 'served']),
    evidence_kind: EvidenceKind.nullable(),
    /** The tool that should serve the request. */
    expected: z.string(),
    /** Where routing ranks `expected` over the whole toolbox now and with the lines applied (null: not in it). */
    rank: z.object({ before: z.number().int().nullable(), after: z.number().int().nullable() }),
    /** The `top_k` tools routing offers, before and after. */
    offered: z.object({ before: z.array(z.string()), after: z.array(z.string()) }),
    /** The model's pick from the offered model views, before and after; null when the model did not run. */
    pick: z.object({ before: TryPick, after: TryPick }).nullable(),
  })
  .openapi('TryRequest');

export const TryAnswer = z
  .object({
    revision_id: z.string(),
    tool: z.string(),
    /** True when the lines tried are an approver's edit, not the proposal. */
    edited: z.boolean(),
    /** The lines tried, as the checks keep them (what apply would write). */
    lines: z.object({
      notes_added: z.array(z.string()),
      queries_added: z.array(z.string()),
      avoid_added: z.array(z.string()),
      call_example: z.string().nullable(),
    }),
    model: z.object({
      id: z.string(),
      /** True when the model picked tools for the requests (`pick`); false says why in `note`. */
      picks: z.boolean(),
      note: z.string().nullable(),
    }),
    requests: z.array(TryRequest),
    /** Calls made to test endpoints by this run. */
    test_calls: z.number().int(),
  })
  .openapi('TryAnswer');
export type TryAnswer = z.infer<typeof TryAnswer>;
export type TryPick = z.infer<typeof TryPick>;

/** A tool's test endpoint: where only a try run sends `{tool, arguments}`. */
export const TestEndpointBody = z
  .object({
    url: z.string().min(1).max(2000),
    /** Sent as `Authorization: Bearer <token>`; stored sealed, never answered. */
    token: z.string().min(1).max(1000).optional(),
  })
  .strict();
export const TestEndpoint = z.object({ tool: z.string(), url: z.string(), token: z.boolean() }).openapi('TestEndpoint');

// ── Usage flags, traces and unregistered tools (docs/api.md) ──────────────────────────
// Trace messages are lenient on the extra fields real SDKs send (looseObject) and strict on what
// Whetstone reads: roles, tool call ids and names, arguments, results and `is_error`.

export const FlagsAnswer = z.object({ flags: z.array(Flag) });

/**
 * A content part Whetstone does not read (image, audio, file, thinking…), accepted as it is. The
 * types it does read, and the other format's tool parts, are refused here: they must match their
 * own schema (a trace in the wrong format is a 400, not a run with no calls).
 */
const otherPart = (refused: readonly string[]) =>
  z.looseObject({
    type: z.string().refine((t) => !refused.includes(t), {
      message: `a part of type ${refused.join(', ')} must have its own fields, in its own format`,
    }),
  });

const OpenAITextPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const OpenAIContent = z
  .union([z.string(), z.array(z.union([OpenAITextPart, otherPart(['text', 'tool_use', 'tool_result'])]))])
  .nullish();
const OpenAIToolCall = z.looseObject({
  id: Id,
  type: z.literal('function').optional(),
  function: z.looseObject({
    name: ToolName,
    /** A JSON string as the Chat Completions API sends it; an already parsed object is accepted too. */
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
  }),
});
/** One OpenAI Chat Completions message (`assistant.tool_calls`, `tool` results with `tool_call_id`). */
export const OpenAIMessage = z.union([
  z.looseObject({ role: z.enum(['system', 'developer', 'user']), content: OpenAIContent }),
  z.looseObject({
    role: z.literal('assistant'),
    content: OpenAIContent,
    tool_calls: z.array(OpenAIToolCall).nullish(),
  }),
  z.looseObject({ role: z.literal('tool'), tool_call_id: Id, content: OpenAIContent }),
  /** The legacy `function` role: history only, nothing in it is read. */
  z.looseObject({ role: z.literal('function'), name: z.string(), content: OpenAIContent }),
]);
export type OpenAIMessage = z.infer<typeof OpenAIMessage>;

const AnthropicText = z.looseObject({ type: z.literal('text'), text: z.string() });
export const AnthropicToolUse = z.looseObject({
  type: z.literal('tool_use'),
  id: Id,
  name: ToolName,
  input: z.record(z.string(), z.unknown()),
});
export const AnthropicToolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: Id,
  content: z.union([z.string(), z.array(z.union([AnthropicText, otherPart(['text'])]))]).optional(),
  is_error: z.boolean().optional(),
});
export type AnthropicToolUse = z.infer<typeof AnthropicToolUse>;
export type AnthropicToolResult = z.infer<typeof AnthropicToolResult>;
/** The catch-all part refuses the types read above, so `type` alone tells a block apart. */
export const AnthropicBlock = z.union([
  AnthropicText,
  AnthropicToolUse,
  AnthropicToolResult,
  otherPart(['text', 'tool_use', 'tool_result']),
]);
export type AnthropicBlock = z.infer<typeof AnthropicBlock>;
/** One Anthropic Messages message (`tool_use` blocks, `tool_result` blocks with `is_error`). */
export const AnthropicMessage = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(AnthropicBlock)]),
});
export type AnthropicMessage = z.infer<typeof AnthropicMessage>;

export const TraceFormat = z.enum(['openai', 'anthropic']);
export type TraceFormat = z.infer<typeof TraceFormat>;

/**
 * `POST …/traces`: one agent run as the model saw it. The messages are checked again against the
 * schema of the format (given, or detected) before anything is read (src/core/traces.ts).
 */
export const TraceBody = z
  .object({
    format: TraceFormat.optional(),
    messages: z
      .array(z.union([OpenAIMessage, AnthropicMessage]))
      .min(1)
      .max(LIMITS.traceMessages),
    tools: z.array(ToolDef).max(LIMITS.toolsPerPut).optional(),
    conversation_id: Id.optional(),
    turn_id: Id.optional(),
  })
  .strict()
  // Checked on the whole body, not inside the message union: there, one call's issue would be
  // reported as the union's (a message of neither format), not as its arguments.
  .superRefine((body, ctx) => {
    body.messages.forEach((m, i) => {
      if ('tool_calls' in m && Array.isArray(m.tool_calls)) {
        m.tool_calls.forEach((c, j) => {
          const message = argumentsTooLarge(c.function.arguments, c.id, c.function.name);
          if (message)
            ctx.addIssue({ code: 'custom', path: ['messages', i, 'tool_calls', j, 'function', 'arguments'], message });
        });
      }
      if (!Array.isArray(m.content)) return;
      m.content.forEach((part, j) => {
        if (part.type !== 'tool_use' || !('input' in part)) return;
        const use = part as AnthropicToolUse;
        const message = argumentsTooLarge(use.input, use.id, use.name);
        if (message) ctx.addIssue({ code: 'custom', path: ['messages', i, 'content', j, 'input'], message });
      });
    });
  })
  .openapi('Trace');
export type TraceBody = z.infer<typeof TraceBody>;
export const TraceAnswer = z.object({ turn_id: z.string(), calls: z.number().int() });

/** A drafted definition for an unregistered tool, ready for `PUT …/tools` (docs/learning.md). */
export const ToolDraft = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});
export type ToolDraft = z.infer<typeof ToolDraft>;
export const UnregisteredTool = z
  .object({
    name: z.string(),
    call_count: z.number().int(),
    failure_count: z.number().int(),
    last_seen_at: z.string(),
    definition_source: z.enum(['metadata', 'inferred']),
    draft: ToolDraft,
    /** A trace's definition that the learned-line check flagged: a person edits it before registering it. */
    untrusted: z.boolean(),
    /** What the check found, each naming where (`description: …`, `parameters.properties.q.description: …`). */
    untrusted_reasons: z.array(z.string()),
  })
  .openapi('UnregisteredTool');
export type UnregisteredTool = z.infer<typeof UnregisteredTool>;
export const UnregisteredAnswer = z.object({ tools: z.array(UnregisteredTool), next_cursor: z.string().nullable() });

/** An upstream MCP server of the agent's gateway, as the API answers it (header values never). */
const UpstreamToolFlag = z
  .object({
    kind: z.enum(['other_named', 'name_collision', 'calls_other_tool', 'name']),
    field: z.string(),
    match: z.string(),
    why: z.string(),
  })
  .openapi('UpstreamToolFlag');

const HeldFinding = z
  .object({
    check: z
      .string()
      .openapi({ description: 'the check that fired: instruction, tag, secret, concealment, hidden_characters, name' }),
    field: z
      .string()
      .openapi({ description: 'where the text is: name, description, parameters.properties.<p>.description, …' }),
    text: z.string().openapi({ description: 'the offending text (at most 500 characters)' }),
    match: z.string().openapi({ description: 'the part of text that fired the check, to highlight' }),
    why: z.string(),
  })
  .openapi('QuarantineFinding');

export const Upstream = z
  .object({
    name: z.string(),
    url: z.string(),
    header_names: z
      .array(z.string())
      .openapi({ description: 'the names of the stored headers; values are write-only' }),
    timeout_ms: z.number().int(),
    status: z.enum(['new', 'ok', 'failing']),
    last_error: z.string().nullable(),
    failures: z.number().int().openapi({ description: 'failed syncs in a row' }),
    last_sync_at: z.string().nullable(),
    next_sync_at: z.string().nullable(),
    tools: z.array(
      z.object({ name: z.string(), remote_name: z.string(), available: z.boolean(), flags: z.array(UpstreamToolFlag) }),
    ),
    quarantined: z
      .array(
        z.object({
          name: z.string().openapi({ description: 'the name the upstream lists' }),
          tool: z.string().openapi({ description: 'the name it would be served under' }),
          quarantined_at: z.string(),
          findings: z.array(HeldFinding),
        }),
      )
      .openapi({
        description:
          'tools the definition check holds back (not listed, routed or callable), and changes to served tools held while the pinned definition stays in force (check changed), until a person releases them (POST …/tools/{tool}/release)',
      }),
    released: z
      .array(
        z.object({
          name: z.string(),
          tool: z.string(),
          released_by: z.string(),
          released_key: z.string().nullable().openapi({ description: 'the key that released it (a key id, or admin)' }),
          released_at: z.string(),
        }),
      )
      .openapi({ description: 'held tools a person released; the release holds while the definition stays the same' }),
    flagged: z
      .array(z.object({ name: z.string(), remote_name: z.string(), flags: z.array(UpstreamToolFlag) }))
      .openapi({ description: 'served tools a person should read: why, per flag' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Upstream');

/** `GET …/quality` (docs/api.md "Quality"): requests served and hits of a tool over some hours. */
export const ServedCounts = z.object({ served_turns: z.number().int(), hits: z.number().int() });

/** Per kind of line: proposed in applied revisions, kept word for word, taken out, written by approvers. */
const LineEdits = z.object({
  proposed: z.number().int(),
  kept: z.number().int(),
  taken_out: z.number().int(),
  written: z.number().int(),
});

/** How people decided the revisions of lines created in a window, and what they edited (src/core/approval-stats.ts). */
export const Approvals = z
  .object({
    decided: z.number().int(),
    applied_as_proposed: z.number().int(),
    applied_edited: z.number().int(),
    auto_applied: z.number().int(),
    dismissed: z.number().int(),
    edit_rate: z.number().nullable(),
    lines: z.object({
      notes_added: LineEdits,
      queries_added: LineEdits,
      avoid_added: LineEdits,
      call_example: LineEdits,
    }),
  })
  .openapi('Approvals');

/**
 * `GET …/quality`: per UTC day, `hit_rate` is hits / (hits + misses) among the served requests
 * routing ranked (null on a day it ranked none; a loose call's request or a stable-list turn was
 * never ranked, so it counts as served but neither hit nor miss), and `mrr` the mean of 1/rank of
 * the serving tool over the same requests (0 when not offered; null likewise).
 */
export const Quality = z
  .object({
    days: z.array(
      z.object({
        date: z.string(),
        routed_turns: z.number().int(),
        served_turns: z.number().int(),
        hits: z.number().int(),
        hit_rate: z.number().nullable(),
        mrr: z.number().nullable(),
        misses: z.number().int(),
        confusions: z.number().int(),
        failed_calls: z.number().int(),
      }),
    ),
    revisions: z.array(
      z.object({
        revision_id: z.string(),
        tool: z.string(),
        applied_at: z.string(),
        undone_at: z.string().nullable(),
        before: ServedCounts,
        after: ServedCounts,
      }),
    ),
    approvals: Approvals,
    top_missed: z.array(z.object({ tool: z.string(), misses: z.number().int() })),
    top_confused: z.array(z.object({ tool: z.string(), served_by: z.string(), count: z.number().int() })),
    truncated: z.boolean(),
  })
  .openapi('Quality');

/** `GET …/tools/{tool}/activity`: calls, failed calls and offers of a tool per UTC day or hour. */
export const Activity = z
  .object({
    tool: z.string(),
    bucket: z.enum(['day', 'hour']),
    from: z.string(),
    to: z.string(),
    buckets: z.array(
      z.object({ start: z.string(), calls: z.number().int(), failures: z.number().int(), offers: z.number().int() }),
    ),
  })
  .openapi('Activity');

/** `POST …/tools/{tool}/preview`: a tool's model view now and with a revision's additions. */
export const Preview = z.object({ before: ModelTool, after: ModelTool }).openapi('Preview');

/** `GET /v1/agents` (admin): every agent with its counts, a page at a time. */
export const AgentList = z.object({
  agents: z.array(
    z.object({ agent: z.string(), tools: z.number(), calls: z.number(), last_review_at: z.string().nullable() }),
  ),
  next_cursor: z.string().nullable(),
});

/** `GET …/revisions`: newest first; `next_cursor` is null on the last page. */
export const RevisionPage = z.object({ revisions: z.array(Revision), next_cursor: z.string().nullable() });

/** `GET …/upstreams`. */
export const UpstreamList = z.object({ upstreams: z.array(Upstream) });
