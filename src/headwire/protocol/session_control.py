"""The persistent stream-JSON session's control protocol, as a sans-IO state machine.

``--input-format stream-json --output-format stream-json`` is Qwen Code's ``session.ts``
protocol, which the Qwen and Claude SDKs speak: the client writes JSON lines, the CLI writes
stream-JSON.  :class:`SessionControl` holds the protocol's state and turns what arrives into
:data:`Action` values; it reads and writes nothing, runs no turn and knows no agent (h11's
style: bytes-free events in, actions out).  The runner (:mod:`headwire.cli.run.session`)
performs the actions.

**Mode.** The first ``control_request`` ``initialize`` or ``user`` message fixes the mode
(:data:`TRANSITIONS`):

=============  ======================  ==========  ====================================
state          input                   next state  what happens
=============  ======================  ==========  ====================================
``awaiting``   ``initialize``          ``sdk``     answered
``awaiting``   other control request   ``awaiting``  answered
``awaiting``   ``user``                ``direct``  prompt queued
``sdk``        any control request     ``sdk``     answered
``sdk``        ``user``                ``sdk``     prompt queued
``direct``     ``interrupt``           ``direct``  answered
``direct``     other control request   ``direct``  refused (error ``control_response``)
``direct``     ``user``                ``direct``  prompt queued
=============  ======================  ==========  ====================================

In SDK mode permission requests go to the client (``can_use_tool``); in direct mode the
approval mode decides alone.  The end of input keeps the mode and sets :attr:`closed`: every
pending request is aborted and no line is accepted after it.

**Bad lines.** A line that is not JSON, not an object or has no ``type`` is answered with an
error ``control_response`` when it carried a string ``request_id``, else with an error
``result`` in its place in the turn queue (:class:`QueueRejection`), so results stay one per
submitted line, in order; a :class:`Warn` names its line number either way.

**Requests to the client.** :meth:`SessionControl.request_permission` allocates a request id and
remembers it as pending until a ``control_response`` answers it (:class:`Resolve`), the client
cancels it (``control_cancel_request``: :class:`Abort`), it times out, or input ends.
"""

from __future__ import annotations

import reprlib
from enum import Enum
from typing import Any

from headwire.errors import LocalProtocolError
from headwire.protocol import messages as m
from headwire.protocol.messages import JsonDict
from headwire.records import dataclass
from headwire.wire import encode
from headwire.wire.decode import loads


class Mode(Enum):
    """Where the session's control plane stands."""

    AWAITING = "awaiting"
    SDK = "sdk"
    DIRECT = "direct"


class Input(Enum):
    """What a routed line (or the end of input) is, for the mode table."""

    INITIALIZE = "initialize"
    INTERRUPT = "interrupt"
    CONTROL = "control"
    USER = "user"


TRANSITIONS: dict[tuple[Mode, Input], tuple[Mode, str]] = {
    (Mode.AWAITING, Input.INITIALIZE): (Mode.SDK, "answer"),
    (Mode.AWAITING, Input.INTERRUPT): (Mode.AWAITING, "answer"),
    (Mode.AWAITING, Input.CONTROL): (Mode.AWAITING, "answer"),
    (Mode.AWAITING, Input.USER): (Mode.DIRECT, "queue"),
    (Mode.SDK, Input.INITIALIZE): (Mode.SDK, "answer"),
    (Mode.SDK, Input.INTERRUPT): (Mode.SDK, "answer"),
    (Mode.SDK, Input.CONTROL): (Mode.SDK, "answer"),
    (Mode.SDK, Input.USER): (Mode.SDK, "queue"),
    (Mode.DIRECT, Input.INITIALIZE): (Mode.DIRECT, "refuse"),
    (Mode.DIRECT, Input.INTERRUPT): (Mode.DIRECT, "answer"),
    (Mode.DIRECT, Input.CONTROL): (Mode.DIRECT, "refuse"),
    (Mode.DIRECT, Input.USER): (Mode.DIRECT, "queue"),
}
"""(state, input) -> (next state, what to do).  A missing pair is a protocol error."""


# -- actions ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Send:
    """Write ``message`` on stdout."""

    message: JsonDict


@dataclass(frozen=True, slots=True)
class Warn:
    """A diagnostic line for stderr."""

    text: str


@dataclass(frozen=True, slots=True)
class QueuePrompt:
    """Queue a turn for ``text`` (turns run one at a time, first in first out)."""

    text: str


@dataclass(frozen=True, slots=True)
class QueueRejection:
    """Queue an error ``result`` in place of a turn (a bad line keeps its place in order)."""

    message: str


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Cancel the running turn (it still writes its error ``result``)."""


@dataclass(frozen=True, slots=True)
class Resolve:
    """The client answered our pending request ``request_id`` with ``body``."""

    request_id: str
    body: JsonDict


@dataclass(frozen=True, slots=True)
class Abort:
    """Our pending request ``request_id`` (``None``: every one) ended without an answer."""

    request_id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class Control:
    """A control request the runner answers from live state with :meth:`SessionControl.answer`
    (``set_model``, ``set_permission_mode``, ``get_context_usage`` …), already validated."""

    request_id: str
    subtype: str
    request: JsonDict


Action = Send | Warn | QueuePrompt | QueueRejection | Interrupt | Resolve | Abort | Control

CAPABILITIES: JsonDict = {
    "can_handle_can_use_tool": True,
    "can_handle_hook_callback": False,
    "can_set_permission_mode": True,
    "can_set_model": True,
    "can_set_effort": False,
    "can_get_context_usage": True,
    "can_get_available_models": True,
    "can_get_usage_info": True,
    "can_handle_mcp_message": False,
}
"""What ``initialize`` announces."""

RUNNER_SUBTYPES = frozenset(
    {
        "initialize",
        "set_model",
        "set_permission_mode",
        "supported_commands",
        "mcp_server_status",
        "mcp_status",
        "get_context_usage",
        "compact",
        "get_available_models",
        "get_usage_info",
    }
)
"""Control requests whose answer needs the runner's live state."""


def as_text(value: Any) -> str:
    """A client's value as text: a string as is, anything else by :func:`reprlib.repr`
    (bounded: ``str()`` of a value nested ~1,000 deep overflows the stack)."""
    return value if isinstance(value, str) else reprlib.repr(value)


def prompt_text(message: Any) -> str | None:
    """The prompt of an input ``user`` message: a string, or its blocks joined by newlines
    (text blocks as their text, others as compact JSON); ``None`` when it has none."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = []
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ):
            parts.append(block["text"])
        else:
            try:
                parts.append(encode(block).decode("utf-8", "surrogatepass"))
            except (TypeError, ValueError, RecursionError):  # nested deeper than we write
                return None
    return "\n".join(parts)


class SessionControl:
    """The control-plane state of one persistent session."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.mode = Mode.AWAITING
        self.closed = False
        """Input ended: no further line is accepted."""
        self.lineno = 0
        """Number of the last line received (1-based), for diagnostics."""
        self.pending: set[str] = set()
        """Our requests to the client still waiting for an answer."""
        self._next_request = 0

    # -- input -------------------------------------------------------------------------------

    def receive_line(self, raw: bytes) -> list[Action]:
        """Route one input line (without its newline)."""
        if self.closed:
            raise LocalProtocolError("input line after the end of input")
        self.lineno += 1
        if not raw.strip():
            return []
        try:
            message = loads(raw)
        except (ValueError, RecursionError) as exc:
            return self._bad_line(f"not valid JSON ({exc})")
        if not isinstance(message, dict):
            return self._bad_line(f"a message must be a JSON object, not {type(message).__name__}")
        kind = message.get("type")
        try:
            if not isinstance(kind, str):
                return self._bad_line('missing required "type" field', message.get("request_id"))
            if kind == "control_response":
                return self._on_response(message)
            if kind == "control_cancel_request":
                return self._on_cancel(message)
            if kind == "control_request":
                return self._on_request(message)
            if kind == "user":
                return self._on_user(message)
            return [Warn(f"stdin line {self.lineno}: ignoring message of type {kind!r}")]
        except RecursionError:  # a member nested ~1,000 deep
            return self._bad_line("a value is nested too deeply", message.get("request_id"))

    def end_of_input(self) -> list[Action]:
        """Input ended: no further line; every pending request is aborted."""
        if self.closed:
            return []
        self.closed = True
        self.pending.clear()
        return [Abort(None, "got no answer: input closed")]

    def _bad_line(self, reason: str, request_id: Any = None) -> list[Action]:
        where = f"stdin line {self.lineno}: {reason}"
        if isinstance(request_id, str):
            return [Warn(where), Send(m.control_error(request_id, where))]
        return [
            Warn(where),
            QueueRejection(f"Failed to parse stream-json line {self.lineno}: {reason}"),
        ]

    def _on_response(self, message: JsonDict) -> list[Action]:
        body = message.get("response")
        if not isinstance(body, dict):
            return [Warn(f"stdin line {self.lineno}: control_response without a response object")]
        request_id = body.get("request_id")  # never str() it: it may be nested ~1,000 deep
        if not isinstance(request_id, str) or request_id not in self.pending:
            return [
                Warn(
                    f"stdin line {self.lineno}: control_response for a request that is no longer "
                    "pending, ignored"
                )
            ]
        self.pending.discard(request_id)
        return [Resolve(request_id, body)]

    def _on_cancel(self, message: JsonDict) -> list[Action]:
        target = message.get("request_id")
        if target is None:
            ended, self.pending = self.pending, set()
            return [
                Abort(request_id, "was cancelled by the client") for request_id in sorted(ended)
            ]
        if isinstance(target, str) and target in self.pending:
            self.pending.discard(target)
            return [Abort(target, "was cancelled by the client")]
        return []

    def _on_request(self, message: JsonDict) -> list[Action]:
        request = message.get("request")
        request_id = message.get("request_id")
        if not isinstance(request_id, str) or not request_id:
            return self._bad_line("control_request needs a string request_id")
        if not isinstance(request, dict):
            return self._bad_line("control_request needs a request object", request_id)
        subtype = request.get("subtype")
        kind = (
            Input.INITIALIZE
            if subtype == "initialize"
            else Input.INTERRUPT
            if subtype == "interrupt"
            else Input.CONTROL
        )
        self.mode, action = TRANSITIONS[(self.mode, kind)]
        if action == "refuse":
            return [
                Warn(
                    f"stdin line {self.lineno}: control request {as_text(subtype)!r} refused in "
                    "direct mode"
                ),
                Send(
                    m.control_error(
                        request_id,
                        f"Control request {as_text(subtype)} refused: this session started "
                        "without initialize (direct mode)",
                    )
                ),
            ]
        if kind is Input.INTERRUPT:
            return [Interrupt(), Send(m.control_success(request_id, {"subtype": "interrupt"}))]
        if subtype == "set_model":
            model = request.get("model")
            if not isinstance(model, str) or not model:
                return [Send(m.control_error(request_id, "set_model requires a model name"))]
        if not isinstance(subtype, str) or subtype not in RUNNER_SUBTYPES:
            return [
                Send(
                    m.control_error(
                        request_id, f"Unknown control request subtype: {as_text(subtype)}"
                    )
                )
            ]
        return [Control(request_id, subtype, request)]

    def _on_user(self, message: JsonDict) -> list[Action]:
        self.mode, _ = TRANSITIONS[(self.mode, Input.USER)]
        text = prompt_text(message.get("message"))
        if text is None:
            return self._bad_line(
                "user message needs message.content (a string or a list of blocks)"
            )
        if not text.strip():
            return [Warn(f"stdin line {self.lineno}: empty prompt ignored")]
        return [QueuePrompt(text)]

    # -- output ------------------------------------------------------------------------------

    def answer(self, request_id: str, response: JsonDict | None) -> Send:
        """The success ``control_response`` to the client's request ``request_id``."""
        return Send(m.control_success(request_id, response))

    def refuse(self, request_id: str, error: str) -> Send:
        """The error ``control_response`` to the client's request ``request_id``."""
        return Send(m.control_error(request_id, error))

    def initialize_response(self) -> JsonDict:
        """The body of a successful ``initialize`` answer."""
        return {
            "subtype": "initialize",
            "session_id": self.session_id,
            "capabilities": CAPABILITIES,
        }

    def request_permission(self, request_id: str, request: JsonDict) -> Send:
        """Ask the client (SDK mode only) with ``can_use_tool``; the id stays pending."""
        if self.mode is not Mode.SDK:
            raise LocalProtocolError(f"permission requests need SDK mode, not {self.mode.value}")
        self.pending.add(request_id)
        return Send(m.control_request(request_id, {"subtype": "can_use_tool", **request}))

    def request_hook_callback(self, request_id: str, request: JsonDict) -> Send:
        """Run one of the client's hook callbacks (SDK mode only) with ``hook_callback``
        (``callback_id``, ``input``, ``tool_use_id``); the id stays pending."""
        if self.mode is not Mode.SDK:
            raise LocalProtocolError(f"hook callbacks need SDK mode, not {self.mode.value}")
        self.pending.add(request_id)
        return Send(m.control_request(request_id, {"subtype": "hook_callback", **request}))

    def give_up(self, request_id: str) -> Send | None:
        """Stop waiting for ``request_id`` (timed out, or the turn was cancelled): tell the
        client with ``control_cancel_request`` when it was still pending."""
        if request_id not in self.pending:
            return None
        self.pending.discard(request_id)
        return Send({"type": "control_cancel_request", "request_id": request_id})


__all__ = [
    "CAPABILITIES",
    "TRANSITIONS",
    "Abort",
    "Action",
    "Control",
    "Input",
    "Interrupt",
    "Mode",
    "QueuePrompt",
    "QueueRejection",
    "Resolve",
    "Send",
    "SessionControl",
    "Warn",
    "as_text",
    "prompt_text",
]
