"""Splitting a byte stream into text lines at CR, LF or CRLF only (Server-Sent Events).

``str.splitlines`` (and so ``httpx``'s ``aiter_lines``) also breaks at U+2028, U+2029, U+0085
and the C0 separators ``\\x0b \\x0c \\x1c \\x1d \\x1e``.  JSON strings may hold all of them raw
(``JSON.stringify`` writes U+2028 raw), so a model server's chunk holding one would be cut in
two and read as malformed.  :class:`SseLineSplitter` ends a line only where the SSE grammar does,
and decodes each line as UTF-8 with every invalid sequence as U+FFFD, as Node's decoder does.

It is fed chunks as they arrive; a line may span any number of chunks (a CR at the end of a
chunk waits for the next one, which may start with the LF of the same CRLF).  Every byte is
searched once, by the regex engine: the cost is linear in the input whatever its chunking.
With ``max_line_bytes``, a line longer than that raises :class:`SseLineTooLong` as soon as the
bytes held for it pass the cap (a line that never ends cannot grow memory without bound).
"""

from __future__ import annotations

import re

from headwire.errors import RemoteProtocolError

__all__ = ["SseLineSplitter", "SseLineTooLong", "split_sse_lines"]

_EOL = re.compile(rb"\r\n|\r|\n")


class SseLineTooLong(RemoteProtocolError):
    """A line passed the splitter's ``max_line_bytes``."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a line of the stream is longer than {limit} bytes")
        self.limit = limit


class SseLineSplitter:
    """Incremental CR/LF/CRLF line splitting of a byte stream into decoded lines."""

    def __init__(self, max_line_bytes: int | None = None) -> None:
        self._buffer = bytearray()
        self._searched = 0
        self._max = max_line_bytes

    def feed(self, chunk: bytes) -> list[str]:
        """The lines completed by ``chunk`` (terminators removed); :class:`SseLineTooLong`
        when a line (complete or not) is longer than ``max_line_bytes``."""
        buffer = self._buffer
        buffer += chunk
        lines: list[str] = []
        start = 0
        at = self._searched
        limit = self._max
        while (match := _EOL.search(buffer, at)) is not None:
            if match.end() == len(buffer) and buffer[-1] == 0x0D:
                break  # a CR last: the LF of a CRLF may come with the next chunk
            if limit is not None and match.start() - start > limit:
                raise SseLineTooLong(limit)
            lines.append(buffer[start : match.start()].decode("utf-8", "replace"))
            start = at = match.end()
        del buffer[:start]
        if limit is not None and len(buffer) - buffer.endswith(b"\r") > limit:
            raise SseLineTooLong(limit)
        self._searched = max(0, len(buffer) - 1) if buffer.endswith(b"\r") else len(buffer)
        return lines

    def close(self) -> list[str]:
        """The last line: what remains after the last terminator (none when nothing does)."""
        rest, self._buffer, self._searched = bytes(self._buffer), bytearray(), 0
        if not rest:
            return []
        if rest.endswith(b"\r"):
            return [rest[:-1].decode("utf-8", "replace")]
        return [rest.decode("utf-8", "replace")]


def split_sse_lines(data: bytes) -> list[str]:
    """All lines of ``data`` at once (the reference :class:`SseLineSplitter` agrees with).

    Invariant: for any split of ``data`` into chunks, feeding them in order and closing gives
    exactly ``split_sse_lines(data)``.
    """
    lines = [part.decode("utf-8", "replace") for part in _EOL.split(data)]
    if lines and lines[-1] == "":
        lines.pop()  # the terminator of the last line ends no further line
    return lines
