"""The core of ``headwire bound``: bound every textual tool result in headless output (pure).

The filter sees a byte stream of lines (``\\n``-terminated, the last one possibly not) and
writes the same lines in the same order.  A line is rewritten only when a tool result inside it
is over budget; every other line, including empty, malformed and non-UTF-8 lines, is passed on
as the very bytes that came in.  A rewritten line is ``JSON.stringify(JSON.parse(line))`` with
the projection applied, so for input written by ``JSON.stringify`` (every headless producer)
the bytes outside the bounded fields are unchanged too; its leading and trailing whitespace and
its terminator are kept.

What is bounded, per :class:`Format`:

* ``stream-json``: a line ``{"type":"user","message":{"content":[...]}}`` whose blocks of
  ``"type":"tool_result"`` carry ``content`` as a string (:func:`project_tool_result_content`)
  or as a list of text blocks (:func:`project_text_block_list`);
* ``json``: a line holding one JSON array of such messages (upstream's ``-o json``);
* ``acp``: a JSON-RPC line whose ``session/update`` ``params.update`` is a
  ``tool_call_update`` (:func:`project_acp_tool_call_update`), and the updates that a
  ``session/load`` response replays in ``result._meta["qwen.session.loadReplay"].updates``,
  ``result.updates`` and ``result.events[].data``.

Fast path: a JSON string is never shorter in a line than its canonical encoding, so a line of
at most :data:`FAST_PATH_LINE_BYTES` bytes cannot hold a field over the 65,536-byte budget.
Such lines are never re-encoded; they are only checked, a block at a time and without a
Python-level loop (:func:`quick_line_problem`: UTF-8, and opening and closing like an object or
array; a line failing that is parsed and reported if it is not JSON).  ``validate=True`` parses
every line instead, which is two to three times slower on typical streams.  Longer lines are
always parsed.

Invariants (hypothesis properties in ``tests/unit/bound/test_bound.py``):

* the output has as many lines as the input, in the same order, with the same terminators;
* a line that :func:`bound_line` leaves alone comes out byte-identical;
* every bounded ``content`` serializes to at most 65,536 JSON bytes;
* feeding a stream in any split gives the same output as feeding it whole;
* bounding is idempotent.
"""

from __future__ import annotations

import enum
import itertools
import json
import operator
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from headwire.projection.acp import (
    ACP_TOOL_RESULT_JSON_BYTE_BUDGET,
    allocate_payload_budgets,
    project_acp_tool_call_update,
)
from headwire.projection.headless import (
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_tool_result_content,
)
from headwire.projection.json_string import (
    json_string_payload_bytes,
    truncate_json_string_payload,
)
from headwire.wire.encode import encode, encode_str

__all__ = [
    "FAST_PATH_LINE_BYTES",
    "LOAD_REPLAY_META_KEY",
    "MAX_TEXT_BLOCKS",
    "BoundFilter",
    "BoundStats",
    "Format",
    "LineOutcome",
    "bound_line",
    "bound_value",
    "first_long_line",
    "json_size",
    "line_problem",
    "project_text_block_list",
    "quick_line_problem",
]

FAST_PATH_LINE_BYTES = max(TOOL_RESULT_JSON_BYTE_BUDGET, ACP_TOOL_RESULT_JSON_BYTE_BUDGET)
"""A line of at most this many bytes, terminator included, never needs bounding."""

LOAD_REPLAY_META_KEY = "qwen.session.loadReplay"
"""The ``result._meta`` key under which a bulk ``session/load`` response replays its updates."""

_TEXT_BLOCK_SKELETON_BYTES = len(b'{"type":"text","text":""}')  # 25
_MARKER_PAYLOAD_BYTES = len(encode_str(HEADLESS_TRUNCATION_MARKER)) - 2  # 46

MAX_TEXT_BLOCKS = (TOOL_RESULT_JSON_BYTE_BUDGET - 2 + 1) // (_TEXT_BLOCK_SKELETON_BYTES + 1)
"""2,520: the most text blocks whose empty skeleton fits the budget."""

_SIZE_CHUNK = 1 << 20
"""Code points per slice when measuring a long string (keeps the measuring copy small)."""


class Format(enum.Enum):
    """The headless output format on stdin; the value is the ``--format`` spelling."""

    STREAM_JSON = "stream-json"
    JSON = "json"
    ACP = "acp"


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
        return tuple((json_size(before), len(encode(after))) for before, after in self.changes)


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


# -- sizes -----------------------------------------------------------------------------------


def _string_json_size(value: str) -> int:
    """``len(encode(value))``, encoding at most :data:`_SIZE_CHUNK` code points at a time."""
    if len(value) <= _SIZE_CHUNK:
        return len(encode_str(value))
    total = 2
    start = 0
    while start < len(value):
        end = min(start + _SIZE_CHUNK, len(value))
        # Never cut between the two halves of a surrogate pair: they encode as one character.
        if end < len(value) and "\ud800" <= value[end - 1] <= "\udbff":
            end += 1
        total += len(encode_str(value[start:end])) - 2
        start = end
    return total


def json_size(value: Any) -> int:
    """``len(encode(value))`` for any JSON value, without encoding long strings in one piece."""
    if isinstance(value, str):
        return _string_json_size(value)
    if isinstance(value, dict):
        members = sum(_string_json_size(k) + 1 + json_size(v) for k, v in value.items())
        return 2 + members + max(len(value) - 1, 0)
    if isinstance(value, list):
        return 2 + sum(json_size(v) for v in value) + max(len(value) - 1, 0)
    return len(encode(value))


# -- the list-of-text-blocks rule -------------------------------------------------------------


def _text_blocks(value: list[Any]) -> list[str] | None:
    """The texts of ``value`` when every element is exactly ``{"type":"text","text":str}``."""
    texts: list[str] = []
    for block in value:
        if not (isinstance(block, dict) and len(block) == 2 and block.get("type") == "text"):
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return texts


def _marker_only() -> list[Any]:
    return [{"type": "text", "text": HEADLESS_TRUNCATION_MARKER}]


def project_text_block_list(blocks: list[Any]) -> list[Any]:
    """Bound a ``tool_result.content`` that is a list of text blocks to 65,536 JSON bytes.

    The rule (the headless counterpart of the ACP multi-block rule):

    * only a list whose every element is exactly ``{"type": "text", "text": str}`` (keys in
      either order, nothing else) is eligible; any other list is returned as is, because a
      block we cannot shorten (an image, a block with extra fields) cannot be budgeted;
    * the whole list shares one budget: ``JSON.stringify(list)`` is at most 65,536 bytes, so
      each text gets ``65,536 - skeleton`` payload bytes in all, where the skeleton
      (``[]``, 25 bytes per empty block, 1 per comma) is what the list costs with empty texts;
    * each text first reserves ``min(its size, 46)`` (the payload of
      ``HEADLESS_TRUNCATION_MARKER``), then the rest is water-filled
      (:func:`~headwire.projection.acp.allocate_payload_budgets`):
      small texts stay whole and large ones share the remainder evenly, the lower indices
      taking the odd bytes; a text over its share becomes the usual 20% head + marker +
      80% tail preview;
    * more blocks than the budget can hold even empty (2,521 and up), or reservations that do
      not fit, collapse the list to the single block ``{"type":"text","text":marker}``.

    Returns ``blocks`` itself when it already fits, otherwise a new list in which the blocks
    that kept their text are the same objects; the input is never mutated.
    """
    texts = _text_blocks(blocks)
    if texts is None:
        return blocks
    count = len(texts)
    if count > MAX_TEXT_BLOCKS:
        return _marker_only()
    skeleton = 2 + count * _TEXT_BLOCK_SKELETON_BYTES + max(count - 1, 0)
    available = TOOL_RESULT_JSON_BYTE_BUDGET - skeleton
    remaining = available
    for text in texts:
        remaining -= json_string_payload_bytes(text, remaining)
        if remaining < 0:
            break
    else:
        return blocks
    marker = _MARKER_PAYLOAD_BYTES
    reserves = [min(json_string_payload_bytes(t, marker), marker) for t in texts]
    spare = available - sum(reserves)
    if spare < 0:
        return _marker_only()
    demands = []
    for text, reserve in zip(texts, reserves, strict=True):
        cap = spare + reserve  # nobody can get more than this
        size = json_string_payload_bytes(text, cap)
        demands.append(min(size, cap + 1))
    allocations = allocate_payload_budgets(demands, available, reserve=marker)
    if allocations is None:
        return _marker_only()
    projected: list[Any] = []
    for block, text, demand, allocation in zip(blocks, texts, demands, allocations, strict=True):
        if demand <= allocation:
            projected.append(block)
            continue
        short = truncate_json_string_payload(text, demand, allocation, HEADLESS_TRUNCATION_MARKER)
        projected.append({k: (short if k == "text" else v) for k, v in block.items()})
    if len(encode(projected)) <= TOOL_RESULT_JSON_BYTE_BUDGET:
        return projected
    return _marker_only()


# -- per-message projection -------------------------------------------------------------------

Changes = list[tuple[Any, Any]]
"""The ``(before, after)`` values of the fields bounded so far in one line."""


def _bound_tool_result_content(content: Any) -> Any:
    if isinstance(content, str):
        return project_tool_result_content(content)
    if isinstance(content, list):
        return project_text_block_list(content)
    return content


def _bound_message(message: Any, changes: Changes) -> Any:
    """A headless ``user`` message with its tool results bounded, or ``message`` itself."""
    if not isinstance(message, dict) or message.get("type") != "user":
        return message
    inner = message.get("message")
    if not isinstance(inner, dict):
        return message
    blocks = inner.get("content")
    if not isinstance(blocks, list):
        return message
    new_blocks: list[Any] | None = None
    for index, block in enumerate(blocks):
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            continue
        if "content" not in block:
            continue
        before = block["content"]
        after = _bound_tool_result_content(before)
        if after is before:
            continue
        changes.append((before, after))
        if new_blocks is None:
            new_blocks = list(blocks)
        new_blocks[index] = {**block, "content": after}
    if new_blocks is None:
        return message
    return {**message, "message": {**inner, "content": new_blocks}}


def _bound_update(update: Any, changes: Changes) -> Any:
    """An ACP session update with its tool-result text bounded, or ``update`` itself.

    An update whose ``content`` and ``rawOutput`` both fit the budget is left alone, so that
    the ACP projection's normalization of a fitting ``shell_result`` never rewrites a line
    (which keeps every line of at most :data:`FAST_PATH_LINE_BYTES` bytes untouched).
    """
    if not isinstance(update, dict):
        return update
    budget = ACP_TOOL_RESULT_JSON_BYTE_BUDGET
    if json_size(update.get("content")) <= budget and json_size(update.get("rawOutput")) <= budget:
        return update
    projected = project_acp_tool_call_update(update)
    if projected is update:
        return update
    for key in ("content", "rawOutput"):
        if projected.get(key) is not update.get(key):
            changes.append((update.get(key), projected.get(key)))
    return projected


def _bound_each(items: Any, fn: Callable[[Any, Changes], Any], changes: Changes) -> Any:
    """``items`` with ``fn`` applied to each element, or ``items`` itself when none changed."""
    if not isinstance(items, list):
        return items
    out: list[Any] | None = None
    for index, item in enumerate(items):
        new = fn(item, changes)
        if new is not item:
            if out is None:
                out = list(items)
            out[index] = new
    return items if out is None else out


def _with(container: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``container`` itself when ``container[key]`` is ``value``, else a copy with it replaced."""
    return container if container.get(key) is value else {**container, key: value}


def _bound_event(event: Any, changes: Changes) -> Any:
    """A paged replay event ``{..., "data": update}`` with its update bounded."""
    if not isinstance(event, dict) or "data" not in event:
        return event
    return _with(event, "data", _bound_update(event["data"], changes))


def _bound_replay_result(result: dict[str, Any], changes: Changes) -> dict[str, Any]:
    """A ``session/load``-style response result with its replayed updates bounded."""
    meta = result.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(LOAD_REPLAY_META_KEY), dict):
        replay = meta[LOAD_REPLAY_META_KEY]
        if "updates" in replay:
            updates = _bound_each(replay["updates"], _bound_update, changes)
            meta = _with(meta, LOAD_REPLAY_META_KEY, _with(replay, "updates", updates))
            result = _with(result, "_meta", meta)
    if "updates" in result:
        result = _with(result, "updates", _bound_each(result["updates"], _bound_update, changes))
    if "events" in result:
        result = _with(result, "events", _bound_each(result["events"], _bound_event, changes))
    return result


def _bound_rpc(frame: Any, changes: Changes) -> Any:
    """A JSON-RPC frame with the tool-result text of its session updates bounded."""
    if not isinstance(frame, dict):
        return frame
    params = frame.get("params")
    if frame.get("method") == "session/update" and isinstance(params, dict):
        if "update" not in params:
            return frame
        update = _bound_update(params["update"], changes)
        return _with(frame, "params", _with(params, "update", update))
    result = frame.get("result")
    if "id" in frame and isinstance(result, dict):
        return _with(frame, "result", _bound_replay_result(result, changes))
    return frame


def bound_value(value: Any, fmt: Format) -> tuple[Any, tuple[tuple[Any, Any], ...]]:
    """Bound one parsed line: the new value (``value`` itself when unchanged) and the
    ``(before, after)`` values of its bounded fields.

    ``value`` is never mutated; containers on the path to a bounded field are copied.
    """
    changes: Changes = []
    if fmt is Format.STREAM_JSON:
        out = _bound_message(value, changes)
    elif fmt is Format.JSON:
        out = _bound_each(value, _bound_message, changes)
    else:
        out = _bound_rpc(value, changes)
    return out, tuple(changes)


# -- reading and checking lines --------------------------------------------------------------

_WHITESPACE = b" \t\r\n"
_NOT_WHITESPACE = re.compile(rb"[^ \t\r\n]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(line: bytes | bytearray) -> tuple[Any, str | None]:
    """The JSON value of ``line`` and ``None``, or ``None`` and why it is not a JSON line.

    orjson reads almost every line; what it refuses but JSON allows (escaped lone surrogates,
    numbers beyond a double) is read again by the standard library from strict UTF-8.
    """
    try:
        return orjson.loads(line), None
    except orjson.JSONDecodeError:
        pass
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    except RecursionError:
        return None, "nested too deeply to read"


def _is_blank(line: bytes | bytearray) -> bool:
    """Whether ``line`` is empty or only JSON whitespace (searched in place, never copied)."""
    return _NOT_WHITESPACE.search(line) is None


def line_problem(line: bytes | bytearray) -> str | None:
    """Why ``line`` is malformed (not UTF-8, not JSON), or ``None``; blank lines are fine."""
    if _is_blank(line):
        return None
    return _parse(line)[1]


_ORJSON_NOT_UTF8 = "is not valid UTF-8"
"""Part of orjson's message when its input is not UTF-8."""


def _orjson_checks_utf8_first() -> bool:
    """Whether orjson validates all of its input as UTF-8 before it parses anything."""
    try:
        orjson.loads(b"{}\n\xff")
    except orjson.JSONDecodeError as exc:
        return _ORJSON_NOT_UTF8 in str(exc)
    return False


_ORJSON_CHECKS_UTF8_FIRST = _orjson_checks_utf8_first()


def _is_utf8(data: bytes | bytearray) -> bool:
    """Whether ``data`` is strict UTF-8 (no surrogates), without building a ``str`` if possible.

    orjson checks the whole input before it parses the first value, several times faster than
    a decode into ``str``; if a later orjson stops doing so, :func:`_orjson_checks_utf8_first`
    notices at import and this decodes instead.
    """
    if data.isascii():
        return True
    if _ORJSON_CHECKS_UTF8_FIRST:
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            return _ORJSON_NOT_UTF8 not in str(exc)
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
    if line[match.start()] in b"{[" and last in b"}]" and _is_utf8(line):
        return None
    return _parse(line)[1]


_OPENERS = frozenset(b"{[")
_CLOSERS = frozenset(b"}]")
_first_byte = operator.itemgetter(0)
_last_byte = operator.itemgetter(-1)


def _lines_pass_quick_check(lines: list[bytes]) -> bool:
    """Whether every one of ``lines`` (terminators removed) passes :func:`quick_line_problem`
    unparsed, decided without a Python-level loop.

    Every line must be non-empty, open with ``{``/``[`` in its first byte, close with
    ``}``/``]`` in its last and be UTF-8.  Other runs (blank, indented or CRLF lines, anything
    else) are checked line by line instead, with the same outcome.
    """
    try:
        if not _OPENERS.issuperset(map(_first_byte, lines)):
            return False
        if not _CLOSERS.issuperset(map(_last_byte, lines)):
            return False
    except IndexError:  # an empty line
        return False
    non_ascii = list(itertools.filterfalse(bytes.isascii, lines))
    return not non_ascii or _is_utf8(b"\n".join(non_ascii))


def _well_formed(lines: Iterable[bytes]) -> bool:
    """Whether orjson reads every non-empty line (one C-level pass, objects dropped at once)."""
    try:
        deque(map(orjson.loads, filter(None, lines)), maxlen=0)
    except orjson.JSONDecodeError:
        return False
    return True


# -- bounding lines ---------------------------------------------------------------------------


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


def bound_line(line: bytes | bytearray, fmt: Format) -> LineOutcome:
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


# -- the stream -------------------------------------------------------------------------------


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
        if _well_formed(lines) if self.validate else _lines_pass_quick_check(lines):
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
