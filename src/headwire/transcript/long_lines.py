"""Reading a recording line of megabytes without decoding its megabytes (pure).

A tool result is recorded with its whole display, so one line can hold 5 MB, or 100 MB.  A
transcript shows a head and a tail of it, and the wire view, which depends only on a head and a
tail too (:func:`headwire.projection.project_json_string` looks at the first and last 65,538
code points and at the total size).  :func:`parse_long_line` therefore finds each long string
value of a line with byte searches only and keeps it as a :class:`LongText`: a decoded head and
tail (at least :data:`MIN_CODE_POINTS` code points each) and its JSON size, which for a
recording written by :func:`headwire.wire.encode` is exactly ``UTF8_BYTES(JSON.stringify(s))``.

Why byte searches find the structure: inside a JSON string every ``"`` is escaped as ``\\"``,
so ``":"`` (a quote right after a colon) only occurs outside strings, where it opens a string
value; that value ends at the first quote after it not escaped by an odd run of backslashes,
found by jumping from quote to quote; when a value holds too many escaped quotes for that,
at the first ``,"`` after its start (which cannot occur inside a string either), just after
its closing quote or its container's closers.  The recorder writes compact JSON; a line
that does not fit this shape (spaces, a long string in an array) gets ``None`` and the
caller parses it whole.

Invariants (hypothesis properties in ``tests/unit/transcript/test_long_lines.py``): for any
JSON object encoded compactly, :func:`parse_long_line` gives ``None`` or the same object with
each long string replaced by a :class:`LongText` whose head is a prefix and whose tail is a
suffix of it, with ``json_bytes`` its exact encoded size.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import orjson

from headwire.records import dataclass

__all__ = [
    "LONG_LINE_BYTES",
    "LONG_STRING_BYTES",
    "MIN_CODE_POINTS",
    "Buffer",
    "LongText",
    "parse_long_line",
    "read_long_line",
]

LONG_LINE_BYTES = 256 * 1024
"""Lines longer than this are read with :func:`parse_long_line`."""

LONG_STRING_BYTES = 64 * 1024
"""String values longer than this (encoded) become :class:`LongText`."""

MIN_CODE_POINTS = 65_538 + 4096
"""Code points a head or tail keeps at least: the headless projection reads 65,538."""

_PLACEHOLDER = "\x00headwire-long-text-{}"


class Buffer(Protocol):
    """What :func:`parse_long_line` needs of the bytes: ``bytes`` and ``mmap`` both fit."""

    def find(self, sub: bytes, start: int = ..., end: int = ...) -> int: ...

    def __getitem__(self, index: slice) -> bytes: ...


@dataclass(frozen=True, slots=True)
class LongText:
    """A long string value known by its ends: ``head`` and ``tail`` are its first and last
    code points (they do not overlap), ``json_bytes`` its exact encoded size (quotes included)
    and ``utf8_bytes`` its UTF-8 size: exact when the value was decoded whole, else estimated
    from the ratio of decoded to encoded bytes in its two ends (counting escapes over megabytes
    would cost more than the rest of reading the line)."""

    head: str
    tail: str
    json_bytes: int
    utf8_bytes: int

    def proxy(self) -> str:
        """``head + tail``: for the headless projection, the same as the whole value."""
        return self.head + self.tail


_HOPS = 64
"""Quotes tried one by one (``memchr`` speed) before a string's end is searched for by
pattern (a tenth of the speed, but not slowed down by a string full of escaped quotes)."""


def _string_end(buf: Buffer, start: int, end: int) -> int | None:
    """The index of the quote closing the string whose content starts at ``start``."""
    position = start
    for _ in range(_HOPS):
        quote = buf.find(b'"', position, end)
        if quote < 0:
            return None
        run = 0
        while run <= _HOPS and buf[quote - run - 1 : quote - run] == b"\\":
            run += 1
        if run > _HOPS:
            break
        if run % 2 == 0:
            return quote
        position = quote + 1
    comma = buf.find(b',"', position, end)
    if comma > start and buf[comma - 1 : comma] == b'"':
        return comma - 1
    q = (comma if comma >= 0 else end) - 1
    while q >= start and buf[q : q + 1] in (b"}", b"]", b"\n", b"\r"):
        q -= 1
    if q >= start and buf[q : q + 1] == b'"':
        return q
    return None


def _loads_string(raw: bytes) -> str | None:
    quoted = b'"' + raw + b'"'
    try:
        value = orjson.loads(quoted)
    except orjson.JSONDecodeError:
        try:  # orjson refuses a lone surrogate, which the recorder writes as ``\\udxxx``
            value = json.loads(quoted)
        except ValueError:
            return None
    return value if isinstance(value, str) else None


def _decode_head(raw: bytes) -> str | None:
    """The string of the longest parseable prefix of ``raw`` (cut at most 12 bytes short)."""
    for cut in range(min(13, len(raw) + 1)):
        text = _loads_string(raw[: len(raw) - cut])
        if text is not None:
            return text
    return None


def _decode_tail(raw: bytes, whole: bool) -> str | None:
    """The string of ``raw``, a suffix of a string's content, from its first token boundary."""
    if whole:
        return _loads_string(raw)
    for i in range(5, min(len(raw), 4096)):
        # i is not inside an escape: not right after a backslash (``\\X``) nor within four
        # bytes after a ``\\u`` (``\\uXXXX``); and not on a UTF-8 continuation byte
        if raw[i - 1] != 0x5C and b"\\u" not in raw[i - 5 : i] and not 0x80 <= raw[i] <= 0xBF:
            return _loads_string(raw[i:])
    return None


def _long_text(buf: Buffer, start: int, stop: int) -> LongText | None:
    size = stop - start
    window = 80 * 1024
    while True:
        whole = 2 * window >= size
        if whole:
            text = _loads_string(buf[start:stop])
            if text is None:
                return None
            half = len(text) // 2
            head, tail = text[:half], text[half:]
            return LongText(head, tail, size + 2, len(text.encode("utf-8", "replace")))
        head_text = _decode_head(buf[start : start + window])
        tail_text = _decode_tail(buf[stop - window : stop], whole=False)
        if head_text is None or tail_text is None:
            return None
        if len(head_text) >= MIN_CODE_POINTS and len(tail_text) >= MIN_CODE_POINTS:
            decoded = len(head_text.encode("utf-8", "replace")) + len(
                tail_text.encode("utf-8", "replace")
            )
            estimate = round(size * decoded / (2 * window))
            return LongText(head_text, tail_text, size + 2, max(estimate, decoded))
        window *= 2


def _restore(value: Any, longs: dict[str, LongText]) -> Any:
    if isinstance(value, str):
        return longs.get(value, value)
    if isinstance(value, dict):
        return {k: _restore(v, longs) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, longs) for v in value]
    return value


def _spans(buf: Buffer, start: int, limit: int) -> tuple[list[tuple[int, int]], int] | None:
    """The long string values of the line starting at ``start`` and the index of its end (its
    newline, or ``limit``), found without searching the long values for the newline."""
    spans: list[tuple[int, int]] = []
    position = start
    while True:
        key = buf.find(b'":"', position, limit)
        newline = buf.find(b"\n", position, key if key >= 0 else limit)
        if newline >= 0:
            return spans, newline
        if key < 0:
            return spans, limit
        opened = key + 3
        closed = _string_end(buf, opened, limit)
        if closed is None:
            return None
        if closed - opened > LONG_STRING_BYTES:
            spans.append((opened, closed))
        position = closed + 1


def _assemble(buf: Buffer, start: int, end: int, spans: list[tuple[int, int]]) -> Any:
    pieces: list[bytes] = []
    longs: dict[str, LongText] = {}
    previous = start
    for index, (opened, closed) in enumerate(spans):
        text = _long_text(buf, opened, closed)
        if text is None:
            return None
        name = _PLACEHOLDER.format(index)
        longs[name] = text
        pieces += [buf[previous:opened], orjson.dumps(name)[1:-1]]
        previous = closed
    pieces.append(buf[previous:end])
    try:
        skeleton = orjson.loads(b"".join(pieces))
    except orjson.JSONDecodeError:
        return None
    restored = _restore(skeleton, longs)
    return restored if isinstance(restored, dict) else None


def parse_long_line(buf: Buffer, start: int, end: int) -> dict[str, Any] | None:
    """The JSON object in ``buf[start:end]`` with its long string values as :class:`LongText`;
    ``None`` when the line holds no long string value or does not have the recorder's shape."""
    found = _spans(buf, start, end)
    if found is None or not found[0] or found[1] != end:
        return None
    record: dict[str, Any] | None = _assemble(buf, start, end, found[0])
    return record


def read_long_line(buf: Buffer, start: int, limit: int) -> tuple[dict[str, Any] | None, int]:
    """:func:`parse_long_line` of the line starting at ``start``, and the index where that line
    ends (its newline, or ``limit``); ``(None, -1)`` when the end was not found on the way."""
    found = _spans(buf, start, limit)
    if found is None:
        return None, -1
    spans, end = found
    if not spans:
        return None, end
    record: dict[str, Any] | None = _assemble(buf, start, end, spans)
    return record, end
