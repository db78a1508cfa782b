"""The agent's one event stream: what happened in a turn, as frozen values.

:class:`~headwire.runtime.agent.loop.Agent` publishes every event of a turn to one
:data:`EventSink`; each front end subscribes and turns them into its own output:

* the headless emitter (:mod:`headwire.headless`) -> ``system``/``assistant``/``user``/
  ``stream_event``/``result`` messages -> a transport (text, json, stream-json, a session) and
  the Dual Output sidecar;
* the ACP updates (:mod:`headwire.acp.event_updates`) -> ``session/update`` notifications;
* the recorder (:mod:`headwire.runtime.store.record_events`) -> the session's JSONL recording.

Events carry data only, never wire messages, and nothing in them is projected: a
:class:`ToolFinished` holds the full display and the model-facing text; each consumer bounds
what it writes at its own boundary (:mod:`headwire.boundary`).

Every event has ``parent``: ``None`` for the main agent, else the id of the ``agent`` tool call
whose subagent produced it (upstream's ``parent_tool_use_id``).

Order within one model call: :class:`ModelCallStarted`, any number of :class:`TextDelta`,
:class:`ThinkingDelta` and :class:`ToolUse` as they stream, then :class:`ModelCallFinished`.
Each tool call then runs: :class:`ToolCallPending`, :class:`ToolStarted` (only when it was
allowed to run), any :class:`ToolProgress`, :class:`ToolFinished`.  A turn opens with
:class:`TurnStarted` and :class:`UserPrompt` and ends with exactly one :class:`TurnFinished`,
also when it is cancelled or fails.  A compaction of the conversation
(:mod:`headwire.runtime.agent.context_keeper`) is :class:`CompactionStarted` then
:class:`CompactionFinished`, before a model call's :class:`ModelCallStarted`, or after it when
the provider refused the request as too long (the call is then made again), or between turns
for a manual one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from headwire.records import dataclass, field

JsonDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of a model call or a turn (``usage`` on the wire: input/output/cache-read/
    total).

    ``input_tokens`` counts the whole prompt, cached parts included; ``cached_tokens`` is the
    part read from the provider's prompt cache (``cache_read_input_tokens`` on the wire) and
    ``cache_write_tokens`` the part written to it (Anthropic's ``cache_creation_input_tokens``;
    not on the wire, 0 when the provider does not say).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.total_tokens + other.total_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class ToolResponse:
    """What the runtime knows about one finished tool call, unprojected.

    ``output``: the model-facing text (upstream's ``functionResponse.response.output``), after
    its model-side bound, ``None`` when the call produced no response part.  ``part_error``: a
    detailed model-facing error (``functionResponse.response.error``).  ``error``: the short
    error message of a failed call.  ``error_type``: why it failed (``execution_denied`` for a
    refused call).  ``display``: the tool's semantic display string (the full text; ``None``
    when the tool has none).
    """

    call_id: str
    name: str
    args: JsonDict
    output: str | None = None
    part_error: str | None = None
    error: str | None = None
    error_type: str | None = None
    display: str | None = None

    @property
    def failed(self) -> bool:
        """Whether the call failed (``is_error`` on every wire)."""
        return self.error is not None or bool(self.part_error)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """What ``system/init`` announces at the start of every turn."""

    session_id: str
    cwd: str
    tools: tuple[str, ...]
    mcp_servers: tuple[JsonDict, ...]
    model: str
    permission_mode: str
    version: str
    agents: tuple[str, ...]
    skills: tuple[str, ...] = ()
    """The skills a ``/name`` prompt can run (``slash_commands``, as upstream lists them)."""
    sandbox: JsonDict | None = None
    """The tool execution sandbox in force (``{backend, filesystem, network, enforced}``),
    ``None`` when none is configured."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    """A user prompt starts a turn of the main agent."""

    info: SessionInfo
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserPrompt:
    """The prompt entered the conversation (``message``: its conversation form)."""

    text: str
    message: JsonDict
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCallStarted:
    """A model call begins; ``message_id`` is the id of its first assistant message."""

    message_id: str
    model: str
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of the assistant's answer text, as it streams."""

    text: str
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta:
    """A piece of the assistant's reasoning, as it streams."""

    text: str
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUse:
    """The model asked for a tool call (a ``tool_use`` block of the assistant message)."""

    call_id: str
    name: str
    args: JsonDict
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCallFinished:
    """The model call ended: its usage and the assistant message as the conversation keeps it."""

    usage: Usage
    message: JsonDict
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallPending:
    """A requested call is about to be checked and run (ACP announces it as ``pending``)."""

    call_id: str
    name: str
    args: JsonDict
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    """The call was allowed and starts running."""

    call_id: str
    name: str
    args: JsonDict
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    """A running call reported progress (MCP progress notifications)."""

    call_id: str
    content: JsonDict
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFinished:
    """The call finished, failed or was refused: the unprojected response.

    ``model_text``: what the conversation keeps as the call's result (the model-facing text,
    also for a failed call).  ``artifact``: the private file holding the full output, when one
    was written.
    """

    response: ToolResponse
    model_text: str
    artifact: str | None = None
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAbandoned:
    """A requested call got no result because the turn was cancelled; ``message`` says so."""

    call_id: str
    message: str
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStarted:
    """The ``agent`` tool call ``call_id`` starts a subagent on ``prompt``."""

    task_id: str
    call_id: str
    description: str
    subagent_type: str
    prompt: str
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentFinished:
    """The subagent of ``call_id`` ended: ``completed``, ``failed`` or ``cancelled``."""

    task_id: str
    call_id: str
    status: Literal["completed", "failed", "cancelled"]
    duration_ms: int
    tool_uses: int
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentFailed:
    """A subagent failed or was cancelled mid-turn (upstream's interim error ``result``).

    ``call_id``: the ``agent`` call whose subagent failed; headwire's interim ``result`` carries
    it as ``parent_tool_use_id`` (upstream sends none, which makes it look like the end of the
    turn).
    """

    message: str
    call_id: str
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordingDegraded:
    """The session recording stopped working; the run goes on unrecorded.

    ``message``: what the wire says (upstream's notice); ``reason``: the error, for stderr.
    """

    session_id: str
    message: str
    reason: str
    parent: str | None = None


CompactionTrigger = Literal["auto", "manual"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionStarted:
    """The conversation is being compacted (a summary call runs next).

    ``trigger``: ``auto`` (the next request would pass the threshold, or the provider said it
    was too long) or ``manual`` (``/compact``, a control request); ``pre_tokens``: the
    estimated size of the request before it.
    """

    trigger: CompactionTrigger
    pre_tokens: int
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionFinished:
    """The conversation was compacted: ``messages`` is the new history (the recording's
    checkpoint), ``post_tokens`` its estimated request size, ``usage`` the summary call's."""

    trigger: CompactionTrigger
    pre_tokens: int
    post_tokens: int
    duration_ms: int
    usage: Usage = field(default_factory=Usage)
    messages: tuple[JsonDict, ...] = ()
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HookRan:
    """A configured hook (or an SDK client's hook callback) ran for ``event``.

    ``outcome``: ``success``, ``blocked`` (exit code 2 or a deny), ``error`` (any other exit
    code, a failed start), ``timeout`` (killed) or ``cancelled``; ``exit_code`` is ``None``
    when the process did not end by itself.  ``stdout``/``stderr`` are kept whole here (at most
    :data:`headwire.runtime.hooks.runner.MAX_OUTPUT_BYTES` each); the wire bounds them.
    """

    event: str
    hook_name: str
    outcome: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    parent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStats:
    """Per-tool call counts of a turn (JSON mode's ``stats.tools.byName``)."""

    count: int = 0
    success: int = 0
    fail: int = 0
    duration_ms: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStats:
    """What a turn cost: model requests, errors, latency, usage and tool calls."""

    model: str
    requests: int = 0
    errors: int = 0
    api_ms: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    tool_success: int = 0
    tool_fail: int = 0
    tool_ms: int = 0
    by_tool: tuple[tuple[str, ToolStats], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCost:
    """One model's share of a session: its usage and, when its price is known, what it cost.

    ``cost_usd`` is ``None`` when the model has no price (``costUSD: null`` on the wire, never
    ``0``); ``context_window`` and ``max_output_tokens`` are ``None`` when unknown.
    """

    usage: Usage
    cost_usd: float | None
    context_window: int | None = None
    max_output_tokens: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCost:
    """What a session has cost so far, every model call counted (subagents' too), cumulative
    across its turns and across ``--resume`` (the result's ``total_cost_usd`` and
    ``modelUsage``).

    ``total_usd`` is the sum of the models' costs, ``None`` as soon as one model that was used
    has no price; ``by_model`` keeps the order in which the models were first used.
    """

    total_usd: float | None = 0.0
    by_model: tuple[tuple[str, ModelCost], ...] = ()


Limit = Literal["turns", "budget", "duration", "tool_calls"]
"""Which run limit ended a turn: ``--max-session-turns``/``--max-turns``,
``--max-budget-usd``, ``--max-duration``, ``--max-tool-calls``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    """The turn ended (exactly once per :class:`TurnStarted`).

    ``error`` is ``None`` on success, else the message of the error ``result``; ``subtype`` is
    ``success`` or an error subtype (``error_during_execution``, ``error_max_turns``,
    ``error_max_budget_usd``, ``error_max_structured_output_retries``); ``cancelled`` is set
    when the turn was cancelled (an interrupt or a signal); ``limit`` names the run limit that
    ended it.  ``text`` is the answer, or on an error the last answer text the turn produced
    (the partial answer).  ``stop_reason``: why the last model call stopped (``end_turn``,
    ``tool_use``, ``max_tokens``, ``refusal``), ``None`` when no call finished.
    ``structured`` says whether ``structured_output`` holds the value that matched
    ``--json-schema``.  ``cost`` is the session's running total.  ``retryable``: the turn failed
    on a model error worth retrying as is (HTTP 429, 5xx, a network failure or timeout).
    """

    text: str
    error: str | None
    subtype: str
    num_turns: int
    duration_ms: int
    stats: TurnStats
    cancelled: bool = False
    limit: Limit | None = None
    stop_reason: str | None = None
    structured: bool = False
    structured_output: Any = None
    cost: RunCost = field(default_factory=RunCost)
    retryable: bool = False
    parent: str | None = None


Event = (
    TurnStarted
    | UserPrompt
    | ModelCallStarted
    | TextDelta
    | ThinkingDelta
    | ToolUse
    | ModelCallFinished
    | ToolCallPending
    | ToolStarted
    | ToolProgress
    | ToolFinished
    | ToolAbandoned
    | SubagentStarted
    | SubagentFinished
    | SubagentFailed
    | RecordingDegraded
    | CompactionStarted
    | CompactionFinished
    | TurnFinished
    | HookRan
)
"""Every event the agent publishes."""

EventSink = Callable[[Event], None]
"""Where events go; it must not block (consumers encode and hand bytes to a writer)."""


class Broadcast:
    """An :data:`EventSink` that hands each event to its subscribers, in subscription order.

    A subscriber may publish an event while it handles one (the recorder announces
    :class:`RecordingDegraded`): that event reaches every subscriber at once, before the rest of
    the subscribers see the current one, so a notice lands on the wire where the failure
    happened.
    """

    def __init__(self, *subscribers: EventSink) -> None:
        self._subscribers: list[EventSink] = list(subscribers)

    def subscribe(self, subscriber: EventSink) -> None:
        """Add a subscriber; it sees every event published from now on."""
        self._subscribers.append(subscriber)

    def __call__(self, event: Event) -> None:
        for subscriber in self._subscribers:
            subscriber(event)


__all__ = [
    "Broadcast",
    "CompactionFinished",
    "CompactionStarted",
    "CompactionTrigger",
    "Event",
    "EventSink",
    "HookRan",
    "Limit",
    "ModelCallFinished",
    "ModelCallStarted",
    "ModelCost",
    "RecordingDegraded",
    "RunCost",
    "SessionInfo",
    "SubagentFailed",
    "SubagentFinished",
    "SubagentStarted",
    "TextDelta",
    "ThinkingDelta",
    "ToolAbandoned",
    "ToolCallPending",
    "ToolFinished",
    "ToolProgress",
    "ToolResponse",
    "ToolStarted",
    "ToolStats",
    "ToolUse",
    "TurnFinished",
    "TurnStarted",
    "TurnStats",
    "Usage",
    "UserPrompt",
]
