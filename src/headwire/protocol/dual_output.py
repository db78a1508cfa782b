"""The Dual Output protocol (``--json-fd`` / ``--json-file``, ``--input-file``), sans I/O.

The sidecar carries the stream-JSON event schema next to human output: every headless message
of the session, partial messages included, one JSON line each, bounded at the same tool-result
boundary as every other wire.  :class:`DualOutputProtocol` produces its bytes and reads its
reverse channel; it touches no descriptor (the bridge in :mod:`headwire.io.dual_output` writes).

* The first frame is ``system/session_start`` with ``data.protocol_version`` =
  :data:`PROTOCOL_VERSION` (2: textual ``tool_result`` content is bounded for transport); the
  last is ``system/session_end``, exactly once; nothing is framed after it.
* A permission request is mirrored as a ``control_request`` ``can_use_tool`` and its outcome as
  a ``control_response`` ``{"allowed": bool}``.
* Reverse-channel commands: ``{"type": "submit", "text": str}`` queues a prompt;
  ``{"type": "confirmation_response", "request_id": str, "allowed": bool}`` answers a pending
  request — ``allowed`` must be a JSON boolean (``"false"`` is refused, never read as true);
  an answer to no pending request gets an error ``control_response``.

States: ``open`` -> ``ended`` (after :meth:`DualOutputProtocol.end`); framing in ``ended`` is a
:class:`~headwire.errors.LocalProtocolError`.
"""

from __future__ import annotations

import reprlib
from typing import Any

from headwire.errors import LocalProtocolError
from headwire.protocol import messages as m
from headwire.protocol.messages import JsonDict
from headwire.records import dataclass
from headwire.wire import encode

PROTOCOL_VERSION = 2
SUPPORTED_EVENTS = [
    "system",
    "user",
    "assistant",
    "stream_event",
    "result",
    "control_request",
    "control_response",
]


@dataclass(frozen=True, slots=True)
class Submit:
    """Queue ``text`` as a prompt for when the agent is idle."""

    text: str


@dataclass(frozen=True, slots=True)
class Confirm:
    """The pending permission request ``request_id`` was answered.  ``reply``: an error frame
    to write back when the answer was not a JSON boolean (it counts as a denial)."""

    request_id: str
    allowed: bool
    reply: bytes | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """Frame this message on the sidecar (an error answer to a bad command)."""

    frame: bytes


@dataclass(frozen=True, slots=True)
class Ignore:
    """Nothing to do; ``reason`` is worth a note on stderr when set."""

    reason: str | None = None


Command = Submit | Confirm | Reply | Ignore


class DualOutputProtocol:
    """Frames of one session's sidecar and the reading of its reverse channel."""

    def __init__(self, session_id: str, new_uuid: Any) -> None:
        self.session_id = session_id
        self.new_uuid = new_uuid
        self.ended = False
        self.pending: set[str] = set()
        """Mirrored permission requests waiting for a ``confirmation_response``."""

    def _frame(self, message: JsonDict) -> bytes:
        if self.ended:
            raise LocalProtocolError("the sidecar already ended (session_end was sent)")
        return encode(message) + b"\n"

    def start(self, cwd: str, version: str) -> bytes:
        """``system/session_start``: the first frame."""
        data = {
            "session_id": self.session_id,
            "cwd": cwd,
            "protocol_version": PROTOCOL_VERSION,
            "version": version,
            "supported_events": SUPPORTED_EVENTS,
        }
        return self._frame(
            m.system_event(
                uuid=self.new_uuid(), session_id=self.session_id, subtype="session_start", data=data
            )
        )

    def event(self, message: JsonDict) -> bytes:
        """One headless message of the session, framed."""
        return self._frame(message)

    def end(self) -> bytes:
        """``system/session_end``: the last frame (an empty result once already sent)."""
        if self.ended:
            return b""
        frame = self._frame(
            m.system_event(
                uuid=self.new_uuid(),
                session_id=self.session_id,
                subtype="session_end",
                data={"session_id": self.session_id},
            )
        )
        self.ended = True
        return frame

    def permission_request(
        self, request_id: str, tool_name: str, call_id: str, args: JsonDict
    ) -> bytes:
        """Mirror a permission request; it stays pending until answered or settled."""
        self.pending.add(request_id)
        return self._frame(
            m.control_request(
                request_id,
                {
                    "subtype": "can_use_tool",
                    "tool_name": tool_name,
                    "tool_use_id": call_id,
                    "input": args,
                    "permission_suggestions": None,
                    "blocked_path": None,
                },
            )
        )

    def permission_outcome(self, request_id: str, allowed: bool) -> bytes:
        """The outcome of a mirrored request (answered, timed out, or nobody to ask)."""
        self.pending.discard(request_id)
        return self._frame(m.control_success(request_id, {"allowed": allowed}))

    def receive_command(self, command: Any) -> Command:
        """Read one reverse-channel command (an already parsed JSON value)."""
        if not isinstance(command, dict):
            return Ignore("a command must be a JSON object")
        kind = command.get("type")
        if kind == "submit":
            text = command.get("text")
            if isinstance(text, str) and text.strip():
                return Submit(text)
            return Ignore("submit needs a non-empty text")
        if kind != "confirmation_response":
            return Ignore("unknown command")
        request_id = command.get("request_id")
        if not isinstance(request_id, str) or request_id not in self.pending:
            shown = request_id if isinstance(request_id, str) else reprlib.repr(request_id)
            if self.ended:
                return Ignore("confirmation_response after the session ended")
            return Reply(
                self._frame(m.control_error(shown, "No pending permission request with this id"))
            )
        allowed = command.get("allowed")
        self.pending.discard(request_id)
        if not isinstance(allowed, bool):  # "false", 1, null: never a yes; a denial, said so
            problem = f"allowed must be true or false, not {reprlib.repr(allowed)}; denied"
            return Confirm(
                request_id, False, reply=self._frame(m.control_error(request_id, problem))
            )
        return Confirm(request_id, allowed)


__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_EVENTS",
    "Command",
    "Confirm",
    "DualOutputProtocol",
    "Ignore",
    "Reply",
    "Submit",
]
