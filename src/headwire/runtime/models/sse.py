"""Server-Sent Events, as the model APIs send them (``text/event-stream``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from headwire.runtime.models.httpx_lite import httpx
from headwire.wire.sse_lines import SseLineSplitter


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One Server-Sent Event: its ``event`` name (``""`` when absent) and ``data`` lines."""

    name: str
    data: list[str]

    @property
    def text(self) -> str:
        """The data lines joined as the SSE spec says (with ``\\n``)."""
        return "\n".join(self.data)


async def sse_lines(response: httpx.Response) -> AsyncIterator[str]:
    """The body's lines, ended by CR, LF or CRLF only (:class:`~headwire.wire.SseLineSplitter`).

    ``httpx``'s ``aiter_lines`` also splits at U+2028, U+2029, U+0085 and other characters
    ``str.splitlines`` knows, which JSON carries unescaped inside strings; so lines are cut
    here, in bytes, and each is decoded on its own (UTF-8, invalid bytes replaced).
    """
    splitter = SseLineSplitter()
    async for chunk in response.aiter_bytes():
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.close():
        yield line


async def sse_events(response: httpx.Response) -> AsyncIterator[SseEvent]:
    """The events of an ``text/event-stream`` body, in order.

    Comments (``: keep-alive``) and ``id``/``retry`` fields are skipped; a last event that the
    stream ends without its blank line is still yielded.  Lines end in CR, LF or CRLF; no other
    character ends one (see :func:`sse_lines`).
    """
    name = ""
    data: list[str] = []
    async for line in sse_lines(response):
        if line:
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
            continue
        if data:
            yield SseEvent(name, data)
        name, data = "", []
    if data:
        yield SseEvent(name, data)
