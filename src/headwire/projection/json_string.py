"""JSON-string byte accounting and the single-string head/tail preview.

A *unit* is one UTF-16 code unit, except that a valid surrogate pair is one unit of width two.
In a Python ``str`` an astral code point is such a pair, and so are two adjacent surrogate code
points high-then-low.  Each unit costs exactly the UTF-8 bytes ``JSON.stringify`` writes for it
(1 to 4 raw bytes, 2 for a short escape, 6 for ``\\u00xx`` or a lone surrogate ``\\udxxx``).

Every function here works on windows bounded by the byte budget: a 100 MB input costs what a
1 MB input costs.  Costs are measured by encoding slices with the C-speed encoder of
:mod:`headwire.wire`, so no per-character Python loop runs over the text.
"""

from __future__ import annotations

import math
import re

from headwire.wire.encode import encode_str

__all__ = [
    "JSON_STRING_DELIMITER_BYTES",
    "json_string_json_bytes",
    "json_string_payload_bytes",
    "project_json_string",
    "select_prefix",
    "select_suffix",
    "truncate_json_string_payload",
]

JSON_STRING_DELIMITER_BYTES = 2
"""The two quote characters around every JSON string."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_CHUNK = 2048
"""Code points per cost probe while looking for the cut (a constant, not a tuning of the input)."""


def _payload(s: str) -> int:
    return len(encode_str(s)) - JSON_STRING_DELIMITER_BYTES


def json_string_payload_bytes(value: str, stop_after: float = math.inf) -> int:
    """Bytes of ``value`` between its JSON quotes, scanning no further than needed.

    Returns the exact count when it is ``<= stop_after``; otherwise some number greater than
    ``stop_after`` ("too large"), without encoding the whole value.
    """
    if len(value) > stop_after:  # every code point costs at least one byte
        return int(stop_after) + 1
    exact = _payload(value)
    if exact > stop_after:
        return int(stop_after) + 1
    return exact


def json_string_json_bytes(value: str) -> int:
    """``UTF8_BYTES(JSON.stringify(value))``: the payload plus the two quotes."""
    return _payload(value) + JSON_STRING_DELIMITER_BYTES


def _normalize(window: str) -> str:
    """Join adjacent surrogate code points into the astral code point they form in UTF-16."""
    if _SURROGATE.search(window) is None:
        return window
    return window.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _fit_count(units: str, budget: int, from_end: bool) -> int:
    """Largest ``k`` such that the first (or last) ``k`` units of ``units`` cost ``<= budget``.

    ``units`` is normalized, so each code point is one unit with a cost of its own.  Costs are
    summed chunk by chunk; the chunk that crosses the budget is bisected.
    """
    n = min(len(units), budget)  # each unit costs >= 1 byte
    if n <= 0:
        return 0
    whole = units[len(units) - n :] if from_end else units[:n]
    if _payload(whole) <= budget:
        return n
    spent = 0
    taken = 0
    while taken < n:
        size = min(_CHUNK, n - taken)
        if from_end:
            chunk = units[len(units) - taken - size : len(units) - taken]
        else:
            chunk = units[taken : taken + size]
        cost = _payload(chunk)
        if spent + cost > budget:
            room = budget - spent
            lo, hi = 0, size  # lo fits, hi does not
            while hi - lo > 1:
                mid = (lo + hi) // 2
                part = chunk[size - mid :] if from_end else chunk[:mid]
                if _payload(part) <= room:
                    lo = mid
                else:
                    hi = mid
            return taken + lo
        spent += cost
        taken += size
    return taken


def select_prefix(value: str, budget: int) -> str:
    """The longest run of whole units from the start of ``value`` whose payload fits ``budget``.

    Equal, unit for unit, to walking forwards and stopping at the first unit that does not fit;
    a surrogate pair is never split.
    """
    units = _normalize(value[: max(budget, 0) + 2])
    return units[: _fit_count(units, budget, from_end=False)]


def select_suffix(value: str, budget: int) -> str:
    """The longest run of whole units at the end of ``value`` whose payload fits ``budget``."""
    if budget <= 0:
        return ""
    units = _normalize(value[-(budget + 2) :])
    k = _fit_count(units, budget, from_end=True)
    return units[len(units) - k :] if k else ""


def truncate_json_string_payload(
    value: str, original_payload_bytes: int, payload_budget: int, marker: str
) -> str:
    """Cut ``value`` to a preview of about 20% head and 80% tail around ``marker``.

    ``original_payload_bytes`` is a (possibly early-stopped) scan of ``value``; when it is within
    ``payload_budget`` the value is returned unchanged.  When the budget is smaller than the
    marker, the result is a head-only prefix without the marker.
    """
    if original_payload_bytes <= payload_budget:
        return value
    marker_bytes = _payload(marker)
    if payload_budget < marker_bytes:
        return select_prefix(value, payload_budget)
    source_budget = payload_budget - marker_bytes
    head_budget = math.floor(source_budget * 0.2)
    tail_budget = source_budget - head_budget
    return select_prefix(value, head_budget) + marker + select_suffix(value, tail_budget)


def project_json_string(text: str, json_byte_budget: int, marker: str) -> str:
    """Bound ``text`` so that ``UTF8_BYTES(JSON.stringify(result)) <= json_byte_budget``.

    A value that already fits is returned as the same object.  Otherwise the result is
    ``head + marker + tail`` (the marker exactly once, counted in the budget), or a head-only
    prefix when the budget cannot hold the marker; ``""`` for budgets of 0, 1 and 2.
    """
    payload_budget = max(0, json_byte_budget - JSON_STRING_DELIMITER_BYTES)
    scanned = json_string_payload_bytes(text, payload_budget)
    if scanned <= payload_budget:
        return text
    projected = truncate_json_string_payload(text, scanned, payload_budget, marker)
    if json_string_json_bytes(projected) <= json_byte_budget:
        return projected
    fallback = select_prefix(marker, payload_budget)
    return fallback if json_string_json_bytes(fallback) <= json_byte_budget else ""
