"""The ``headwire bound`` stream as it was before issue 28's fast path, frozen as a test oracle.

:class:`LegacyBoundFilter` is the filter that split every run of short lines with
``bytes.split`` and checked each run with :func:`legacy_lines_pass_quick_check`; the new
:class:`~headwire.bound.BoundFilter` must write the same bytes, the same warnings and the same
counts for every input and every split (``test_fast_path.py``).  It reuses only the per-line
functions that the fast path did not change (:func:`~headwire.bound.bound_line`,
:func:`~headwire.bound.line_problem`, :func:`~headwire.bound.quick_line_problem`,
:func:`~headwire.bound.first_long_line`).
"""

from __future__ import annotations

import itertools
import operator
from collections import deque
from collections.abc import Iterable

import orjson

from headwire.bound import (
    FAST_PATH_LINE_BYTES,
    Format,
    bound_line,
    first_long_line,
    line_problem,
    quick_line_problem,
)
from headwire.wire.utf8 import is_utf8 as _is_utf8

_OPENERS = frozenset(b"{[")
_CLOSERS = frozenset(b"}]")
_first_byte = operator.itemgetter(0)
_last_byte = operator.itemgetter(-1)


def legacy_lines_pass_quick_check(lines: list[bytes], block: bytes | None = None) -> bool:
    """The old run check: every line opens and closes like an object or array, and is UTF-8."""
    try:
        if not _OPENERS.issuperset(map(_first_byte, lines)):
            return False
        if not _CLOSERS.issuperset(map(_last_byte, lines)):
            return False
    except IndexError:
        return False
    if block is not None:
        return block.isascii() or _is_utf8(block)
    non_ascii = list(itertools.filterfalse(bytes.isascii, lines))
    return not non_ascii or _is_utf8(b"\n".join(non_ascii))


def legacy_well_formed(lines: Iterable[bytes]) -> bool:
    try:
        deque(map(orjson.loads, filter(None, lines)), maxlen=0)
    except orjson.JSONDecodeError:
        return False
    return True


class LegacyStats:
    """The counters of the old ``BoundStats``."""

    def __init__(self) -> None:
        self.lines = 0
        self.bounded_lines = 0
        self.bounded_fields = 0
        self.field_bytes_before = 0
        self.field_bytes_after = 0
        self.malformed_lines = 0

    def as_tuple(self) -> tuple[int, ...]:
        return (
            self.lines,
            self.bounded_lines,
            self.bounded_fields,
            self.field_bytes_before,
            self.field_bytes_after,
            self.malformed_lines,
        )


class LegacyBoundFilter:
    """The old ``BoundFilter``, line for line (see the module)."""

    def __init__(self, fmt: Format = Format.STREAM_JSON, *, validate: bool = False) -> None:
        self.fmt = fmt
        self.validate = validate
        self.stats = LegacyStats()
        self.warnings: list[tuple[int, str]] = []
        self._partial = bytearray()

    def feed(self, data: bytes) -> list[bytes | bytearray]:
        out: list[bytes | bytearray] = []
        start = 0
        if self._partial:
            newline = data.find(b"\n")
            if newline < 0:
                self._partial += data
                return out
            self._partial += memoryview(data)[: newline + 1]
            line, self._partial = self._partial, bytearray()
            out.append(self._line(line))
            start = newline + 1
        cut = data.rfind(b"\n") + 1
        if cut > start:
            self._block(data, start, cut, out)
        else:
            cut = start
        if cut < len(data):
            self._partial += memoryview(data)[cut:]
        return out

    def close(self) -> list[bytes | bytearray]:
        if not self._partial:
            return []
        line, self._partial = self._partial, bytearray()
        return [self._line(line)]

    def _block(self, data: bytes, start: int, end: int, out: list[bytes | bytearray]) -> None:
        position = start
        while position < end:
            long_at = first_long_line(data, position, end)
            if long_at > position:
                out.append(self._short_lines(data[position:long_at]))
            if long_at == end:
                return
            newline = data.index(b"\n", long_at + FAST_PATH_LINE_BYTES - 1, end)
            out.append(self._line(data[long_at : newline + 1]))
            position = newline + 1

    def _short_lines(self, block: bytes) -> bytes:
        lines = block.split(b"\n")
        lines.pop()
        first = self.stats.lines + 1
        self.stats.lines += len(lines)
        if (
            legacy_well_formed(lines)
            if self.validate
            else legacy_lines_pass_quick_check(lines, block)
        ):
            return block
        check = line_problem if self.validate else quick_line_problem
        for offset, line in enumerate(lines):
            problem = check(line)
            if problem is not None:
                self._warn(first + offset, problem)
        return block

    def _line(self, line: bytes | bytearray) -> bytes | bytearray:
        self.stats.lines += 1
        if len(line) <= FAST_PATH_LINE_BYTES:
            body = line[:-1] if line.endswith(b"\n") else line
            problem = (line_problem if self.validate else quick_line_problem)(body)
            if problem is not None:
                self._warn(self.stats.lines, problem)
            return line
        outcome = bound_line(line, self.fmt)
        if outcome.problem is not None:
            self._warn(self.stats.lines, outcome.problem)
        if outcome.error is not None:
            self.warnings.append((self.stats.lines, outcome.error))
        if outcome.output is None:
            return line
        self.stats.bounded_lines += 1
        self.stats.bounded_fields += len(outcome.changes)
        sizes = outcome.fields
        self.stats.field_bytes_before += sum(before for before, _ in sizes)
        self.stats.field_bytes_after += sum(after for _, after in sizes)
        return outcome.output

    def _warn(self, line_number: int, problem: str) -> None:
        self.stats.malformed_lines += 1
        self.warnings.append((line_number, problem))
