"""JSON size: the UTF-8 length of ``JSON.stringify(value)``, measured one way everywhere.

:func:`json_size` is what every budget in headwire is measured in (the 65,536-byte wire bound,
the ACP bound, the ``headwire bound`` statistics).  It equals ``len(encode(value))`` for every
JSON value, and it never encodes a long string in one piece: a string is measured a slice of
:data:`SIZE_CHUNK` code points at a time, so measuring a 100 MB tool result costs a 1 MB copy.
:func:`payload_bytes` is the same count for the inside of one string (the quotes left out), and
:func:`plain_payload_bytes` the one a search over slices uses: it answers ``None`` instead of
taking the slower exact path when a slice holds surrogate code points.
"""

from __future__ import annotations

from typing import Any

import orjson

from headwire.wire.encode import encode, encode_str

__all__ = ["SIZE_CHUNK", "json_size", "payload_bytes", "plain_payload_bytes"]

SIZE_CHUNK = 1 << 20
"""Code points per slice when measuring a long string (keeps the measuring copy small)."""

_QUOTES = 2


def _string_size(value: str) -> int:
    """``len(encode(value))``, encoding at most :data:`SIZE_CHUNK` code points at a time."""
    if len(value) <= SIZE_CHUNK:
        return len(encode_str(value))
    total = _QUOTES
    start = 0
    while start < len(value):
        end = min(start + SIZE_CHUNK, len(value))
        # Never cut between the two halves of a surrogate pair: they encode as one character.
        if end < len(value) and "\ud800" <= value[end - 1] <= "\udbff":
            end += 1
        total += len(encode_str(value[start:end])) - _QUOTES
        start = end
    return total


def json_size(value: Any) -> int:
    """``len(encode(value))`` for any JSON value, without encoding long strings in one piece
    (and without recursion: any nesting depth is measured)."""
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            total += _string_size(item)
        elif isinstance(item, dict):
            total += 2 + 2 * len(item) - (1 if item else 0)  # braces, colons, commas
            total += sum(_string_size(k) for k in item)
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            total += 2 + max(len(item) - 1, 0)
            pending.extend(item)
        else:
            total += len(encode(item))
    return total


def payload_bytes(s: str) -> int:
    """Bytes of ``s`` inside its JSON quotes: ``json_size(s) - 2``."""
    return _string_size(s) - _QUOTES


def plain_payload_bytes(s: str) -> int | None:
    """:func:`payload_bytes` of a string without surrogate code points, else ``None``.

    One orjson call and nothing else: orjson refuses exactly the surrogate code points, which
    the exact encoder must join or escape, so a caller probing many slices learns at once when
    it has to fall back to :func:`payload_bytes`.
    """
    try:
        return len(orjson.dumps(s)) - _QUOTES
    except TypeError:
        return None
