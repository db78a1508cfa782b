"""Reading a response line that holds a few very long strings in the memory of the line plus
its text, not twice its text.

A JSON parser copies its input before it reads it (orjson's and the SDK's both do), so a 200
MB line of one text block costs the line, the parser's copy and the text: three times its size.
:func:`read_long_strings` parses the line without its long strings (each string literal of at
least :data:`LONG_BYTES` bytes is replaced by a short placeholder) and decodes each long string
on its own, straight from the line: a string without escapes in one UTF-8 decode of the line's
bytes, one with escapes :data:`PIECE_BYTES` at a time (cut only between escapes, characters
and surrogate pairs).  Once everything is read, the line is emptied (``bytearray.clear``) and
only then are a string's pieces joined, so at most the line and the text, or the text and its
pieces, exist at once.

Anything these steps do not read exactly as a JSON parser would (a control character, bytes
that are not UTF-8, a lone surrogate escape, a long key) makes it return ``None`` with the line
untouched, and the line is read as before.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import orjson

__all__ = ["LONG_BYTES", "PIECE_BYTES", "read_long_strings"]

LONG_BYTES = 1 << 20
"""String literals at least this long are decoded apart from the line's other values."""
PIECE_BYTES = 8 << 20
"""Bytes of an escaped string decoded at a time."""

_CONTROL = bytes(range(0x20))
_LITERAL_BUDGET = 20_000
"""String literals looked at before a line is left to the parser: a line of a few long texts
has few; one of many strings is the parser's job."""
_HIGH_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_BACKSLASH = 0x5C
_U = 0x75


def _run_start(line: bytearray, lo: int, q: int) -> int:
    """The first index (at least ``lo``) of the run of backslashes that ends at ``q``."""
    width = 64
    while True:
        start = max(lo, q + 1 - width)
        kept = len(line[start : q + 1].rstrip(b"\\"))
        if kept or start == lo:
            return start + kept
        width *= 2


def _escape_cut(line: bytearray, lo: int, p: int) -> int:
    """The last position at most ``p`` (and past ``lo``) that is not inside an escape.

    ``lo`` is known to be between tokens.  In valid JSON a byte that is not a backslash ends its
    token, so a run of backslashes starts between tokens and pairs up from its start: an odd
    run's last backslash opens an escape (two bytes, or six for ``\\uXXXX``)."""
    q = line.rfind(b"\\", max(lo, p - 6), p)
    if q < 0:
        return p
    if (q + 1 - _run_start(line, lo, q)) % 2 == 0:
        return p  # the run ends with a whole ``\\\\``; only plain bytes follow it before p
    end = q + (6 if q + 1 < len(line) and line[q + 1] == _U else 2)
    return p if end <= p else q


def _cut(line: bytearray, lo: int, p: int) -> int:
    """A position near ``p`` that is between escapes, UTF-8 characters and surrogate pairs."""
    p = _escape_cut(line, lo, p)
    while p > lo and 0x80 <= line[p] <= 0xBF:  # a UTF-8 continuation byte: at most 3 steps
        p -= 1
    if p - 6 > lo and _HIGH_SURROGATE_ESCAPE.fullmatch(line, p - 6, p):
        p = _escape_cut(line, lo, p - 6)  # keep ``\\ud83d\\ude00`` in one piece
    return p


def _has_control(line: bytearray, start: int, end: int) -> bool:
    """Whether ``line[start:end]`` holds a byte below 0x20 (checked a piece at a time)."""
    for at in range(start, end, PIECE_BYTES):
        piece = line[at : min(at + PIECE_BYTES, end)]
        if len(piece.translate(None, _CONTROL)) != len(piece):
            return True
    return False


def _decode(line: bytearray, start: int, end: int) -> list[str] | None:
    """The text of the string literal body ``line[start:end]`` (no quotes), in pieces; ``None``
    when a JSON parser would not read it (a control character, bad UTF-8, a bad escape)."""
    if line.find(b"\\", start, end) < 0:
        if _has_control(line, start, end):
            return None
        with memoryview(line) as view, view[start:end] as body:
            try:
                return [str(body, "utf-8")]
            except UnicodeDecodeError:
                return None
    pieces: list[str] = []
    position = start
    while position < end:
        cut = end if end - position <= PIECE_BYTES else _cut(line, position, position + PIECE_BYTES)
        if cut <= position:
            return None
        try:
            piece = orjson.loads(b'"' + line[position:cut] + b'"')
        except orjson.JSONDecodeError:
            return None
        pieces.append(piece)
        position = cut
    return pieces


def _has_end(line: bytearray, lo: int, hi: int) -> bool:
    """Whether ``line[lo:hi]`` (``lo`` between tokens of a string) holds an unescaped quote:
    with each ``\\\\`` pair and then each ``\\"`` removed (left to right, as the escapes
    pair up), any quote left is one."""
    if line.find(b"\\", lo, hi) < 0:
        return line.find(b'"', lo, hi) >= 0
    return b'"' in line[lo:hi].replace(b"\\\\", b"").replace(b'\\"', b"")


def _literal_end(line: bytearray, start: int) -> int | None:
    """The index of the quote that closes the string literal opened at ``start``, or ``None``
    when it is not closed.  The string is skipped in pieces that double up to
    :data:`PIECE_BYTES`, each checked by :func:`_has_end` at C speed; the piece that holds the
    end is halved down to a few KiB and only there are quotes looked at one by one."""
    lo, size = start + 1, 64
    while True:
        if lo >= len(line):
            return None
        hi = len(line) if len(line) - lo <= size else _cut(line, lo, lo + size)
        if _has_end(line, lo, hi):
            break
        lo, size = hi, min(size * 2, PIECE_BYTES)
    while hi - lo > 4096:
        mid = _cut(line, lo, (lo + hi) // 2)
        if mid <= lo:
            break
        if _has_end(line, lo, mid):
            hi = mid
        else:
            lo = mid
    end = lo - 1
    while True:
        end = line.find(b'"', end + 1, hi)
        if end < 0:
            return None
        if line[end - 1] != _BACKSLASH or (end - _run_start(line, lo, end - 1)) % 2 == 0:
            return end


def _long_literals(line: bytearray) -> list[tuple[int, int]] | None:
    """The ``(start, end)`` of each string literal of at least :data:`LONG_BYTES` bytes, quotes
    included; ``None`` past :data:`_LITERAL_BUDGET` literals or for an unterminated string.

    Outside strings JSON has no quote, so each quote found there opens a literal."""
    spans: list[tuple[int, int]] = []
    position = 0
    for _ in range(_LITERAL_BUDGET):
        start = line.find(b'"', position)
        if start < 0:
            return spans
        end = _literal_end(line, start)
        if end is None:
            return None
        if end - start - 1 >= LONG_BYTES:
            spans.append((start, end + 1))
        position = end + 1
    return None


def _count_marks(root: Any, texts: dict[str, list[str]]) -> int:
    """How many placeholders stand as dict values or list items in ``root``."""
    found = 0
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        values = item.values() if isinstance(item, dict) else item
        for value in values:
            if isinstance(value, str):
                found += value in texts
            elif isinstance(value, dict | list):
                stack.append(value)
    return found


def _join(root: Any, texts: dict[str, list[str]]) -> None:
    """Replace each placeholder by its text, joining its pieces now (one piece is kept as is)."""
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        members: Any = item.items() if isinstance(item, dict) else enumerate(item)
        for key, value in list(members):
            if isinstance(value, str):
                pieces = texts.pop(value, None)
                if pieces is not None:
                    item[key] = pieces[0] if len(pieces) == 1 else "".join(pieces)
                    pieces.clear()
            elif isinstance(value, dict | list):
                stack.append(value)


def read_long_strings(line: bytearray) -> Any:
    """The JSON value in ``line`` with its long strings decoded apart (see the module), or
    ``None`` (the line untouched) when it has no long string or one these steps would not read
    exactly as a JSON parser does.

    When a value is returned, ``line`` has been emptied: its bytes are gone.
    """
    spans = _long_literals(line)
    if not spans:
        return None
    nonce = uuid.uuid4().hex
    skeleton: list[bytes] = []
    texts: dict[str, list[str]] = {}
    position = 0
    for index, (start, end) in enumerate(spans):
        pieces = _decode(line, start + 1, end - 1)
        if pieces is None:
            return None
        mark = f"\x00headwire-long-{nonce}-{index}"
        texts[mark] = pieces
        skeleton += [bytes(line[position:start]), orjson.dumps(mark)]
        position = end
    skeleton.append(bytes(line[position:]))
    try:
        root = orjson.loads(b"".join(skeleton))
    except orjson.JSONDecodeError:
        return None
    del skeleton
    if not isinstance(root, dict | list) or _count_marks(root, texts) != len(texts):  # a long key
        return None
    line.clear()  # the line's bytes are no longer needed: free them before joining
    _join(root, texts)
    return root
