"""JSON size: the UTF-8 length of ``JSON.stringify(value)``, measured one way everywhere.

:func:`json_size` is what every budget in headwire is measured in (the 65,536-byte wire bound,
the ACP bound, the ``headwire bound`` statistics).  It equals ``len(encode(value))`` for every
JSON value, and it never encodes a long string in one piece: a string is measured a slice of
:data:`SIZE_CHUNK` code points at a time, so measuring a 100 MB tool result costs a 1 MB copy.
:func:`payload_bytes` is the same count for the inside of one string (the quotes left out), and
:func:`plain_payload_bytes` the one a search over slices uses: it answers ``None`` instead of
taking the slower exact path when a slice holds surrogate code points.

Two counters give the same number and differ only in speed: orjson's encoder, fast on text
with few escapes, and :func:`escaped_payload_bytes` (the UTF-8 length plus a byte table of the
escape costs), several times faster on text where escapes are dense (orjson leaves its fast
loop at every escape).  :func:`escape_dense` picks one from a small sample.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson

from headwire.wire.encode import encode, encode_str

__all__ = [
    "SIZE_CHUNK",
    "escape_dense",
    "escaped_payload_bytes",
    "json_size",
    "payload_bytes",
    "plain_payload_bytes",
]

SIZE_CHUNK = 1 << 20
"""Code points per slice when measuring a long string (keeps the measuring copy small)."""

_QUOTES = 2

DENSE_SAMPLE = 512
"""Code points sampled by :func:`escape_dense`."""
_ESCAPE_EXTRA = bytes(
    0 if c >= 0x20 and c not in b'"\\' else 1 if c in b'"\\\b\t\n\f\r' else 5 for c in range(256)
)
"""Per UTF-8 byte, the bytes its JSON escape adds: 1 for a short escape (``\\n``), 5 for
``\\u00xx``, else 0.  Only ASCII bytes escape; no byte of a multi-byte UTF-8 sequence is
below 0x80."""
_SUM_SLICE = 65_519 // 5
"""Bytes per slice summed at once: Adler-32's first half is ``1 + sum`` modulo 65,521, so a
slice whose sum stays under 65,520 is summed exactly."""


def escaped_payload_bytes(s: str) -> int | None:
    """:func:`plain_payload_bytes` counted without a JSON encoder: the UTF-8 length plus the
    escapes' extra bytes (:data:`_ESCAPE_EXTRA`, summed by zlib's Adler-32 in slices);
    ``None`` for surrogate code points."""
    try:
        data = s.encode("utf-8")
    except UnicodeEncodeError:
        return None
    extra = memoryview(data.translate(_ESCAPE_EXTRA))
    total = len(data)
    for start in range(0, len(data), _SUM_SLICE):
        total += (zlib.adler32(extra[start : start + _SUM_SLICE]) & 0xFFFF) - 1
    return total


def escape_dense(s: str, *, from_end: bool = False) -> bool:
    """Whether the first (or last) :data:`DENSE_SAMPLE` code points of ``s`` escape so densely
    (escape bytes at least a quarter of the code points) that :func:`escaped_payload_bytes`
    beats orjson on ``s``.  Only a choice of speed: both count the same."""
    sample = s[-DENSE_SAMPLE:] if from_end else s[:DENSE_SAMPLE]
    try:
        extra = len(orjson.dumps(sample)) - _QUOTES - len(sample.encode("utf-8"))
    except (TypeError, UnicodeEncodeError):
        return False
    return extra * 4 >= len(sample)


def _piece_size(value: str) -> int:
    """``len(encode_str(value))``, by the faster of the two counters for ``value``."""
    if len(value) > DENSE_SAMPLE and escape_dense(value):
        size = escaped_payload_bytes(value)
        if size is not None:
            return size + _QUOTES
    return len(encode_str(value))


def _string_size(value: str) -> int:
    """``len(encode(value))``, encoding at most :data:`SIZE_CHUNK` code points at a time."""
    if len(value) <= SIZE_CHUNK:
        return _piece_size(value)
    total = _QUOTES
    start = 0
    while start < len(value):
        end = min(start + SIZE_CHUNK, len(value))
        # Never cut between the two halves of a surrogate pair: they encode as one character.
        if end < len(value) and "\ud800" <= value[end - 1] <= "\udbff":
            end += 1
        total += _piece_size(value[start:end]) - _QUOTES
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
