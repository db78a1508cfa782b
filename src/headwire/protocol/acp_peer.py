"""The agent side of an ACP connection as a sans-IO state machine: JSON-RPC plus lifecycle.

:class:`AcpPeer` classifies each input line (:func:`headwire.protocol.jsonrpc.parse_message`),
enforces the Agent Client Protocol's lifecycle and keeps the ids of requests in flight in both
directions.  It returns :data:`Action` values and performs none: the server
(:mod:`headwire.acp.server`) runs the handlers and writes the frames it is given.

Lifecycle (:data:`TRANSITIONS`):

================  ===================================  ==============  ======================
phase             input                                next phase      what happens
================  ===================================  ==============  ======================
``connected``     ``initialize`` (valid params)        ``ready``       dispatched
``connected``     ``initialize`` (bad params)          ``connected``   ``-32602``
``connected``     any other request                    ``connected``   ``-32002`` not initialized
``ready``         ``initialize``                       ``ready``       dispatched (again)
``ready``         a known method                       ``ready``       dispatched
any               an unknown method                    unchanged       ``-32601``
any               ``session/cancel`` notification      unchanged       :class:`Cancel`
any               end of input                         ``closed``      our requests aborted
================  ===================================  ==============  ======================

A response to an id we never used, or already answered, is noted and ignored.
Malformed lines get the JSON-RPC error :func:`~headwire.protocol.jsonrpc.parse_message` chose.
"""

from __future__ import annotations

import reprlib
from collections import Counter
from enum import Enum
from typing import Any

from headwire.errors import LocalProtocolError
from headwire.protocol import jsonrpc as rpc
from headwire.records import dataclass

NOT_INITIALIZED = -32002
"""A request other than ``initialize`` arrived first (the code LSP uses for the same case)."""

METHODS = frozenset(
    {
        "initialize",
        "session/new",
        "session/load",
        "session/prompt",
        "session/set_mode",
        "session/set_model",
        "session/set_config_option",
    }
)
"""The requests headwire's agent answers."""


class Phase(Enum):
    """Where the connection stands."""

    CONNECTED = "connected"
    READY = "ready"
    CLOSED = "closed"


TRANSITIONS: dict[tuple[Phase, str], Phase] = {
    (Phase.CONNECTED, "initialize"): Phase.READY,
    (Phase.READY, "initialize"): Phase.READY,
    (Phase.READY, "request"): Phase.READY,
    (Phase.CONNECTED, "eof"): Phase.CLOSED,
    (Phase.READY, "eof"): Phase.CLOSED,
}
"""(phase, input) -> next phase for the inputs that are allowed; a request in ``connected``
other than ``initialize`` has no entry and is refused."""


@dataclass(frozen=True, slots=True)
class SendFrame:
    """Write this JSON-RPC message."""

    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Warn:
    """A diagnostic line for stderr."""

    text: str


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Run the handler of ``request`` and answer it with :meth:`AcpPeer.respond`."""

    request: rpc.Request


@dataclass(frozen=True, slots=True)
class Cancel:
    """``session/cancel`` for ``session_id``."""

    session_id: Any


@dataclass(frozen=True, slots=True)
class Resolve:
    """The client answered our request ``request_id``."""

    request_id: int
    response: rpc.Response


@dataclass(frozen=True, slots=True)
class Abort:
    """Our request ``request_id`` will get no answer (the connection ended)."""

    request_id: int


Action = SendFrame | Warn | Dispatch | Cancel | Resolve | Abort


class AcpPeer:
    """The protocol state of one ACP connection (agent side)."""

    def __init__(self) -> None:
        self.phase = Phase.CONNECTED
        self.incoming: Counter[rpc.Id] = Counter()
        """Ids of the client's requests we have not answered yet (a client may reuse one)."""
        self.outgoing: dict[int, str] = {}
        """Our requests waiting for the client's answer: id -> method."""
        self._next_id = 0

    def receive_line(self, line: bytes) -> list[Action]:
        """Classify one input line and say what to do about it."""
        if self.phase is Phase.CLOSED:
            raise LocalProtocolError("input after the end of input")
        message = rpc.parse_message(line)
        if message is None:
            return []
        if isinstance(message, rpc.BadMessage):
            details = message.data.get("details") if isinstance(message.data, dict) else None
            note = f"bad input: {message.message}" + (f" ({details})" if details else "")
            frame = rpc.error_response(message.id, message.code, message.message, message.data)
            return [Warn(note), SendFrame(frame)]
        if isinstance(message, rpc.Response):
            return self._on_response(message)
        if isinstance(message, rpc.Notification):
            return self._on_notification(message)
        return self._on_request(message)

    def end_of_input(self) -> list[Action]:
        """The client closed stdin: every request of ours ends unanswered."""
        if self.phase is Phase.CLOSED:
            return []
        self.phase = TRANSITIONS[(self.phase, "eof")]
        pending, self.outgoing = self.outgoing, {}
        return [Abort(request_id) for request_id in pending]

    def _on_request(self, req: rpc.Request) -> list[Action]:
        if req.method not in METHODS:
            error = rpc.RpcError.method_not_found(req.method)
            return [SendFrame(rpc.error_response(req.id, error.code, error.message, error.data))]
        kind = "initialize" if req.method == "initialize" else "request"
        if kind == "initialize":
            problem = _initialize_problem(req.params)
            if problem is not None:
                error = rpc.RpcError.invalid_params(problem)
                return [
                    SendFrame(rpc.error_response(req.id, error.code, error.message, error.data))
                ]
        next_phase = TRANSITIONS.get((self.phase, kind))
        if next_phase is None:
            return [
                SendFrame(
                    rpc.error_response(
                        req.id,
                        NOT_INITIALIZED,
                        "Server not initialized",
                        {"details": "call initialize first"},
                    )
                )
            ]
        self.phase = next_phase
        self.incoming[req.id] += 1
        return [Dispatch(req)]

    def _on_notification(self, note: rpc.Notification) -> list[Action]:
        if note.method != "session/cancel":
            return [Warn(f"ignoring notification {note.method!r}")]
        params = note.params if isinstance(note.params, dict) else {}
        return [Cancel(params.get("sessionId"))]

    def _on_response(self, message: rpc.Response) -> list[Action]:
        msg_id = message.id
        if not isinstance(msg_id, int) or isinstance(msg_id, bool) or msg_id not in self.outgoing:
            return [Warn(f"ignoring a response to unknown request id {reprlib.repr(msg_id)}")]
        del self.outgoing[msg_id]
        return [Resolve(msg_id, message)]

    # -- output ------------------------------------------------------------------------------

    def respond(self, request_id: rpc.Id, result: Any) -> SendFrame:
        """The success response to the client's request ``request_id``."""
        self._answered(request_id)
        return SendFrame(rpc.response(request_id, result))

    def respond_error(self, request_id: rpc.Id, error: rpc.RpcError) -> SendFrame:
        """The error response to the client's request ``request_id``."""
        self._answered(request_id)
        return SendFrame(rpc.error_response(request_id, error.code, error.message, error.data))

    def _answered(self, request_id: rpc.Id) -> None:
        if not self.incoming[request_id]:
            raise LocalProtocolError(
                f"request {reprlib.repr(request_id)} is not waiting for an answer"
            )
        self.incoming[request_id] -= 1
        if not self.incoming[request_id]:
            del self.incoming[request_id]

    def request(self, method: str, params: Any) -> tuple[int, SendFrame]:
        """A request of ours to the client; its id stays pending until :class:`Resolve`."""
        if self.phase is Phase.CLOSED:
            raise LocalProtocolError("the connection is closed")
        msg_id = self._next_id
        self._next_id += 1
        self.outgoing[msg_id] = method
        return msg_id, SendFrame(rpc.request(msg_id, method, params))

    def forget(self, request_id: int) -> None:
        """Stop waiting for our request ``request_id`` (its caller was cancelled)."""
        self.outgoing.pop(request_id, None)


def _initialize_problem(params: Any) -> str | None:
    if not isinstance(params, dict):
        return "params must be an object"
    version = params.get("protocolVersion")
    if not isinstance(version, int) or isinstance(version, bool):
        return "protocolVersion must be an integer"
    return None


__all__ = [
    "METHODS",
    "NOT_INITIALIZED",
    "TRANSITIONS",
    "Abort",
    "AcpPeer",
    "Action",
    "Cancel",
    "Dispatch",
    "Phase",
    "Resolve",
    "SendFrame",
    "Warn",
]
