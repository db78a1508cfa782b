"""Checking a whole stream against the wire schema, line by line (``headwire bound --validate``).

:class:`StreamCheck` is fed raw chunks in any sizes, splits them into lines and reports each
line that parses as JSON but is not a message of the schema, as ``(line number, reason)``;
line numbers count every line from 1, blank ones included, as :class:`headwire.bound.BoundFilter`
numbers its warnings.  Lines that are not JSON are left to the filter's own report.  The check
uses the full schema (Qwen Code's deviations included), since the stream may come from any
compatible CLI.
"""

from __future__ import annotations

from typing import Any

import orjson

from headwire.protocol.schema import Mode, validator

__all__ = ["FORMAT_MODES", "StreamCheck"]

FORMAT_MODES: dict[str, tuple[Mode, bool]] = {
    "stream-json": ("dual", False),
    "json": ("headless", True),
    "acp": ("acp", False),
}
"""``headwire bound --format`` -> (schema mode, whether each line is a JSON array of messages).
A stream-JSON stream is checked as the Dual Output sidecar's, which is every headless message
plus the sidecar's session_start and session_end."""


class StreamCheck:
    """Validates the messages of a headless or ACP stream fed in chunks."""

    def __init__(self, fmt: str) -> None:
        self.mode, self.arrays = FORMAT_MODES[fmt]
        self.lines = 0
        self._pending: list[bytes] = []

    def feed(self, chunk: bytes) -> list[tuple[int, str]]:
        """Check the lines ``chunk`` completes; their problems, oldest first."""
        problems: list[tuple[int, str]] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            piece = chunk[start:end]
            if self._pending:
                self._pending.append(piece)
                piece = b"".join(self._pending)
                self._pending = []
            self._line(piece, problems)
            start = end + 1
        if start < len(chunk):
            self._pending.append(chunk[start:])
        return problems

    def close(self) -> list[tuple[int, str]]:
        """Check a last line without a newline."""
        problems: list[tuple[int, str]] = []
        if self._pending:
            piece = b"".join(self._pending)
            self._pending = []
            self._line(piece, problems)
        return problems

    def _line(self, line: bytes, problems: list[tuple[int, str]]) -> None:
        self.lines += 1
        if not line.strip():
            return
        try:
            value: Any = orjson.loads(line)
        except orjson.JSONDecodeError:
            return  # not JSON: BoundFilter reports it
        messages = value if self.arrays and isinstance(value, list) else [value]
        check = validator(self.mode, "output", upstream=True)
        for index, message in enumerate(messages):
            for reason in check.errors(message):
                where = f"[{index}] " if self.arrays else ""
                problems.append((self.lines, f"schema: {where}{reason}"))
