"""The three one-shot headless output formats as sans-IO transports.

A transport takes the wire messages of a run (already built, tool results already projected at
the one boundary) and returns the bytes for stdout and stderr; it never touches a descriptor.

* ``stream-json``: each message becomes ``encode(message) + "\\n"`` immediately.
* ``json``: messages are retained (as their encoded bytes) and written once, as one array, when
  the ``result`` arrives; control messages and stream events never enter the array.
* ``text``: the same retention as ``json`` (bounded previews only, because tool results are
  projected before they get here); stdout gets only ``result + "\\n"``, an error result's message
  goes to stderr.
"""

from __future__ import annotations

from typing import Literal

from headwire.protocol.messages import InterimResult, JsonDict
from headwire.records import dataclass, field
from headwire.wire import encode

OutputFormat = Literal["text", "json", "stream-json"]


@dataclass(slots=True)
class Output:
    """Bytes a transport wants written: ``stdout`` first, then ``stderr``."""

    stdout: bytes = b""
    stderr: bytes = b""


@dataclass(slots=True)
class HeadlessTransport:
    """Base: turns messages into :class:`Output`."""

    include_partial_messages: bool = False

    def feed(self, message: JsonDict) -> Output:
        """Accept one wire message; return what must be written now."""
        raise NotImplementedError

    def wants(self, message: JsonDict) -> bool:
        """Whether this format carries ``message`` at all (partials, control messages)."""
        kind = message.get("type")
        if kind == "stream_event":
            event_type = message["event"].get("type")
            return self.include_partial_messages or event_type == "goal_state"
        return True


class StreamJsonTransport(HeadlessTransport):
    """One JSON object per line, written as it happens (no fields of its own: the base's
    record methods serve, with no second record class made at import)."""

    __slots__ = ()

    def feed(self, message: JsonDict) -> Output:
        if not self.wants(message):
            return Output()
        return Output(stdout=encode(message) + b"\n")


@dataclass(slots=True)
class JsonTransport(HeadlessTransport):
    """One JSON array of every message, written when the ``result`` arrives."""

    retained: list[bytes] = field(default_factory=list)

    def wants(self, message: JsonDict) -> bool:
        return message.get("type") not in (
            "stream_event",
            "control_request",
            "control_response",
            "control_cancel_request",
        )

    def feed(self, message: JsonDict) -> Output:
        if not self.wants(message):
            return Output()
        self.retained.append(encode(message))
        if message.get("type") != "result" or isinstance(message, InterimResult):
            return Output()
        data = b"[" + b",".join(self.retained) + b"]\n"
        self.retained = []
        return Output(stdout=data)

    def retained_bytes(self) -> int:
        """Bytes currently retained in memory (bounded by the projection for tool results)."""
        return sum(len(b) for b in self.retained)


class TextTransport(JsonTransport):
    """Human output: only the final result text on stdout; errors on stderr."""

    __slots__ = ()

    def feed(self, message: JsonDict) -> Output:
        if not self.wants(message):
            return Output()
        if message.get("type") != "result" or isinstance(message, InterimResult):
            self.retained.append(encode(message))
            return Output()
        self.retained = []
        if message.get("is_error"):
            error = message.get("error") or {}
            text = str(error.get("message", "Unknown error"))
            return Output(stderr=text.encode("utf-8", "replace") + b"\n")
        return Output(stdout=str(message.get("result", "")).encode("utf-8", "replace") + b"\n")


def make_transport(fmt: OutputFormat, include_partial_messages: bool = False) -> HeadlessTransport:
    """The transport for ``-o/--output-format``."""
    if fmt == "stream-json":
        return StreamJsonTransport(include_partial_messages)
    if fmt == "json":
        return JsonTransport(False)
    return TextTransport(False)
