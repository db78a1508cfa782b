"""One line of ``headwire bound``: reading it, checking it, bounding it (pure).

A line is bounded only when it is longer than :data:`FAST_PATH_LINE_BYTES`: a JSON string is
never shorter in a line than its canonical encoding, so a shorter line cannot hold a field over
the 65,536-byte budget.  Short lines are only checked (:func:`quick_line_problem`, or
:func:`line_problem` when validating); :func:`first_long_line` finds the long ones in a block
without a step per line.  A bounded line is ``JSON.stringify(JSON.parse(line))`` with the
projection applied (:func:`~headwire.bound.shapes.bound_value`), its leading and trailing
whitespace and its terminator kept.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections import deque
from collections.abc import Iterable
from typing import Any, NamedTuple

import orjson

from headwire.bound.shapes import Format, bound_value
from headwire.projection.acp import ACP_TOOL_RESULT_JSON_BYTE_BUDGET
from headwire.projection.headless import TOOL_RESULT_JSON_BYTE_BUDGET
from headwire.wire.encode import encode
from headwire.wire.size import json_size
from headwire.wire.utf8 import is_utf8

__all__ = [
    "FAST_PATH_LINE_BYTES",
    "LineOutcome",
    "Piece",
    "bound_line",
    "first_long_line",
    "line_problem",
    "quick_line_problem",
    "run_passes_quick_check",
    "well_formed",
]

FAST_PATH_LINE_BYTES = max(TOOL_RESULT_JSON_BYTE_BUDGET, ACP_TOOL_RESULT_JSON_BYTE_BUDGET)
"""A line of at most this many bytes, terminator included, never needs bounding."""


class LineOutcome(NamedTuple):
    """What :func:`bound_line` decided for one line.

    ``output`` is the rewritten line, or ``None`` when the input line goes out unchanged;
    ``changes`` holds ``(before, after)`` per bounded field; ``problem`` says why a line was
    malformed, ``error`` why a readable line could not be bounded (either way it goes out
    unchanged).
    """

    output: bytes | None
    changes: tuple[tuple[Any, Any], ...] = ()
    problem: str | None = None
    error: str | None = None

    @property
    def fields(self) -> tuple[tuple[int, int], ...]:
        """``(json_bytes_before, json_bytes_after)`` per bounded field (measured on demand)."""
        return tuple((json_size(before), json_size(after)) for before, after in self.changes)


_WHITESPACE = b" \t\r\n"
_NOT_WHITESPACE = re.compile(rb"[^ \t\r\n]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(line: Piece) -> tuple[Any, str | None]:
    """The JSON value of ``line`` and ``None``, or ``None`` and why it is not a JSON line.

    orjson reads almost every line; what it refuses but JSON allows (escaped lone surrogates,
    numbers beyond a double) is read again by the standard library from strict UTF-8.
    """
    try:
        return orjson.loads(line), None
    except orjson.JSONDecodeError:
        pass
    try:
        text = str(line, "utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except json.JSONDecodeError as exc:
        # "Unterminated string starting at" names its place itself: one "at"
        return None, f"not valid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    except RecursionError:
        return None, "nested too deeply to read"


def _is_blank(line: Piece) -> bool:
    """Whether ``line`` is empty or only JSON whitespace (searched in place, never copied)."""
    return _NOT_WHITESPACE.search(line) is None


def line_problem(line: bytes | bytearray) -> str | None:
    """Why ``line`` is malformed (not UTF-8, not JSON), or ``None``; blank lines are fine."""
    if _is_blank(line):
        return None
    return _parse(line)[1]


def quick_line_problem(line: bytes | bytearray) -> str | None:
    """The check :class:`BoundFilter` gives a short line unless asked to ``validate``.

    A blank line passes, and so does a UTF-8 line whose first and last non-blank bytes are
    ``{``/``[`` and ``}``/``]`` (the shape of every headless and JSON-RPC line), unparsed.  Any
    other line is parsed, and its problem, if any, is returned as :func:`line_problem` does.
    """
    match = _NOT_WHITESPACE.search(line)
    if match is None:
        return None
    last = line[len(line.rstrip(_WHITESPACE)) - 1]
    if line[match.start()] in b"{[" and last in b"}]" and is_utf8(line):
        return None
    return _parse(line)[1]


Piece = bytes | bytearray | memoryview
"""A piece of output: a line or a run of lines, possibly a view of the bytes read (no copy)."""

_OPENERS = frozenset(b"{[")
_CLOSERS = frozenset(b"}]")
_first_byte = operator.itemgetter(0)
_before_newline = operator.itemgetter(-2)


def run_passes_quick_check(lines: list[bytes], utf8: bool = False) -> bool:
    """Whether every one of ``lines`` passes :func:`quick_line_problem` unparsed, decided
    without a Python-level loop.

    ``lines`` are whole lines, each ending with ``\\n`` (as ``readlines`` gives them);
    ``utf8`` says that the caller knows them to be UTF-8 (the bytes they came from were
    checked at once).  Every line must open with ``{``/``[`` in its first byte, close with
    ``}``/``]`` just before its ``\\n`` (so it is not blank) and be UTF-8; unless the caller
    knows, only the lines holding a byte above 127 are checked, joined (``\\n`` is ASCII, so
    the joined lines are UTF-8 exactly when each line is).  Other runs (blank, indented or CRLF
    lines, anything else) are checked line by line instead, with the same outcome.
    """
    if not _OPENERS.issuperset(map(_first_byte, lines)):
        return False  # also every blank line: its first byte is the newline
    if not _CLOSERS.issuperset(map(_before_newline, lines)):
        return False  # a line of one byte is b"\\n", refused above: [-2] exists
    if utf8:
        return True
    non_ascii = list(itertools.filterfalse(bytes.isascii, lines))
    return not non_ascii or is_utf8(b"".join(non_ascii))


def well_formed(lines: Iterable[bytes]) -> bool:
    """Whether orjson reads every line of ``lines`` (each ending with ``\\n``) but the blank
    ones, ``b"\\n"`` (one C-level pass, objects dropped at once)."""
    try:
        deque(map(orjson.loads, filter(_NEWLINE.__ne__, lines)), maxlen=0)
    except orjson.JSONDecodeError:
        return False
    return True


_NEWLINE = b"\n"


_MAX_WRITE_DEPTH = 254
"""The deepest nesting orjson writes (it reads up to 1,024 levels)."""


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def bound_line(line: Piece, fmt: Format) -> LineOutcome:
    """Bound the tool results in one line (terminator included, if any).

    The rewritten line keeps the leading and trailing whitespace of ``line``; a line that is
    blank, malformed or already within budget gives ``output=None`` (write ``line`` as is).
    """
    if _is_blank(line):
        return LineOutcome(None)
    value, problem = _parse(line)
    if problem is not None:
        return LineOutcome(None, problem=problem)
    if _nested_deeper_than(value, _MAX_WRITE_DEPTH):
        # cannot be written again; deciding here, not by whichever recursion fails first,
        # keeps the outcome independent of the caller's stack (and of how input was read)
        return LineOutcome(None, error=f"left unbounded (nested over {_MAX_WRITE_DEPTH} levels)")
    try:
        new, changes = bound_value(value, fmt)
        if new is value:
            return LineOutcome(None)
        encoded = encode(new)  # raises past orjson's 254 levels of nesting (it reads 1,024)
    except Exception as exc:  # a line we cannot bound still goes out, unchanged
        return LineOutcome(None, error=f"left unbounded ({type(exc).__name__}: {exc})")
    start = 0
    while line[start] in _WHITESPACE:
        start += 1
    end = len(line)
    while line[end - 1] in _WHITESPACE:
        end -= 1
    return LineOutcome(bytes(line[:start]) + encoded + bytes(line[end:]), changes)


def first_long_line(data: bytes, start: int, end: int) -> int:
    """Offset of the first line in ``data[start:end]`` longer than the fast path, else ``end``.

    ``data[start:end]`` must be whole lines (``data[end - 1]`` is ``\\n``).  Each probe looks
    at a window of :data:`FAST_PATH_LINE_BYTES` bytes and jumps past its last newline, so a
    block of short lines costs a handful of C-level searches, not one step per line.
    """
    position = start
    while position < end:
        last = data.rfind(b"\n", position, position + FAST_PATH_LINE_BYTES)
        if last < 0:
            return position
        position = last + 1
    return end
