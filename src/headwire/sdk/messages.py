"""Typed views of the stream-JSON wire messages, as a client reads them.

Every message a persistent session writes on stdout has a dataclass here, built from the
decoded JSON object by :func:`parse_message`.  Parsing is tolerant: unknown fields are ignored
(each object keeps the decoded dict in ``raw``), missing optional fields get neutral defaults,
unknown message types become :class:`UnknownMessage` and unknown content blocks
:class:`UnknownBlock`, so a newer CLI never breaks an older client.  Only a value that is not a
JSON object at all is an error (:class:`MessageParseError`).

The field names are the wire's (``session_id``, ``parent_tool_use_id`` ...), so a field means
what it means in Qwen Code's stream-JSON output.
"""

from __future__ import annotations

from typing import Any

from headwire.errors import RemoteProtocolError
from headwire.records import dataclass, field

JsonDict = dict[str, Any]


class MessageParseError(RemoteProtocolError, ValueError):
    """A line decoded to something that is not a message object."""


# -- content blocks ---------------------------------------------------------------------------


@dataclass(slots=True)
class TextBlock:
    """``{"type":"text","text"}``: assistant text (or user text)."""

    text: str
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class ThinkingBlock:
    """``{"type":"thinking","thinking","signature"?}``: reasoning; ``signature`` is its subject."""

    thinking: str
    signature: str | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class ToolUseBlock:
    """``{"type":"tool_use","id","name","input"}``: a tool call the model made."""

    id: str
    name: str
    input: JsonDict
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class ToolResultBlock:
    """``{"type":"tool_result","tool_use_id","is_error","content"?}``: a tool's result.

    ``content`` is the wire's display text (bounded by the CLI's projection), absent (``None``)
    when the tool had nothing to show; a list of blocks is passed through as decoded.
    """

    tool_use_id: str
    is_error: bool = False
    content: str | list[Any] | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class UnknownBlock:
    """A content block of a type this client does not know."""

    type: str
    raw: JsonDict = field(default_factory=dict, repr=False)


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | UnknownBlock


# -- messages ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactMetadata:
    """``compact_metadata`` of a compaction message: ``trigger`` (``auto`` or ``manual``),
    the estimated request tokens before it and, on ``compact_boundary``, after it and how long
    it took (headwire's fields; ``None`` from a CLI that does not send them)."""

    trigger: str
    pre_tokens: int
    post_tokens: int | None = None
    duration_ms: int | None = None


@dataclass(slots=True)
class SystemMessage:
    """``system``: ``init`` (once per turn: tools, model, permission mode) or an event.

    For ``init`` the typed fields are filled; for events (``task_started``,
    ``session_recording_degraded`` ...) the payload is ``data``.  A compaction is two
    messages: ``status`` with ``status == "compacting"`` when it starts and
    ``compact_boundary`` when it is done, both with ``compact_metadata``.
    """

    subtype: str
    session_id: str = ""
    uuid: str = ""
    cwd: str | None = None
    tools: list[str] = field(default_factory=list)
    mcp_servers: list[JsonDict] = field(default_factory=list)
    model: str | None = None
    permission_mode: str | None = None
    slash_commands: list[str] = field(default_factory=list)
    version: str | None = None
    agents: list[str] = field(default_factory=list)
    data: JsonDict | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)
    sandbox: JsonDict | None = None
    """``init``'s ``sandbox`` (headwire, only when a tool execution sandbox is configured)."""
    status: str | None = None
    compact_metadata: CompactMetadata | None = None
    parent_tool_use_id: str | None = None


@dataclass(slots=True)
class ToolResultBound:
    """``system``/``tool_result_bound`` (headwire, with ``--include-bound-records``): the
    ``tool_result`` of ``tool_use_id`` just before it was cut by the 65,536-byte bound from
    ``original_json_bytes`` to ``shown_json_bytes`` JSON bytes; ``artifact`` (``path``,
    ``sha256``, ``bytes``) is the file holding the whole output, ``None`` when none was saved.
    """

    tool_use_id: str
    original_json_bytes: int
    shown_json_bytes: int
    artifact: JsonDict | None = None
    session_id: str = ""
    parent_tool_use_id: str | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class AssistantMessage:
    """``assistant``: one model message (one block type per message, upstream's rule)."""

    uuid: str
    session_id: str
    model: str
    content: list[ContentBlock]
    parent_tool_use_id: str | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    usage: JsonDict = field(default_factory=dict)
    raw: JsonDict = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


@dataclass(slots=True)
class UserMessage:
    """``user``: a tool result (one ``tool_result`` block) or an echoed prompt."""

    content: list[ContentBlock] | str
    uuid: str = ""
    session_id: str = ""
    parent_tool_use_id: str | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The ``tool_result`` blocks."""
        if isinstance(self.content, str):
            return []
        return [b for b in self.content if isinstance(b, ToolResultBlock)]


@dataclass(slots=True)
class PermissionDenial:
    """One entry of ``result.permission_denials``: a tool call that was not allowed to run."""

    tool_name: str
    tool_use_id: str
    tool_input: JsonDict


@dataclass(slots=True)
class ResultMessage:
    """``result``: the end of a turn; ``error`` carries ``error.message`` when ``is_error``.

    ``errors`` is Claude Code's list of error texts (headwire writes ``[error.message]``; from
    a CLI that writes only ``error``, the list holds that one text).  ``total_cost_usd``,
    ``model_usage`` (the wire's ``modelUsage``), ``structured_output`` and ``stop_reason`` are
    ``None`` when the CLI did not send them.

    ``interim`` marks a subagent's mid-turn error ``result`` (upstream emits one when a
    subagent fails or is cancelled): it does not end the turn.  headwire marks it with
    ``parent_tool_use_id``; for a CLI that does not (upstream), :class:`~headwire.sdk.Session`
    recognises its shape while an ``agent`` call is open.
    """

    subtype: str
    session_id: str
    is_error: bool
    uuid: str = ""
    duration_ms: int = 0
    duration_api_ms: int = 0
    num_turns: int = 0
    result: str | None = None
    usage: JsonDict = field(default_factory=dict)
    permission_denials: list[PermissionDenial] = field(default_factory=list)
    error: str | None = None
    errors: list[str] = field(default_factory=list)
    stats: JsonDict | None = None
    total_cost_usd: float | None = None
    model_usage: JsonDict | None = None
    structured_output: Any = None
    stop_reason: str | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)
    parent_tool_use_id: str | None = None
    interim: bool = False
    exit_code: int | None = None
    """headwire's ``headwire.exit_code``: what a one-shot run exits with after this result
    (``None`` from a CLI that does not say)."""
    retryable: bool = False
    """headwire's ``headwire.retryable``: the failure is worth retrying (HTTP 429, 5xx, network)."""
    sandbox: JsonDict | None = None
    """headwire's ``sandbox`` (``{backend, filesystem, network, enforced}``), only when a tool
    execution sandbox is configured."""
    trace_id: str | None = None
    """headwire's ``trace_id``: the OpenTelemetry trace of the run, only with telemetry on."""


@dataclass(slots=True)
class StreamEvent:
    """``stream_event``: a partial message (``--include-partial-messages``) or progress."""

    event: JsonDict
    uuid: str = ""
    session_id: str = ""
    parent_tool_use_id: str | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)

    @property
    def event_type(self) -> str:
        """``event.type`` (``content_block_delta``, ``goal_state`` ...)."""
        return str(self.event.get("type", ""))


@dataclass(slots=True)
class ControlRequest:
    """``control_request``: a request from the CLI (``can_use_tool``, ``mcp_message``)."""

    request_id: str
    subtype: str
    request: JsonDict
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class ControlResponse:
    """``control_response``: the CLI's answer to one of the client's requests."""

    request_id: str
    subtype: str
    response: JsonDict | None = None
    error: str | None = None
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class ControlCancelRequest:
    """``control_cancel_request``: the CLI abandons a request (``None``: all of them)."""

    request_id: str | None
    raw: JsonDict = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class UnknownMessage:
    """A message of a type this client does not know (kept whole in ``raw``)."""

    type: str
    raw: JsonDict = field(default_factory=dict, repr=False)


Message = (
    SystemMessage
    | ToolResultBound
    | AssistantMessage
    | UserMessage
    | ResultMessage
    | StreamEvent
    | ControlRequest
    | ControlResponse
    | ControlCancelRequest
    | UnknownMessage
)


# -- parsing ----------------------------------------------------------------------------------


def _str(d: JsonDict, key: str, default: str = "") -> str:
    value = d.get(key)
    return value if isinstance(value, str) else default


def _opt_str(d: JsonDict, key: str) -> str | None:
    value = d.get(key)
    return value if isinstance(value, str) else None


def _int(d: JsonDict, key: str) -> int:
    value = d.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _dict(value: Any) -> JsonDict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def parse_block(block: Any) -> ContentBlock:
    """One content block; anything unrecognised becomes :class:`UnknownBlock`."""
    if not isinstance(block, dict):
        return UnknownBlock(type=type(block).__name__, raw={"value": block})
    kind = _str(block, "type")
    if kind == "text":
        return TextBlock(_str(block, "text"), raw=block)
    if kind == "thinking":
        return ThinkingBlock(_str(block, "thinking"), _opt_str(block, "signature"), raw=block)
    if kind == "tool_use":
        return ToolUseBlock(
            _str(block, "id"), _str(block, "name"), _dict(block.get("input")), raw=block
        )
    if kind == "tool_result":
        content = block.get("content")
        return ToolResultBlock(
            _str(block, "tool_use_id"),
            bool(block.get("is_error")),
            content if isinstance(content, str | list) else None,
            raw=block,
        )
    return UnknownBlock(kind, raw=block)


def _system(d: JsonDict) -> SystemMessage | ToolResultBound:
    if d.get("subtype") == "tool_result_bound":
        artifact = d.get("artifact")
        return ToolResultBound(
            tool_use_id=_str(d, "tool_use_id"),
            original_json_bytes=_int(d, "original_json_bytes"),
            shown_json_bytes=_int(d, "shown_json_bytes"),
            artifact=artifact if isinstance(artifact, dict) else None,
            session_id=_str(d, "session_id"),
            parent_tool_use_id=_opt_str(d, "parent_tool_use_id"),
            raw=d,
        )
    version = _opt_str(d, "qwen_code_version") or _opt_str(d, "claude_code_version")
    data = d.get("data")
    return SystemMessage(
        subtype=_str(d, "subtype"),
        session_id=_str(d, "session_id"),
        uuid=_str(d, "uuid"),
        cwd=_opt_str(d, "cwd"),
        tools=[t for t in _list(d.get("tools")) if isinstance(t, str)],
        mcp_servers=[s for s in _list(d.get("mcp_servers")) if isinstance(s, dict)],
        model=_opt_str(d, "model"),
        permission_mode=_opt_str(d, "permission_mode"),
        slash_commands=[c for c in _list(d.get("slash_commands")) if isinstance(c, str)],
        version=version,
        agents=[a for a in _list(d.get("agents")) if isinstance(a, str)],
        data=data if isinstance(data, dict) else None,
        raw=d,
        sandbox=d["sandbox"] if isinstance(d.get("sandbox"), dict) else None,
        status=_opt_str(d, "status"),
        compact_metadata=_compact_metadata(d.get("compact_metadata")),
        parent_tool_use_id=_opt_str(d, "parent_tool_use_id"),
    )


def _compact_metadata(value: Any) -> CompactMetadata | None:
    if not isinstance(value, dict):
        return None

    def number(key: str) -> int | None:
        found = value.get(key)
        return found if isinstance(found, int) and not isinstance(found, bool) else None

    return CompactMetadata(
        trigger=str(value.get("trigger") or ""),
        pre_tokens=number("pre_tokens") or 0,
        post_tokens=number("post_tokens"),
        duration_ms=number("duration_ms"),
    )


def _assistant(d: JsonDict) -> AssistantMessage:
    inner = _dict(d.get("message"))
    return AssistantMessage(
        uuid=_str(d, "uuid"),
        session_id=_str(d, "session_id"),
        model=_str(inner, "model"),
        content=[parse_block(b) for b in _list(inner.get("content"))],
        parent_tool_use_id=_opt_str(d, "parent_tool_use_id"),
        message_id=_opt_str(inner, "id"),
        stop_reason=_opt_str(inner, "stop_reason"),
        usage=_dict(inner.get("usage")),
        raw=d,
    )


def _user(d: JsonDict) -> UserMessage:
    content = _dict(d.get("message")).get("content")
    parsed: list[ContentBlock] | str = (
        content if isinstance(content, str) else [parse_block(b) for b in _list(content)]
    )
    return UserMessage(
        parsed,
        uuid=_str(d, "uuid"),
        session_id=_str(d, "session_id"),
        parent_tool_use_id=_opt_str(d, "parent_tool_use_id"),
        raw=d,
    )


def _result(d: JsonDict) -> ResultMessage:
    denials = [
        PermissionDenial(_str(x, "tool_name"), _str(x, "tool_use_id"), _dict(x.get("tool_input")))
        for x in _list(d.get("permission_denials"))
        if isinstance(x, dict)
    ]
    error = d.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    stats = d.get("stats")
    errors = [e for e in _list(d.get("errors")) if isinstance(e, str)]
    if not errors and message is not None and "errors" not in d:
        errors = [str(message)]
    cost = d.get("total_cost_usd")
    model_usage = d.get("modelUsage")
    contract = _dict(d.get("headwire"))
    code = contract.get("exit_code")
    return ResultMessage(
        exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
        retryable=contract.get("retryable") is True,
        sandbox=d["sandbox"] if isinstance(d.get("sandbox"), dict) else None,
        trace_id=_opt_str(d, "trace_id"),
        subtype=_str(d, "subtype"),
        session_id=_str(d, "session_id"),
        is_error=bool(d.get("is_error")),
        uuid=_str(d, "uuid"),
        duration_ms=_int(d, "duration_ms"),
        duration_api_ms=_int(d, "duration_api_ms"),
        num_turns=_int(d, "num_turns"),
        result=_opt_str(d, "result"),
        usage=_dict(d.get("usage")),
        permission_denials=denials,
        error=str(message) if message is not None else None,
        errors=errors,
        stats=stats if isinstance(stats, dict) else None,
        total_cost_usd=(
            float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        ),
        model_usage=model_usage if isinstance(model_usage, dict) else None,
        structured_output=d.get("structured_output"),
        stop_reason=_opt_str(d, "stop_reason"),
        raw=d,
        parent_tool_use_id=_opt_str(d, "parent_tool_use_id"),
        interim=_opt_str(d, "parent_tool_use_id") is not None,
    )


def _control_response(d: JsonDict) -> ControlResponse:
    body = _dict(d.get("response"))
    error = body.get("error")
    if isinstance(error, dict):
        error = error.get("message", error)
    response = body.get("response")
    return ControlResponse(
        request_id=_str(body, "request_id"),
        subtype=_str(body, "subtype"),
        response=response if isinstance(response, dict) else None,
        error=str(error) if error is not None else None,
        raw=d,
    )


def parse_message(data: Any) -> Message:
    """The typed message for one decoded stream-JSON line."""
    if not isinstance(data, dict):
        raise MessageParseError(
            f"a stream-JSON message must be an object, got {type(data).__name__}"
        )
    kind = data.get("type")
    if kind == "system":
        return _system(data)
    if kind == "assistant":
        return _assistant(data)
    if kind == "user":
        return _user(data)
    if kind == "result":
        return _result(data)
    if kind == "stream_event":
        return StreamEvent(
            _dict(data.get("event")),
            uuid=_str(data, "uuid"),
            session_id=_str(data, "session_id"),
            parent_tool_use_id=_opt_str(data, "parent_tool_use_id"),
            raw=data,
        )
    if kind == "control_request":
        request = _dict(data.get("request"))
        return ControlRequest(_str(data, "request_id"), _str(request, "subtype"), request, raw=data)
    if kind == "control_response":
        return _control_response(data)
    if kind == "control_cancel_request":
        return ControlCancelRequest(_opt_str(data, "request_id"), raw=data)
    return UnknownMessage(kind if isinstance(kind, str) else "", raw=data)


def user_input(prompt: str | list[JsonDict], session_id: str = "") -> JsonDict:
    """The input ``user`` line for ``prompt`` (with ``session_id`` and ``parent_tool_use_id``,
    which older CLIs require)."""
    return {
        "type": "user",
        "session_id": session_id,
        "message": {"role": "user", "content": prompt},
        "parent_tool_use_id": None,
    }


__all__ = [
    "AssistantMessage",
    "CompactMetadata",
    "ContentBlock",
    "ControlCancelRequest",
    "ControlRequest",
    "ControlResponse",
    "Message",
    "MessageParseError",
    "PermissionDenial",
    "ResultMessage",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolResultBound",
    "ToolUseBlock",
    "UnknownBlock",
    "UnknownMessage",
    "UserMessage",
    "parse_block",
    "parse_message",
    "user_input",
]
