""":func:`~headwire.wire.encode` in pieces: the same bytes, without one copy of a long string.

A session recording holds a tool's full display, which may be hundreds of megabytes of text.
``encode(record)`` would build one ``bytes`` object as large as the display (plus the display
itself); :func:`encode_pieces` yields the same bytes in pieces instead, each long string written
:data:`PIECE_CHARS` characters at a time, so writing a record costs the record plus one piece.

The pieces are exact because JSON escapes a string one code point at a time: the escaped text of
a string is the concatenation of the escaped texts of its slices, as long as no slice ends
between the two halves of a surrogate pair (which ``JSON.stringify`` writes as one character;
:func:`string_pieces` never cuts there).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from headwire.wire.encode import encode, encode_str

__all__ = ["LONG_STRING_CHARS", "PIECE_CHARS", "encode_pieces", "string_pieces"]

LONG_STRING_CHARS = 1 << 20
"""Strings at least this long are written in pieces."""
PIECE_CHARS = 4 << 20
"""Characters of a long string encoded at a time."""
_HIGH, _HIGH_END, _LOW, _LOW_END = "\ud800", "\udbff", "\udc00", "\udfff"
_MAX_DEPTH = 4
"""Long strings are looked for this many levels deep (a record's ``message.content`` is at 2);
deeper ones are encoded whole, which is still exact."""


def string_pieces(text: str, piece_chars: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` in slices of about ``piece_chars`` characters that never split a surrogate
    pair (a high surrogate followed by a low one); ``"".join`` of them is ``text``."""
    start, size = 0, len(text)
    while start < size:
        end = min(start + max(piece_chars, 2), size)
        if end < size and _HIGH <= text[end - 1] <= _HIGH_END and _LOW <= text[end] <= _LOW_END:
            end -= 1  # never between the halves of a pair
        yield text[start:end]
        start = end


def _escaped(text: str, piece_chars: int) -> Iterator[bytes]:
    """``encode_str(text)`` without its quotes, a piece at a time."""
    for piece in string_pieces(text, piece_chars):
        yield encode_str(piece)[1:-1]


def _swap_long(value: Any, found: dict[str, str], depth: int, long_chars: int) -> Any:
    """``value`` with every long string at most ``depth`` levels down replaced by a unique
    placeholder (recorded in ``found``); containers without one are returned as they are, and a
    container is copied only when something in it changed (the common record has no long
    string, and costs one look at each member)."""
    kind = type(value)
    if kind is str:
        if len(value) < long_chars:
            return value
        mark = f"\x00headwire-piece-{uuid.uuid4().hex}"
        found[mark] = value
        return mark
    if depth <= 0:
        return value
    if kind is dict or kind is list or kind is tuple:
        is_dict = kind is dict
        copy: Any = None
        for key, item in value.items() if is_dict else enumerate(value):
            if type(item) in _LEAVES and (type(item) is not str or len(item) < long_chars):
                continue
            new = _swap_long(item, found, depth - 1, long_chars)
            if new is not item:
                if copy is None:
                    copy = dict(value) if is_dict else list(value)
                copy[key] = new
        return value if copy is None else copy
    if isinstance(value, str):  # a str subclass
        return (
            _swap_long(str(value), found, depth, long_chars) if len(value) >= long_chars else value
        )
    if isinstance(value, dict | list | tuple):  # subclasses: as plain containers
        plain = dict(value) if isinstance(value, dict) else list(value)
        swapped = _swap_long(plain, found, depth, long_chars)
        return value if swapped is plain else swapped
    return value


_LEAVES = frozenset({str, int, float, bool, type(None)})
"""Member types that hold no long string below them (a ``str`` is checked for length)."""


def encode_pieces(
    value: Any, piece_chars: int = PIECE_CHARS, long_chars: int = LONG_STRING_CHARS
) -> Iterator[bytes]:
    """The bytes of :func:`~headwire.wire.encode` ``(value)``, in pieces: strings of at least
    ``long_chars`` characters (up to four levels deep) are written ``piece_chars`` characters
    at a time, everything else as ``encode`` writes it.

    Invariant: ``b"".join(encode_pieces(v)) == encode(v)`` for every JSON value ``v``.
    """
    found: dict[str, str] = {}
    swapped = _swap_long(value, found, _MAX_DEPTH, max(long_chars, 1))
    if not found:
        yield encode(value)
        return
    data = encode(swapped)
    position = 0
    # Placeholders are found in the order they were written; each appears exactly once (its
    # random name cannot occur anywhere else in the value).
    spots = sorted((data.index(encode_str(mark)), mark) for mark in found)
    for at, mark in spots:
        yield data[position:at]
        yield b'"'
        yield from _escaped(found[mark], piece_chars)
        yield b'"'
        position = at + len(encode_str(mark))
    yield data[position:]
