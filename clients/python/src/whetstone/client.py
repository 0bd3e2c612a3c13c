"""`Whetstone`: the v1 API for one agent, one method per operation an agent or an approver uses.

Each method sends one request and returns the answer body documented in docs/api.md (typed by
`whetstone.types`); a refused request raises a `WhetstoneError` subclass (`whetstone.errors`).
Admin operations (agents, keys, export and import) and the MCP endpoint are not here: they belong
to the deployer's tools and to MCP clients.
"""

import uuid
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._transport import Transport, quote
from .types import (
    Activity,
    BulkAnswer,
    Call,
    FlagsAnswer,
    Format,
    LineEdit,
    Message,
    ModelToolsAnswer,
    PinsAnswer,
    Preview,
    Quality,
    RecordCallsAnswer,
    RegisterToolsAnswer,
    Review,
    Revision,
    RevisionsAnswer,
    RevisionStatus,
    RouteResult,
    Settings,
    SettingsPatch,
    SuggestedPinsAnswer,
    ToolDef,
    ToolExamplesAnswer,
    ToolRow,
    ToolsAnswer,
    ToolVersionsAnswer,
    TraceAnswer,
    UnregisteredAnswer,
    WhoAmI,
)


class Whetstone:
    """A client of one Whetstone deployment, acting for one agent.

    `base_url` is the Worker's URL (`http://localhost:8787`), `token` the ADMIN_TOKEN or an agent or
    operator key (`wsk_...`). `timeout` is seconds per attempt; `retries` how many times a request
    is sent again after a 429, or after a 503 or a lost connection when sending it again is safe
    (see `whetstone._transport`); `backoff` the first wait in seconds when the answer names none.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        agent: str,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        self.agent = agent
        self._http = Transport(base_url, token, timeout=timeout, retries=retries, backoff=backoff)
        self._path = "/v1/agents/" + quote(agent)

    def __repr__(self) -> str:
        return "Whetstone(%r, agent=%r)" % (self._http.base_url, self.agent)

    def _tool(self, tool: str) -> str:
        return self._path + "/tools/" + quote(tool)

    def _revision(self, revision_id: str) -> str:
        return self._path + "/revisions/" + quote(revision_id)

    # ── Tools ──────────────────────────────────────────────────────────────────────────────

    def register_tools(self, tools: Sequence[ToolDef], *, augment: bool = False) -> RegisterToolsAnswer:
        """`PUT …/tools`: registers (or re-registers) tools; identical definitions change nothing."""
        body = {"tools": list(tools), "augment": augment}
        return self._http.send("PUT", self._path + "/tools", body=body, idempotent=True)

    def tools(self) -> ToolsAnswer:
        """`GET …/tools`: every tool row with its model view."""
        return self._http.send("GET", self._path + "/tools", idempotent=True)

    def model_tools(self, format: Format, *, defer: bool = False) -> ModelToolsAnswer:
        """`GET …/tools?format=…&defer=…`: the whole list as the model sees it, sorted, byte-stable."""
        query = {"format": format, "defer": defer}
        return self._http.send("GET", self._path + "/tools", query=query, idempotent=True)

    def tool(self, tool: str) -> ToolRow:
        """`GET …/tools/:tool`: one tool row."""
        return self._http.send("GET", self._tool(tool), idempotent=True)

    def delete_tool(self, tool: str) -> None:
        """`DELETE …/tools/:tool` (operator): deletes the row; its version history stays."""
        self._http.send("DELETE", self._tool(tool), idempotent=True)

    def tool_versions(self, tool: str) -> ToolVersionsAnswer:
        """`GET …/tools/:tool/versions`: every version, newest first."""
        return self._http.send("GET", self._tool(tool) + "/versions", idempotent=True)

    def tool_examples(self, tool: str) -> ToolExamplesAnswer:
        """`GET …/tools/:tool/examples`: example requests with their source."""
        return self._http.send("GET", self._tool(tool) + "/examples", idempotent=True)

    def tool_activity(self, tool: str, *, bucket: Optional[str] = None, span: Optional[int] = None) -> Activity:
        """`GET …/tools/:tool/activity`: calls, failures and offers per UTC `day` or `hour`."""
        query = {"bucket": bucket, "span": span}
        return self._http.send("GET", self._tool(tool) + "/activity", query=query, idempotent=True)

    def preview(
        self,
        tool: str,
        *,
        notes_added: Sequence[str] = (),
        avoid_added: Sequence[str] = (),
        queries_added: Sequence[str] = (),
        call_example: Optional[str] = None,
    ) -> Preview:
        """`POST …/tools/:tool/preview`: the model view now and with these lines added; writes nothing."""
        body = {
            "notes_added": list(notes_added),
            "avoid_added": list(avoid_added),
            "queries_added": list(queries_added),
            "call_example": call_example,
        }
        return self._http.send("POST", self._tool(tool) + "/preview", body=body, idempotent=True)

    def pins(self) -> PinsAnswer:
        """`GET …/pins`: the tools always loaded, never deferred."""
        return self._http.send("GET", self._path + "/pins", idempotent=True)

    def pin(self, tool: str) -> PinsAnswer:
        """`PUT …/tools/:tool/pin` (operator): pins a tool; the answer is every pin."""
        return self._http.send("PUT", self._tool(tool) + "/pin", idempotent=True)

    def unpin(self, tool: str) -> None:
        """`DELETE …/tools/:tool/pin` (operator)."""
        self._http.send("DELETE", self._tool(tool) + "/pin", idempotent=True)

    def suggested_pins(self, *, share: Optional[float] = None, days: Optional[int] = None) -> SuggestedPinsAnswer:
        """`GET …/pins/suggested`: the fewest tools that served `share` of the runs over `days`."""
        query = {"share": share, "days": days}
        return self._http.send("GET", self._path + "/pins/suggested", query=query, idempotent=True)

    # ── Route, calls, outcomes, traces ─────────────────────────────────────────────────────

    def route(
        self,
        request: str,
        *,
        conversation_id: Optional[str] = None,
        k: Optional[int] = None,
        format: Optional[Format] = None,
    ) -> RouteResult:
        """`POST …/route`: the tools to offer the model for one request; `model_tools` is its `tools=`.

        Logs a turn, so it is not sent again after a 503 or a lost connection.
        """
        body: Dict[str, Any] = {"request": request}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        if k is not None:
            body["k"] = k
        if format is not None:
            body["format"] = format
        return self._http.send("POST", self._path + "/route", body=body, idempotent=False)

    def record_calls(self, calls: Sequence[Call]) -> RecordCallsAnswer:
        """`POST …/calls`: reports calls. A call without an `id` gets a random one here, so a retried
        report is counted once (the API deduplicates by id: the second answer counts it in
        `duplicates`)."""
        body = {"calls": [_with_id(call) for call in calls]}
        return self._http.send("POST", self._path + "/calls", body=body, idempotent=True)

    def record_trace(
        self,
        messages: Sequence[Message],
        *,
        tools: Optional[Sequence[ToolDef]] = None,
        format: Optional[str] = None,
        conversation_id: Optional[str] = None,
        turn_id: Optional[str] = None,
    ) -> TraceAnswer:
        """`POST …/traces`: one agent run as the model saw it (OpenAI or Anthropic messages).
        Idempotent: a trace posted again records no call twice."""
        body: Dict[str, Any] = {"messages": list(messages)}
        if tools is not None:
            body["tools"] = list(tools)
        if format is not None:
            body["format"] = format
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        if turn_id is not None:
            body["turn_id"] = turn_id
        return self._http.send("POST", self._path + "/traces", body=body, idempotent=True)

    def outcome(self, turn_id: str, ok: bool, *, served_by: Optional[str] = None) -> None:
        """`POST …/outcomes`: whether a routed turn was served, and by which tool (one per turn)."""
        body: Dict[str, Any] = {"turn_id": turn_id, "ok": ok}
        if served_by is not None:
            body["served_by"] = served_by
        self._http.send("POST", self._path + "/outcomes", body=body, idempotent=True)

    # ── Reviews and revisions ──────────────────────────────────────────────────────────────

    def review(
        self,
        *,
        dry_run: bool = False,
        auto_apply: Optional[bool] = None,
        config: Optional[SettingsPatch] = None,
    ) -> Review:
        """`POST …/reviews` (operator): reads the log and proposes revisions; `dry_run` stores nothing.
        409 while another review of the agent runs."""
        body: Dict[str, Any] = {"dry_run": dry_run}
        if auto_apply is not None:
            body["auto_apply"] = auto_apply
        if config is not None:
            body["config"] = dict(config)
        return self._http.send("POST", self._path + "/reviews", body=body, idempotent=dry_run)

    def revisions(
        self,
        *,
        tool: Optional[str] = None,
        status: Optional[RevisionStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> RevisionsAnswer:
        """`GET …/revisions`: newest first; pass `next_cursor` as `cursor` for the next page."""
        query = {"tool": tool, "status": status, "limit": limit, "cursor": cursor}
        return self._http.send("GET", self._path + "/revisions", query=query, idempotent=True)

    def revision(self, revision_id: str) -> Revision:
        """`GET …/revisions/:id`: one revision with its evidence and ranks."""
        return self._http.send("GET", self._revision(revision_id), idempotent=True)

    def apply(self, revision_id: str, *, approved_by: str, edit: Optional[LineEdit] = None) -> Revision:
        """`POST …/revisions/:id/apply` (operator or approver), optionally with edited lines; 400 names a refused
        line and its check; 409 when it is no longer proposed."""
        body: Dict[str, Any] = {"approved_by": approved_by}
        if edit is not None:
            body["edit"] = edit
        return self._http.send("POST", self._revision(revision_id) + "/apply", body=body, idempotent=False)

    def decide_many(
        self, action: str, revision_ids: List[str], *, approved_by: str, reason: Optional[str] = None
    ) -> BulkAnswer:
        """`POST …/revisions/bulk` (operator or approver): apply or dismiss each revision on its own."""
        body: Dict[str, Any] = {"action": action, "approved_by": approved_by, "revision_ids": revision_ids}
        if reason is not None:
            body["reason"] = reason
        return self._http.send("POST", self._path + "/revisions/bulk", body=body, idempotent=False)

    def dismiss(self, revision_id: str, *, approved_by: str, reason: Optional[str] = None) -> Revision:
        """`POST …/revisions/:id/dismiss` (operator or approver): closes a proposed revision."""
        body: Dict[str, Any] = {"approved_by": approved_by}
        if reason is not None:
            body["reason"] = reason
        return self._http.send("POST", self._revision(revision_id) + "/dismiss", body=body, idempotent=False)

    def undo(self, tool: str, *, approved_by: str) -> Revision:
        """`POST …/tools/:tool/undo` (operator or approver): takes back the tool's newest applied revision.
        Sent twice it would step back twice, so it is never sent again on its own."""
        body = {"approved_by": approved_by}
        return self._http.send("POST", self._tool(tool) + "/undo", body=body, idempotent=False)

    # ── Flags, quality, unregistered tools, settings ───────────────────────────────────────

    def flags(self) -> FlagsAnswer:
        """`GET …/flags`: tools offered and never called, and tools never offered."""
        return self._http.send("GET", self._path + "/flags", idempotent=True)

    def quality(self, *, days: Optional[int] = None, tool: Optional[str] = None) -> Quality:
        """`GET …/quality`: routing hit rate per UTC day (1–90 days) and each applied revision's effect."""
        query = {"days": days, "tool": tool}
        return self._http.send("GET", self._path + "/quality", query=query, idempotent=True)

    def unregistered(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> UnregisteredAnswer:
        """`GET …/unregistered`: names seen in calls or traces with no tool row, with a draft."""
        query = {"limit": limit, "cursor": cursor}
        return self._http.send("GET", self._path + "/unregistered", query=query, idempotent=True)

    def whoami(self) -> WhoAmI:
        """`GET …/whoami`: the token's role on the agent, its key id and its rights (`decide`, …)."""
        return self._http.send("GET", self._path + "/whoami", idempotent=True)

    def config(self) -> Settings:
        """`GET …/config`: every tool-learning setting in force."""
        return self._http.send("GET", self._path + "/config", idempotent=True)

    def set_config(self, patch: SettingsPatch) -> Settings:
        """`PUT …/config` (operator): changes some settings; the answer is every setting now in force."""
        return self._http.send("PUT", self._path + "/config", body=dict(patch), idempotent=True)


def _with_id(call: Mapping[str, Any]) -> Dict[str, Any]:
    out = dict(call)
    if not out.get("id"):
        out["id"] = "py-" + uuid.uuid4().hex
    return out


__all__: List[str] = ["Whetstone"]
