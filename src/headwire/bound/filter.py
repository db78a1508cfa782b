"""The ``headwire bound`` stream: bytes in, the same lines out, long ones bounded (sans-IO)."""

from __future__ import annotations

from headwire.bound.lines import (
    FAST_PATH_LINE_BYTES,
    bound_line,
    first_long_line,
    line_problem,
    lines_pass_quick_check,
    quick_line_problem,
    well_formed,
)
from headwire.bound.shapes import Format
from headwire.records import dataclass, field

__all__ = ["BoundFilter", "BoundStats"]


@dataclass
class BoundStats:
    """Running totals for ``--stats``; field sizes are JSON bytes of the bounded values (kept
    only when :attr:`BoundFilter.measure` is set)."""

    lines: int = 0
    bounded_lines: int = 0
    bounded_fields: int = 0
    field_bytes_before: int = 0
    field_bytes_after: int = 0
    malformed_lines: int = 0

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


@dataclass
class BoundFilter:
    """A sans-IO ``headwire bound``: bytes in through :meth:`feed`, pieces out, in order.

    ``feed(data)`` returns the output pieces for every line completed by ``data``; ``close()``
    returns the last line when the input does not end with ``\\n``.  Concatenated, the pieces
    are the output stream.  A partial line is buffered whole (a line is needed whole to be
    bounded), so memory is bounded by the feed size plus the longest line.  Problems are
    collected in ``warnings`` as ``(line number, reason)``; :meth:`take_warnings` drains them.
    """

    fmt: Format = Format.STREAM_JSON
    validate: bool = False
    """Parse every short line, not only those failing :func:`quick_line_problem` (slower)."""
    measure: bool = True
    """Add up the JSON bytes of bounded fields in ``stats`` (a pass over each bounded field)."""
    stats: BoundStats = field(default_factory=BoundStats)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    _partial: bytearray = field(default_factory=bytearray)

    def take_warnings(self) -> list[tuple[int, str]]:
        """The warnings collected since the last call, oldest first."""
        taken, self.warnings = self.warnings, []
        return taken

    def feed(self, data: bytes) -> list[bytes | bytearray]:
        """Take the next bytes of the stream; return the output for the lines they complete."""
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
        """End of input: return the output for a last line without a terminator, if any."""
        if not self._partial:
            return []
        line, self._partial = self._partial, bytearray()
        return [self._line(line)]

    def _block(self, data: bytes, start: int, end: int, out: list[bytes | bytearray]) -> None:
        """Emit the whole lines ``data[start:end]``: short runs as they are, long lines bounded."""
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
        """Count and check a run of whole short lines; they always go out as they are."""
        lines = block.split(b"\n")
        lines.pop()  # the empty piece after the last terminator
        first = self.stats.lines + 1
        self.stats.lines += len(lines)
        if well_formed(lines) if self.validate else lines_pass_quick_check(lines, block):
            return block
        check = line_problem if self.validate else quick_line_problem
        for offset, line in enumerate(lines):
            problem = check(line)
            if problem is not None:
                self._warn(first + offset, problem)
        return block

    def _line(self, line: bytes | bytearray) -> bytes | bytearray:
        """Emit one line, checking it when short and bounding it when long."""
        self.stats.lines += 1
        if len(line) <= FAST_PATH_LINE_BYTES:
            # checked without its terminator, as _short_lines checks it: same warning either way
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
        if self.measure:
            sizes = outcome.fields
            self.stats.field_bytes_before += sum(before for before, _ in sizes)
            self.stats.field_bytes_after += sum(after for _, after in sizes)
        return outcome.output

    def _warn(self, line_number: int, problem: str) -> None:
        """Record a malformed line."""
        self.stats.malformed_lines += 1
        self.warnings.append((line_number, problem))
