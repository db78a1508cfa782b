"""Texts that share one byte budget: the multi-block water-fill of both wires (pure).

A tool result made of several text blocks is bounded as a whole: the JSON of the whole list
must fit the budget, so what is left after the list's skeleton (the list with every text
emptied) is shared among the texts.  The headless rule (``headwire bound``'s text-block lists)
and the ACP rule (``tool_call_update`` content) are the same rule with a different block
skeleton and marker; both call :func:`share_payload_budget`.
"""

from __future__ import annotations

from headwire.projection.json_string import bounded_payload_bytes, truncate_sized
from headwire.wire.size import payload_bytes

__all__ = ["allocate_payload_budgets", "share_payload_budget", "share_payload_budget_sized"]


def allocate_payload_budgets(demands: list[int], available: int, reserve: int) -> list[int] | None:
    """Share ``available`` payload bytes among texts demanding ``demands`` bytes (max-min fair).

    Each text first gets ``min(demand, reserve)`` (the marker's payload, so a cut text always
    holds its marker); ``None`` when even that does not fit.  The rest is water-filled: a
    common level rises over the remaining capacities (ties broken by index), and the
    indivisible remainder goes one byte each, in index order, to the texts that could still use
    more.  Deterministic, and never more than ``available`` in total.
    """
    base = [min(d, reserve) for d in demands]
    remaining = available - sum(base)
    if remaining < 0:
        return None
    capacities = [d - b for d, b in zip(demands, base, strict=True)]
    order = sorted((c, i) for i, c in enumerate(capacities) if c > 0)
    active = len(order)
    position = 0
    level = 0
    remainder = 0
    while position < len(order) and active > 0 and remaining > 0:
        next_level = order[position][0]
        cost = (next_level - level) * active
        if cost > remaining:
            level += remaining // active
            remainder = remaining % active
            remaining = 0
            break
        level = next_level
        remaining -= cost
        while position < len(order) and order[position][0] == next_level:
            position += 1
            active -= 1
    allocations = [b + min(c, level) for b, c in zip(base, capacities, strict=True)]
    for index, capacity in enumerate(capacities):
        if remainder == 0:
            break
        if capacity > level:
            allocations[index] += 1
            remainder -= 1
    return allocations


def share_payload_budget(texts: list[str], available: int, marker: str) -> list[str] | None:
    """Bound ``texts`` so that their payloads add up to at most ``available`` bytes.

    Returns ``texts`` itself when they already fit; ``None`` when they cannot each keep a
    marker (the caller collapses the list); otherwise a new list in which every text that
    fits its share is the same object and every other one is the usual 20% head + ``marker``
    + 80% tail preview of its share.  Each text first reserves ``min(its payload, marker's
    payload)``; the rest is water-filled (:func:`allocate_payload_budgets`), so small texts
    stay whole and large ones share the remainder evenly, the lower indices taking the odd
    bytes.  No text is scanned further than the budget it could get.
    """
    shared = share_payload_budget_sized(texts, available, marker)
    return None if shared is None else shared[0]


def share_payload_budget_sized(
    texts: list[str], available: int, marker: str
) -> tuple[list[str], list[int]] | None:
    """:func:`share_payload_budget` and the payload bytes of each resulting text (exact:
    counted by the scans and cuts that produced them)."""
    remaining = available
    # (stop_after, result) of the first pass, per text: exact when it fits, else stop + 1
    scans: list[tuple[int, int]] = []
    for text in texts:
        size = bounded_payload_bytes(text, remaining)
        scans.append((remaining, size))
        remaining -= size
        if remaining < 0:
            break
    else:
        return texts, [size for _, size in scans]

    def bounded(index: int, stop: int) -> int:
        """``bounded_payload_bytes(texts[index], stop)``, from the first pass when it scanned
        at least as far (a result over its stop only says "more than the stop")."""
        if index < len(scans) and scans[index][0] >= stop:
            return min(scans[index][1], stop + 1)
        return bounded_payload_bytes(texts[index], stop)

    reserve = payload_bytes(marker)
    reserves = [min(bounded(i, reserve), reserve) for i in range(len(texts))]
    spare = available - sum(reserves)
    if spare < 0:
        return None
    demands = []
    for index, reserved in enumerate(reserves):
        cap = spare + reserved  # nobody can get more than this
        demands.append(min(bounded(index, cap), cap + 1))
    allocations = allocate_payload_budgets(demands, available, reserve)
    if allocations is None:
        return None
    cut = [
        truncate_sized(text, demand, allocation, marker)
        for text, demand, allocation in zip(texts, demands, allocations, strict=True)
    ]
    return [text for text, _ in cut], [size for _, size in cut]
