"""Server-Sent Events, as the model APIs send them (``text/event-stream``).

Bounded as they arrive: the body is decoded in bounded steps (:mod:`headwire.runtime.http_body`),
a line may hold at most :data:`MAX_EVENT_BYTES` bytes and an event's data lines at most
:data:`MAX_EVENT_BYTES` characters together; past either, :class:`StreamEventTooLarge` is
raised at once (the caller closes the stream), so a ``data:`` line that never ends costs at
most that much memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from headwire.errors import RemoteProtocolError
from headwire.records import dataclass
from headwire.runtime.http_body import Answer, iter_body
from headwire.wire.sse_lines import SseLineSplitter, SseLineTooLong

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The longest line, and the most data one event may hold (Gemini sends a tool call's
arguments whole, in one event)."""


class StreamEventTooLarge(RemoteProtocolError):
    """A line or an event of the stream passed :data:`MAX_EVENT_BYTES`."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One Server-Sent Event: its ``event`` name (``""`` when absent) and ``data`` lines."""

    name: str
    data: list[str]

    @property
    def text(self) -> str:
        """The data lines joined as the SSE spec says (with ``\\n``)."""
        return "\n".join(self.data)


async def sse_lines(response: Answer) -> AsyncIterator[str]:
    """The body's lines, ended by CR, LF or CRLF only (:class:`~headwire.wire.SseLineSplitter`).

    ``httpx``'s ``aiter_lines`` also splits at U+2028, U+2029, U+0085 and other characters
    ``str.splitlines`` knows, which JSON carries unescaped inside strings; so lines are cut
    here, in bytes, and each is decoded on its own (UTF-8, invalid bytes replaced).
    """
    splitter = SseLineSplitter(MAX_EVENT_BYTES)
    try:
        async for chunk in iter_body(response):
            for line in splitter.feed(chunk):
                yield line
    except SseLineTooLong:
        raise StreamEventTooLarge(
            f"a line of the stream is longer than {MAX_EVENT_BYTES} bytes"
        ) from None
    for line in splitter.close():
        yield line


async def sse_events(response: Answer) -> AsyncIterator[SseEvent]:
    """The events of an ``text/event-stream`` body, in order.

    Comments (``: keep-alive``) and ``id``/``retry`` fields are skipped; a last event that the
    stream ends without its blank line is still yielded.  Lines end in CR, LF or CRLF; no other
    character ends one (see :func:`sse_lines`).
    """
    name = ""
    data: list[str] = []
    held = 0
    async for line in sse_lines(response):
        if line:
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                held += len(value) + 1
                if held > MAX_EVENT_BYTES:
                    raise StreamEventTooLarge(
                        f"an event of the stream holds more than {MAX_EVENT_BYTES} characters"
                    )
                data.append(value)
            elif field == "event":
                name = value
            continue
        if data:
            yield SseEvent(name, data)
        name, data, held = "", [], 0
    if data:
        yield SseEvent(name, data)
