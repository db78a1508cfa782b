"""JSON-RPC 2.0 framing for ACP over stdio, sans I/O: one message per line.

Every frame is one JSON object followed by ``\\n``, encoded by :func:`headwire.wire.encode` so the
bytes on the wire are exactly the bytes a projection counted.  This module only turns input lines
into typed messages and messages into frames; it reads and writes nothing.

Classification of one input line (JSON-RPC 2.0 section 5 error codes):

* not JSON: :class:`BadMessage` with ``-32700`` (Parse error) and id ``null``;
* JSON but not a request, notification or response (not an object, ``jsonrpc`` not ``"2.0"``,
  no string ``method``, an id that is not a string, number or null): ``-32600`` (Invalid
  Request), echoing the id when it is a valid one;
* an object with ``method`` and ``id``: :class:`Request`; with ``method`` and no ``id``:
  :class:`Notification`; with ``id`` and ``result`` or ``error`` and no ``method``:
  :class:`Response` (an answer to one of our own requests).
"""

from __future__ import annotations

import reprlib
from typing import Any

from headwire.errors import RemoteProtocolError
from headwire.records import dataclass
from headwire.wire import encode, loads

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSONRPC_VERSION",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "BadMessage",
    "Notification",
    "Request",
    "Response",
    "RpcError",
    "as_text",
    "error_response",
    "frame",
    "notification",
    "parse_message",
    "request",
    "response",
]

JSONRPC_VERSION = "2.0"
PARSE_ERROR = -32700
"""The line is not JSON."""
INVALID_REQUEST = -32600
"""The JSON is not a JSON-RPC 2.0 message."""
METHOD_NOT_FOUND = -32601
"""No handler for the request's ``method`` (named in ``error.data.method``)."""
INVALID_PARAMS = -32602
"""``params`` do not fit the method (also: an unknown ``sessionId``)."""
INTERNAL_ERROR = -32603
"""The handler failed."""

Id = str | int | float | None
"""A request id: JSON-RPC allows a string, a number or null."""


@dataclass(frozen=True, slots=True)
class Request:
    """A call from the peer that expects a response with the same ``id``."""

    id: Id
    method: str
    params: Any
    """The ``params`` value as sent (``None`` when absent)."""


@dataclass(frozen=True, slots=True)
class Notification:
    """A call from the peer without an ``id``: never answered, not even with an error."""

    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Response:
    """The peer's answer to one of our requests: ``result`` or ``error`` (an object)."""

    id: Id
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class BadMessage:
    """A line that is not a usable message; answer it with :func:`error_response`."""

    id: Id
    code: int
    message: str
    data: Any = None


class RpcError(RemoteProtocolError):
    """Raised by a request handler; becomes the ``error`` object of the response."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def invalid_params(cls, details: str) -> RpcError:
        """``-32602`` with a human-readable reason in ``data.details``."""
        return cls(INVALID_PARAMS, "Invalid params", {"details": details})

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        """``-32601`` naming the method in ``data.method``."""
        return cls(METHOD_NOT_FOUND, "Method not found", {"method": method})


def as_text(value: Any) -> str:
    """``value`` as text: a string as is, anything else by :func:`reprlib.repr` (bounded, so a
    value nested ~1,000 deep cannot overflow the stack as ``str()`` would)."""
    return value if isinstance(value, str) else reprlib.repr(value)


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def parse_message(line: bytes) -> Request | Notification | Response | BadMessage | None:
    """Classify one input line (``None`` for a blank line, which is skipped silently)."""
    if not line.strip():
        return None
    try:
        message = loads(line)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply to read
        return BadMessage(None, PARSE_ERROR, "Parse error", {"details": str(exc)})
    if not isinstance(message, dict):
        return BadMessage(
            None, INVALID_REQUEST, "Invalid Request", {"details": "a message must be a JSON object"}
        )
    raw_id = message.get("id")
    msg_id: Id = raw_id if _valid_id(raw_id) else None
    if message.get("jsonrpc") != JSONRPC_VERSION:
        return BadMessage(
            msg_id, INVALID_REQUEST, "Invalid Request", {"details": 'jsonrpc must be "2.0"'}
        )
    if not _valid_id(raw_id):
        return BadMessage(
            None,
            INVALID_REQUEST,
            "Invalid Request",
            {"details": "id must be a string, a number or null"},
        )
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            error = message.get("error")
            return Response(
                msg_id,
                message.get("result"),
                error
                if isinstance(error, dict)
                else (
                    None if error is None else {"code": INTERNAL_ERROR, "message": as_text(error)}
                ),
            )
        return BadMessage(msg_id, INVALID_REQUEST, "Invalid Request", {"details": "missing method"})
    method = message["method"]
    if not isinstance(method, str):
        return BadMessage(
            msg_id, INVALID_REQUEST, "Invalid Request", {"details": "method must be a string"}
        )
    params = message.get("params")
    if "id" not in message:
        return Notification(method, params)
    return Request(msg_id, method, params)


def response(msg_id: Id, result: Any) -> dict[str, Any]:
    """A success response (key order as upstream: ``jsonrpc``, ``id``, ``result``)."""
    return {"jsonrpc": JSONRPC_VERSION, "id": msg_id, "result": result}


def error_response(msg_id: Id, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """An error response; ``data`` is left out when ``None``."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC_VERSION, "id": msg_id, "error": error}


def notification(method: str, params: Any) -> dict[str, Any]:
    """A notification (no ``id``)."""
    return {"jsonrpc": JSONRPC_VERSION, "method": method, "params": params}


def request(msg_id: int, method: str, params: Any) -> dict[str, Any]:
    """A request of ours to the peer (key order as upstream: ``jsonrpc``, ``id``, ...)."""
    return {"jsonrpc": JSONRPC_VERSION, "id": msg_id, "method": method, "params": params}


def frame(message: dict[str, Any]) -> bytes:
    """The exact wire bytes of one message: ``JSON.stringify(message)`` and a newline."""
    return encode(message) + b"\n"
