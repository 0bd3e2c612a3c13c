"""The API's bodies as `TypedDict`s: what each method sends and answers (docs/api-reference.md).

Answers are plain dicts decoded from JSON; these types let a type checker and an editor know their
keys. `tests/test_in_step.py` compares every one with the OpenAPI document the Worker serves, so a
field the API adds or drops fails a test until it is written here.
"""

from typing import Any, Dict, List, Literal, Optional, TypedDict

JSON = Dict[str, Any]
Format = Literal["openai", "anthropic", "mcp"]
RevisionStatus = Literal["proposed", "applied", "dismissed", "undone"]

# ── Tools ──────────────────────────────────────────────────────────────────────────────────────

#: A tool definition in any of the four shapes the API takes: plain `{name, description?,
#: parameters?, examples?}`, OpenAI `{type: "function", function: {...}}`, MCP `{name, inputSchema}`
#: or Anthropic `{name, input_schema}`.
ToolDef = Dict[str, Any]


class ModelToolFunction(TypedDict):
    name: str
    description: str
    parameters: JSON


class ModelTool(TypedDict):
    """A tool as the model sees it (OpenAI function shape)."""

    type: Literal["function"]
    function: ModelToolFunction


class Example(TypedDict):
    text: str
    source: Literal["synthetic", "learned", "unknown"]
    revision_id: Optional[str]


class _ToolRowOptional(TypedDict, total=False):
    memory: List[str]
    memory_pending: int


class ToolRow(_ToolRowOptional):
    """A registered tool with what learning added and its model view; `memory` (routing only) when it holds any,
    `memory_pending` when wordings wait for a second conversation."""

    name: str
    docstring: str
    description: Optional[str]
    parameters: JSON
    examples: List[Example]
    notes: List[str]
    avoid: List[str]
    call_example: Optional[str]
    queries_source: Optional[Literal["augmentation"]]
    version: int
    updated_at: str
    model_view: ModelTool


class AugmentOutcome(TypedDict):
    name: str
    augmented: bool
    reason: Optional[str]


class _RegisterToolsAnswer(TypedDict):
    tools: List[ToolRow]


class RegisterToolsAnswer(_RegisterToolsAnswer, total=False):
    augmentation: List[AugmentOutcome]


class ToolsAnswer(TypedDict):
    tools: List[ToolRow]


class ModelToolsAnswer(TypedDict):
    """`tools(format=...)`: every model view in one format (OpenAI, Anthropic or MCP shape)."""

    tools: List[JSON]


class ToolVersion(TypedDict):
    version: int
    definition: JSON
    source: str
    created_at: str


class ToolVersionsAnswer(TypedDict):
    versions: List[ToolVersion]


class ToolExamplesAnswer(TypedDict):
    examples: List[Example]


class ActivityBucket(TypedDict):
    start: str
    calls: int
    failures: int
    offers: int


#: Calls, failures and offers of a tool per UTC day or hour. `from` is a Python keyword, so the
#: functional form: read it as `activity["from"]`.
Activity = TypedDict(
    "Activity",
    {
        "tool": str,
        "bucket": Literal["day", "hour"],
        "from": str,
        "to": str,
        "buckets": List[ActivityBucket],
    },
)


class Preview(TypedDict):
    before: ModelTool
    after: ModelTool


class Pin(TypedDict):
    tool: str
    pinned_at: str
    pinned_by: str


class PinsAnswer(TypedDict):
    pins: List[Pin]


class SuggestedPin(TypedDict):
    name: str
    served_runs: int
    share: float
    pinned: bool


class SuggestedPinsAnswer(TypedDict):
    share: float
    days: int
    served_runs: int
    covered_runs: int
    covered_share: float
    tools: List[SuggestedPin]


# ── Route, calls, outcomes, traces ─────────────────────────────────────────────────────────────


class RoutedTool(TypedDict):
    name: str
    rank: int
    score: float


class RouteResult(TypedDict):
    """The tools to offer for one request. `model_tools` goes to the model's `tools=` as it is."""

    turn_id: str
    routed: bool
    tools: List[RoutedTool]
    model_tools: List[JSON]


class _CallRequired(TypedDict):
    tool: str
    success: bool


class Call(_CallRequired, total=False):
    """One tool call to report. `id` makes a report idempotent; the client fills one in when absent."""

    id: str
    arguments: JSON
    error: Optional[str]
    request: Optional[str]
    turn_id: Optional[str]
    conversation_id: Optional[str]
    at: str


class RecordCallsAnswer(TypedDict):
    accepted: int
    duplicates: int


class TraceAnswer(TypedDict):
    turn_id: str
    calls: int


# ── Reviews and revisions ──────────────────────────────────────────────────────────────────────


class _EvidenceOptional(TypedDict, total=False):
    #: Why a failed call teaches no usage note (an outage, a refusal on the merits, no one's fault).
    why_no_note: str


class Evidence(_EvidenceOptional):
    evidence_id: str
    kind: Literal["failed_call", "missed_request", "confused_request", "successful_call"]
    tool: str
    text: str
    arguments: List[str]
    how: Optional[str]
    served_by: Optional[str]
    turn_id: Optional[str]
    call_id: Optional[str]
    at: str


class Refusal(TypedDict):
    tool: str
    kind: Literal["note", "request", "avoid", "call_example", "reply"]
    text: str
    reason: str
    detail: str


class RankChange(TypedDict):
    request: str
    before: Optional[int]
    after: Optional[int]


class Displacement(TypedDict):
    request: str
    tool: str


class HeldLine(TypedDict):
    """A suspicious line that keeps its revision proposed for a person, even under auto_apply."""

    kind: Literal["note", "request", "avoid", "call_example"]
    text: str
    reasons: List[str]


class RevisionLines(TypedDict):
    """The lines of a revision an approver may edit before applying."""

    notes_added: List[str]
    queries_added: List[str]
    avoid_added: List[str]
    call_example: Optional[str]


class LineEdit(TypedDict, total=False):
    """An edit of a revision's lines: each field absent stays as proposed."""

    notes_added: List[str]
    queries_added: List[str]
    avoid_added: List[str]
    call_example: Optional[str]


class _MemoryRunOptional(TypedDict, total=False):
    wording: str
    conversation: Optional[str]


class MemoryRun(_MemoryRunOptional):
    """A run a memory wording rests on; `wording` and `conversation` on revisions stored since they were recorded."""

    turn_id: Optional[str]
    call_id: Optional[str]
    at: str
    together: bool


class MemoryChange(TypedDict):
    """What a revision of kind `memory` changes in a tool's routing memory."""

    added: List[str]
    withdrawn: List[str]
    dropped: List[str]
    runs: List[MemoryRun]


class _RevisionOptional(TypedDict, total=False):
    held: List[HeldLine]
    proposed: RevisionLines
    edited_by: str
    kind: Literal["memory"]
    memory: MemoryChange


class Revision(_RevisionOptional):
    """A proposed change to one tool's entry, with its evidence; see docs/learning.md."""

    revision_id: str
    tool: str
    status: RevisionStatus
    created_at: str
    applied_at: Optional[str]
    approved_by: Optional[str]
    notes_added: List[str]
    queries_added: List[str]
    avoid_added: List[str]
    call_example: Optional[str]
    queries_withdrawn: List[str]
    displaced: List[Displacement]
    queries_displaced: List[Example]
    refused: List[Refusal]
    evidence: List[Evidence]
    ranks: List[RankChange]
    base_version: int
    applied_version: Optional[int]
    dismiss_reason: Optional[str]
    undone_at: Optional[str]
    undone_by: Optional[str]


class BulkError(TypedDict):
    code: str
    message: str


class _BulkItemOptional(TypedDict, total=False):
    status: RevisionStatus
    error: BulkError


class BulkItem(_BulkItemOptional):
    """One revision of a bulk decision: decided (`status`) or not (`error`)."""

    revision_id: str
    ok: bool


class BulkAnswer(TypedDict):
    results: List[BulkItem]
    decided: int
    failed: int


class RevisionsAnswer(TypedDict):
    revisions: List[Revision]
    next_cursor: Optional[str]


class Skip(TypedDict):
    tool: str
    reason: str


class Flag(TypedDict):
    tool: str
    flag: Literal["retrieved_never_called", "never_retrieved"]
    offered_turns: int
    calls: int
    routed_turns: int


class FlagsAnswer(TypedDict):
    flags: List[Flag]


class _ReviewOptional(TypedDict, total=False):
    memory: List["Revision"]


class Review(_ReviewOptional):
    review_id: str
    dry_run: bool
    revisions: List[Revision]
    refused: List[Refusal]
    skipped: List[Skip]
    flags: List[Flag]
    model_calls: int
    #: Runs whose attribution was doubtful: they taught nothing.
    doubtful_runs: int


# ── Quality, unregistered tools, settings ──────────────────────────────────────────────────────


class QualityDay(TypedDict):
    date: str
    routed_turns: int
    served_turns: int
    hits: int
    hit_rate: Optional[float]
    mrr: Optional[float]
    misses: int
    confusions: int
    failed_calls: int


class ServedHits(TypedDict):
    served_turns: int
    hits: int


class QualityRevision(TypedDict):
    revision_id: str
    tool: str
    applied_at: str
    undone_at: Optional[str]
    before: ServedHits
    after: ServedHits


class Missed(TypedDict):
    tool: str
    misses: int


class Confused(TypedDict):
    tool: str
    served_by: str
    count: int


class LineEdits(TypedDict):
    """One kind of line: proposed in applied revisions, kept word for word, taken out, written by approvers."""

    proposed: int
    kept: int
    taken_out: int
    written: int


class ApprovalLines(TypedDict):
    notes_added: LineEdits
    queries_added: LineEdits
    avoid_added: LineEdits
    call_example: LineEdits


class Approvals(TypedDict):
    """How approvers decided the revisions of lines created in the window, and what they edited."""

    decided: int
    applied_as_proposed: int
    applied_edited: int
    auto_applied: int
    dismissed: int
    edit_rate: Optional[float]
    lines: ApprovalLines


class Quality(TypedDict):
    """Routing hit rate per UTC day and what each applied revision changed (docs/api.md "Quality")."""

    days: List[QualityDay]
    revisions: List[QualityRevision]
    approvals: Approvals
    top_missed: List[Missed]
    top_confused: List[Confused]
    truncated: bool


class ToolDraft(TypedDict):
    name: str
    description: str
    parameters: JSON


class UnregisteredTool(TypedDict):
    name: str
    call_count: int
    failure_count: int
    last_seen_at: str
    definition_source: Literal["metadata", "inferred"]
    draft: ToolDraft
    untrusted: bool
    untrusted_reasons: List[str]


class UnregisteredAnswer(TypedDict):
    tools: List[UnregisteredTool]
    next_cursor: Optional[str]


class WhoAmI(TypedDict):
    """Who the token is on the agent: `admin` or the key's role, its key id, and its rights there."""

    role: Literal["agent", "operator", "approver", "read_only", "admin"]
    key_id: Optional[str]
    rights: List[Literal["read", "agent", "decide", "operator", "admin"]]


class Settings(TypedDict):
    """Every tool-learning setting in force (docs/configuration.md)."""

    min_calls: int
    min_failures: int
    min_misses: int
    min_confusions: int
    min_conversations: int
    max_notes: int
    max_avoid: int
    max_queries: int
    max_new_queries: int
    max_calls_per_tool: int
    max_tools: int
    min_offers: int
    min_turns: int
    show_learned_examples: bool
    top_k: int
    stable_tool_list_tokens: int
    review_schedule: str
    auto_apply: bool
    log_retention_days: int
    max_registered_tools: int
    model_calls_per_hour: int
    memory_bytes: int
    memory_auto_apply: bool
    hit_rate_drop_share: float
    definition_changes: str


class SettingsPatch(TypedDict, total=False):
    """Some settings to change; the rest keep their values."""

    min_calls: int
    min_failures: int
    min_misses: int
    min_confusions: int
    min_conversations: int
    max_notes: int
    max_avoid: int
    max_queries: int
    max_new_queries: int
    max_calls_per_tool: int
    max_tools: int
    min_offers: int
    min_turns: int
    show_learned_examples: bool
    top_k: int
    stable_tool_list_tokens: int
    review_schedule: str
    auto_apply: bool
    log_retention_days: int
    max_registered_tools: int
    model_calls_per_hour: int
    memory_bytes: int
    memory_auto_apply: bool
    hit_rate_drop_share: float
    definition_changes: str


#: A message of an OpenAI or Anthropic conversation, as the SDKs send it.
Message = Dict[str, Any]
