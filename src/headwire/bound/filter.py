"""The ``headwire bound`` stream: bytes in, the same lines out, long ones bounded (sans-IO).

Speed (issue 28: the filter at a plain Python line copy's pace): a run of short lines is split
by ``io.BytesIO(chunk).readlines()`` (C speed, no copy of the chunk), checked as a whole
(:func:`~headwire.bound.lines.run_passes_quick_check`) and passed on as one view of the bytes
read; only a run failing the check is looked at line by line.  When the bytes read are not all
ASCII, one compiled pass (:func:`~headwire.wire.utf8.native_validator`, simdjson's) tells
whether a whole run is UTF-8, so no line is decoded; without that library, only the lines
holding a byte above 127 are decoded, joined.
"""

from __future__ import annotations

from io import BytesIO  # an in-memory buffer: the one name of io used (no I/O)

from headwire.bound.lines import (
    FAST_PATH_LINE_BYTES,
    Piece,
    bound_line,
    first_long_line,
    line_problem,
    quick_line_problem,
    run_passes_quick_check,
    well_formed,
)
from headwire.bound.shapes import Format
from headwire.records import dataclass
from headwire.wire.utf8 import native_validator

__all__ = ["BoundFilter", "BoundStats", "Piece"]


@dataclass(slots=True)
class BoundStats:
    """Running totals for ``--stats``; field sizes are JSON bytes of the bounded values (kept
    only when :attr:`BoundFilter.measure` is set)."""

    lines: int = 0
    bounded_lines: int = 0
    bounded_fields: int = 0
    field_bytes_before: int = 0
    field_bytes_after: int = 0
    malformed_lines: int = 0

    def add(self, other: BoundStats) -> None:
        """Add ``other``'s totals to these (the summary over several inputs)."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def summary(self) -> str:
        """One line, e.g.
        ``3 lines, 1 bounded (1 field: 500002 -> 65536 JSON bytes), 0 malformed``."""
        fields = "field" if self.bounded_fields == 1 else "fields"
        return (
            f"{self.lines} lines, {self.bounded_lines} bounded "
            f"({self.bounded_fields} {fields}: "
            f"{self.field_bytes_before} -> {self.field_bytes_after} JSON bytes), "
            f"{self.malformed_lines} malformed"
        )


class BoundFilter:
    """A sans-IO ``headwire bound``: bytes in through :meth:`feed`, pieces out, in order.

    ``feed(data)`` returns the output pieces for every line completed by ``data``; ``close()``
    returns the last line when the input does not end with ``\\n``.  Concatenated, the pieces
    are the output stream; a piece may be a ``memoryview`` of the ``data`` passed in (valid as
    long as the caller keeps ``data`` unchanged: ``bytes`` always are).  A partial line is
    buffered whole (a line is needed whole to be bounded), so memory is bounded by the feed
    size plus the longest line.  Problems are collected in ``warnings`` as
    ``(line number, reason)``; :meth:`take_warnings` drains them.
    """

    __slots__ = ("_partial", "fmt", "measure", "stats", "validate", "warnings")

    def __init__(
        self,
        fmt: Format = Format.STREAM_JSON,
        validate: bool = False,
        measure: bool = True,
        stats: BoundStats | None = None,
        warnings: list[tuple[int, str]] | None = None,
    ) -> None:
        self.fmt = fmt
        self.validate = validate
        """Parse every short line, not only those failing :func:`quick_line_problem`."""
        self.measure = measure
        """Add up the JSON bytes of bounded fields in ``stats`` (a pass over each field)."""
        self.stats = BoundStats() if stats is None else stats
        self.warnings: list[tuple[int, str]] = [] if warnings is None else warnings
        self._partial = bytearray()

    def take_warnings(self) -> list[tuple[int, str]]:
        """The warnings collected since the last call, oldest first."""
        taken, self.warnings = self.warnings, []
        return taken

    def feed(self, data: bytes) -> list[Piece]:
        """Take the next bytes of the stream; return the output for the lines they complete."""
        out: list[Piece] = []
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
            self._block(bytes(data) if type(data) is not bytes else data, start, cut, out)
        else:
            cut = start
        if cut < len(data):
            self._partial += memoryview(data)[cut:]
        return out

    def close(self) -> list[Piece]:
        """End of input: return the output for a last line without a terminator, if any."""
        if not self._partial:
            return []
        line, self._partial = self._partial, bytearray()
        return [self._line(line)]

    def _block(self, data: bytes, start: int, end: int, out: list[Piece]) -> None:
        """Emit the whole lines ``data[start:end]``: short runs as they are, long lines bounded."""
        reader = BytesIO(data)  # shares the bytes of ``data``: no copy
        ascii = data.isascii()  # stops at the first byte above 127: cheap either way
        validate = None if ascii or self.validate else native_validator()
        position = start
        while position < end:
            long_at = first_long_line(data, position, end)
            if long_at > position:
                reader.seek(position)
                # one compiled pass over the run answers for all of its lines
                utf8 = ascii or (validate is not None and validate(data, position, long_at))
                out.append(self._short_lines(data, position, long_at, reader, utf8))
            if long_at == end:
                return
            newline = data.index(b"\n", long_at + FAST_PATH_LINE_BYTES - 1, end)
            out.append(self._long_line(memoryview(data)[long_at : newline + 1]))
            position = newline + 1

    def _short_lines(self, data: bytes, start: int, end: int, reader: BytesIO, utf8: bool) -> Piece:
        """Count and check the whole short lines ``data[start:end]`` (``reader`` is at
        ``start``; ``utf8``: they are known to be UTF-8); they always go out as they came, as
        one piece."""
        run: Piece = data if start == 0 and end == len(data) else memoryview(data)[start:end]
        lines = reader.readlines(end - start)  # stops at the line that reaches ``end``
        stats = self.stats
        first = stats.lines + 1
        stats.lines += len(lines)
        if well_formed(lines) if self.validate else run_passes_quick_check(lines, utf8):
            return run
        check = line_problem if self.validate else quick_line_problem
        for offset, line in enumerate(lines):
            problem = check(line[:-1])  # without its terminator, as _line checks a line
            if problem is not None:
                self._warn(first + offset, problem)
        return run

    def _line(self, line: bytes | bytearray) -> Piece:
        """Emit one line, checking it when short and bounding it when long."""
        if len(line) > FAST_PATH_LINE_BYTES:
            return self._long_line(line)
        self.stats.lines += 1
        # checked without its terminator, as _short_lines checks it: same warning either way
        body = line[:-1] if line.endswith(b"\n") else line
        problem = (line_problem if self.validate else quick_line_problem)(body)
        if problem is not None:
            self._warn(self.stats.lines, problem)
        return line

    def _long_line(self, line: Piece) -> Piece:
        """Emit one line longer than the fast path, bounded (``line`` may be a view of the
        bytes read: a line that stays as it is goes out without a copy)."""
        self.stats.lines += 1
        outcome = bound_line(line, self.fmt)
        if outcome.problem is not None:
            self._warn(self.stats.lines, outcome.problem)
        if outcome.error is not None:
            self.warnings.append((self.stats.lines, outcome.error))
        if outcome.output is None:
            return line
        self.stats.bounded_lines += 1
        self.stats.bounded_fields += len(outcome.changes)
        if self.measure:
            sizes = outcome.fields
            self.stats.field_bytes_before += sum(before for before, _ in sizes)
            self.stats.field_bytes_after += sum(after for _, after in sizes)
        return outcome.output

    def _warn(self, line_number: int, problem: str) -> None:
        """Record a malformed line."""
        self.stats.malformed_lines += 1
        self.warnings.append((line_number, problem))
