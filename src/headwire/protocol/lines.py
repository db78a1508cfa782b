"""Splitting a byte stream into lines, sans I/O: the one line splitter of every reader.

Every line-based input of headwire (a session's stdin, ACP's stdin, the SDK's view of the CLI's
stdout, the Dual Output reverse channel) arrives in chunks of any size and is cut here on
``b"\\n"``.  There is no length limit: the pieces of a long line are kept in a list and joined
once, so a line of any length costs one copy, and splitting costs C-speed ``bytes.find`` calls,
never a Python loop per byte.

Invariant (a hypothesis property): for any bytes ``data`` and any way of cutting it into chunks,
``feed`` over the chunks followed by ``close`` yields exactly ``data.split(b"\\n")`` without its
last element when ``data`` ends with a newline (an empty trailing piece is not a line).
"""

from __future__ import annotations


class LineSplitter:
    """Turns chunks into complete lines (without their ``\\n``)."""

    __slots__ = ("_pending", "_pending_bytes")

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    @property
    def buffered(self) -> int:
        """Bytes of the line still waiting for its newline."""
        return self._pending_bytes

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes, in order."""
        lines: list[bytes] = []
        start = 0
        find = chunk.find
        while (end := find(b"\n", start)) != -1:
            piece = chunk[start:end]
            if self._pending:
                self._pending.append(piece)
                piece = b"".join(self._pending)
                self._pending = []
                self._pending_bytes = 0
            lines.append(piece)
            start = end + 1
        if start < len(chunk):
            rest = chunk[start:] if start else chunk
            self._pending.append(rest)
            self._pending_bytes += len(rest)
        return lines

    def close(self) -> list[bytes]:
        """End of input: the last line when it had no newline (else nothing)."""
        if not self._pending:
            return []
        last = b"".join(self._pending)
        self._pending = []
        self._pending_bytes = 0
        return [last]


__all__ = ["LineSplitter"]
