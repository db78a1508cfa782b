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
from collections.abc import Callable

from headwire.errors import HeadwireError
from headwire.wire.size import (
    DENSE_SAMPLE,
    escape_dense,
    escaped_payload_bytes,
    json_size,
    payload_bytes,
    plain_payload_bytes,
)

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

_SAMPLE = 4096
"""Units in the first cost probe while looking for a cut; later probes are sized by the cost
density measured so far (constants, not tunings of the input)."""
_SLACK = 32
"""Units added to an extrapolated probe so that it overshoots the cut by a little; also the first
step when galloping away from an interpolated estimate."""


_payload = payload_bytes
_SURROGATE_RANGE = ("\ud800", "\udfff")


class _Surrogates(HeadwireError):
    """A probed slice holds surrogate code points: the window must be normalized first."""


def _plain_payload(s: str) -> int:
    """:func:`_payload` of a slice without surrogate code points (raises :class:`_Surrogates`)."""
    size = plain_payload_bytes(s)
    if size is None:
        raise _Surrogates
    return size


def _dense_payload(s: str) -> int:
    """:func:`_plain_payload` counted by :func:`escaped_payload_bytes` (faster where escapes
    are dense; the same number)."""
    size = escaped_payload_bytes(s)
    if size is None:
        raise _Surrogates
    return size


def _bounded_payload(value: str, stop_after: float) -> int:
    """The exact payload when it is ``<= stop_after``, else ``int(stop_after) + 1``: cheaper than
    :func:`json_string_payload_bytes` when only "fits or not" matters."""
    if len(value) > stop_after:  # every code point costs at least one byte
        return int(stop_after) + 1
    exact = _payload(value)
    if exact > stop_after:
        return int(stop_after) + 1
    return exact


def json_string_payload_bytes(value: str, stop_after: float = math.inf) -> int:
    """Bytes of ``value`` between its JSON quotes, scanning no further than needed.

    Equal to upstream's ``jsonStringPayloadByteLength``: the exact count when it is
    ``<= stop_after``; otherwise the running count at the first unit that takes it past
    ``stop_after`` (a number greater than ``stop_after``, not the total), found on a window of
    about ``stop_after`` code points without encoding the whole value.
    """
    if math.isnan(stop_after):  # upstream's "bytes > NaN" never stops the scan
        return _payload(value)
    scanned = _bounded_payload(value, stop_after)
    if scanned <= stop_after:
        return scanned
    limit = math.floor(stop_after) if stop_after >= 0 else -1  # costs are whole numbers
    units, k, head_cost, passing = _search(value[: max(limit, 0) + 2], limit, from_end=False)
    # The unit right after the longest fitting prefix is the one that passes ``stop_after``;
    # the search usually measured it already.  ``units`` agrees with the normalized window up
    # to unit ``k``, so joining the two code points there yields exactly that unit.
    if passing is None:
        passing = head_cost + _payload(_join_pairs(units[k : k + 2])[:1])
    return passing


def json_string_json_bytes(value: str) -> int:
    """``UTF8_BYTES(JSON.stringify(value))``: the payload plus the two quotes."""
    return json_size(value)


def _join_pairs(window: str) -> str:
    """Join adjacent surrogate code points into the astral code point they form in UTF-16."""
    return window.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _fit_count(
    units: str, budget: int, from_end: bool, cost: Callable[[str], int]
) -> tuple[int, int, int | None]:
    """Largest ``k`` such that the first (or last) ``k`` units of ``units`` cost ``<= budget``.

    Returns ``(k, cost of those k units, cost of k + 1 units)``; the last is ``None`` when the
    search never measured unit ``k + 1`` (when ``k`` is ``min(len(units), budget)``).

    Each code point of ``units`` is one unit with a cost of its own, so the cost of a run is the
    sum of the costs of its parts.  The search keeps a bracket (``lo`` units fit, ``hi`` do not)
    and measures only the span between a probe and the nearer end of the bracket:

    1. a sample of :data:`_SAMPLE` units, then spans sized by the cost density of the last span
       (plus :data:`_SLACK`), until a span does not fit or everything fits;
    2. one interpolated probe inside the bracket, then probes galloping away from it
       (:data:`_SLACK`, doubling) until the cut is bracketed tightly, then bisection.

    On even text that encodes about ``k`` units plus a few dozen; on any text a bounded number
    of probes (each unit costs 1 to 6 bytes) encodes a bounded multiple of ``min(len, budget)``.
    """
    n = min(len(units), budget)  # each unit costs >= 1 byte
    if n <= 0:
        return 0, 0, None
    size = len(units)
    lo = lo_cost = 0  # the first lo units fit and cost lo_cost
    hi, hi_cost = n + 1, 0  # the first hi units do not fit; n + 1: none known not to fit yet

    def fits(m: int) -> bool:
        """Whether the first ``m`` units fit; narrows the bracket to ``m`` on one side."""
        nonlocal lo, lo_cost, hi, hi_cost
        if hi > n or m - lo <= hi - m:
            total = lo_cost + cost(units[size - m : size - lo] if from_end else units[lo:m])
        else:
            total = hi_cost - cost(units[size - hi : size - m] if from_end else units[m:hi])
        if total <= budget:
            lo, lo_cost = m, total
            return True
        hi, hi_cost = m, total
        return False

    probe = min(n, _SAMPLE)
    while True:
        start, spent = lo, lo_cost
        if not fits(probe):
            break
        if lo == n:
            return n, lo_cost, None
        probe = min(n, lo + (budget - lo_cost) * (lo - start) // (lo_cost - spent) + _SLACK)
    if hi - lo > 1:
        estimate = lo + (budget - lo_cost) * (hi - lo) // (hi_cost - lo_cost)
        upward = fits(max(lo + 1, min(hi - 1, estimate)))
        step = _SLACK
        while hi - lo > step and fits(lo + step if upward else hi - step) == upward:
            step *= 2
    while hi - lo > 1:
        fits((lo + hi) // 2)
    return lo, lo_cost, hi_cost  # hi == lo + 1


def _search(window: str, budget: int, from_end: bool) -> tuple[str, int, int, int | None]:
    """``(units, *_fit_count(units, ...))`` for the units of ``window``.

    The window is searched as it is; only when a probe meets a surrogate code point is it
    normalized (pairs joined) and searched again with the exact encoder.  A search that met
    none saw every unit up to the cut (and the unit after it, when it measured that one), and
    there normalizing changes nothing: ``units`` agrees with the normalized window that far.
    """
    dense = len(window) > DENSE_SAMPLE and escape_dense(window, from_end=from_end)
    try:
        return window, *_fit_count(
            window, budget, from_end, _dense_payload if dense else _plain_payload
        )
    except _Surrogates:
        units = _join_pairs(window)
        return units, *_fit_count(units, budget, from_end, _payload)


def _select(window: str, budget: int, from_end: bool) -> tuple[str, int]:
    """The longest run of whole units at the start (or end) of ``window`` that fits ``budget``,
    and its payload bytes."""
    window, k, cost, _ = _search(window, budget, from_end)
    if from_end:
        return (window[len(window) - k :] if k else ""), cost
    return window[:k], cost


def _prefix_sized(value: str, budget: int) -> tuple[str, int]:
    return _select(value[: max(budget, 0) + 2], budget, from_end=False)


def _suffix_sized(value: str, budget: int) -> tuple[str, int]:
    if budget <= 0:
        return "", 0
    return _select(value[-(budget + 2) :], budget, from_end=True)


def select_prefix(value: str, budget: int) -> str:
    """The longest run of whole units from the start of ``value`` whose payload fits ``budget``.

    Equal, unit for unit, to walking forwards and stopping at the first unit that does not fit;
    a surrogate pair is never split.
    """
    return _prefix_sized(value, budget)[0]


def select_suffix(value: str, budget: int) -> str:
    """The longest run of whole units at the end of ``value`` whose payload fits ``budget``."""
    return _suffix_sized(value, budget)[0]


def truncate_json_string_payload(
    value: str, original_payload_bytes: int, payload_budget: int, marker: str
) -> str:
    """Cut ``value`` to a preview of about 20% head and 80% tail around ``marker``.

    ``original_payload_bytes`` is a (possibly early-stopped) scan of ``value``; when it is within
    ``payload_budget`` the value is returned unchanged.  When the budget is smaller than the
    marker, the result is a head-only prefix without the marker.
    """
    return truncate_sized(value, original_payload_bytes, payload_budget, marker)[0]


def truncate_sized(
    value: str, original_payload_bytes: int, payload_budget: int, marker: str
) -> tuple[str, int]:
    """:func:`truncate_json_string_payload` and the payload bytes of its result, counted from
    the searches that cut it (equal to :func:`json_string_payload_bytes` of the result; an
    unchanged ``value`` is counted as ``original_payload_bytes``, exact when it fits)."""
    if original_payload_bytes <= payload_budget:
        return value, original_payload_bytes
    marker_bytes = _payload(marker)
    if payload_budget < marker_bytes:
        return _prefix_sized(value, payload_budget)
    source_budget = payload_budget - marker_bytes
    head_budget = math.floor(source_budget * 0.2)
    tail_budget = source_budget - head_budget
    head, head_cost = _prefix_sized(value, head_budget)
    tail, tail_cost = _suffix_sized(value, tail_budget)
    text = head + marker + tail
    if (
        not marker
        or _SURROGATE_RANGE[0] <= marker[0] <= _SURROGATE_RANGE[1]
        or (_SURROGATE_RANGE[0] <= marker[-1] <= _SURROGATE_RANGE[1])
    ):  # the joins could pair surrogates: count the result itself
        return text, _payload(text)
    return text, head_cost + marker_bytes + tail_cost


def bounded_payload_bytes(value: str, stop_after: int) -> int:
    """The payload bytes of ``value`` when they are ``<= stop_after``, else ``stop_after + 1``
    (all a fits-or-not decision needs; cheaper than :func:`json_string_payload_bytes`, which
    also finds the running count at the unit that passes ``stop_after``)."""
    return _bounded_payload(value, stop_after)


def project_json_string(text: str, json_byte_budget: int, marker: str) -> str:
    """Bound ``text`` so that ``UTF8_BYTES(JSON.stringify(result)) <= json_byte_budget``.

    A value that already fits is returned as the same object.  Otherwise the result is
    ``head + marker + tail`` (the marker exactly once, counted in the budget), or a head-only
    prefix when the budget cannot hold the marker; ``""`` for budgets of 0, 1 and 2.
    """
    payload_budget = max(0, json_byte_budget - JSON_STRING_DELIMITER_BYTES)
    scanned = _bounded_payload(text, payload_budget)
    if scanned <= payload_budget:
        return text
    projected, size = truncate_sized(text, scanned, payload_budget, marker)
    if size + JSON_STRING_DELIMITER_BYTES <= json_byte_budget:
        return projected
    fallback = select_prefix(marker, payload_budget)
    return fallback if json_string_json_bytes(fallback) <= json_byte_budget else ""
