"""Reading JSON text as headwire writes it: total over every string JSON can hold.

:func:`loads` accepts everything ``JSON.parse`` accepts, including lone surrogate escapes
(``"\\ud800"``), which :func:`headwire.wire.encode` writes for lone surrogates exactly as
``JSON.stringify`` does and which ``orjson`` refuses.  Such a value decodes to a Python string
holding the lone surrogate, and encodes back to the same escape: the round trip is exact.

The fast path is one ``orjson.loads``; only a document it refuses that holds a surrogate escape
(``\\uD800``-``\\uDFFF``) takes the standard library's parser (still C-accelerated), which
also refuses ``NaN`` and ``Infinity`` as JSON does.  Everything else orjson refuses stays
refused, with orjson's error (and orjson's nesting limit of 1,024 levels).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from headwire.errors import HeadwireError

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class _NotJson(HeadwireError, ValueError):
    """A ``NaN`` or ``Infinity`` literal: JSON has none."""


def _reject_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON")


def loads(data: bytes | str) -> Any:
    """Parse one JSON document; raises :class:`ValueError` (``UnicodeDecodeError`` for invalid
    UTF-8) or :class:`RecursionError` when it cannot."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as first:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        if not _SURROGATE_ESCAPE.search(raw):
            raise
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
            return json.loads(text, parse_constant=_reject_constant)
        except ValueError:
            raise first from None


__all__ = ["loads"]
