"""What a session spends: token usage per model, its cost, and the ``--max-budget-usd`` check.

One :class:`Meter` per session, shared by the main agent and its subagents (it sits on
:class:`~headwire.runtime.agent.loop.AgentConfig`, which subagents copy by reference).  Every
finished model call is added with the name of the model that answered it.  Two totals are kept:

* the session's, which continues a resumed session's (:func:`recorded_usage` reads the last
  ``result`` record's ``model_usage``): the result's ``total_cost_usd`` and ``modelUsage``;
* this process's, which ``--max-budget-usd`` limits (a resumed session gets its budget anew, as
  Claude Code's does).

Prices come from :mod:`headwire.runtime.config.pricing` (the built-in table with the settings'
``modelPricing`` over it).  A model without a price makes every total it is part of ``None``,
never ``0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from headwire import events as ev
from headwire.runtime.config.pricing import ModelPrice, lookup, model_cost, price_table
from headwire.runtime.models.base import Usage
from headwire.runtime.store.recording import read_records


def _count(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_from_record(raw: Mapping[str, Any]) -> Usage:
    """A ``model_usage`` entry of a ``result`` record (written by
    :mod:`headwire.runtime.store.record_events`) as a usage; missing or bad counts read as 0."""
    return Usage(
        input_tokens=_count(raw, "input_tokens"),
        output_tokens=_count(raw, "output_tokens"),
        cached_tokens=_count(raw, "cache_read_input_tokens"),
        total_tokens=_count(raw, "total_tokens"),
        cache_write_tokens=_count(raw, "cache_creation_input_tokens"),
    )


def recorded_usage(path: Path) -> dict[str, Usage]:
    """The session's usage per model as its last main-agent ``result`` record saved it (empty
    for a recording without one, or from before results carried it)."""
    found: dict[str, Usage] = {}
    for record in read_records(path):
        if record.get("type") != "result" or record.get("parent_tool_use_id") is not None:
            continue
        by_model = record.get("model_usage")
        if isinstance(by_model, dict):
            found = {
                str(name): usage_from_record(raw)
                for name, raw in by_model.items()
                if isinstance(raw, dict)
            }
    return found


class Meter:
    """A session's usage and cost (see the module docstring)."""

    def __init__(
        self,
        prices: Mapping[str, ModelPrice] | None = None,
        previous: Mapping[str, Usage] | None = None,
    ) -> None:
        self.prices = prices if prices is not None else price_table()
        self._session: dict[str, Usage] = dict(previous or {})
        self._process: dict[str, Usage] = {}

    def add(self, model: str, usage: Usage) -> None:
        """Count one finished model call of ``model``."""
        self._session[model] = self._session.get(model, Usage()) + usage
        self._process[model] = self._process.get(model, Usage()) + usage

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``, ``None`` when it has none."""
        price = lookup(self.prices, model)
        if price is None or (price.input_per_million is None and price.output_per_million is None):
            return None
        return price

    def _total(self, by_model: Mapping[str, Usage]) -> float | None:
        total: float | None = 0.0
        for model, usage in by_model.items():
            cost = model_cost(usage, self.price(model))
            total = None if cost is None or total is None else total + cost
        return total

    def spent_usd(self) -> float | None:
        """What this process has spent, ``None`` when a model it used has no price."""
        return self._total(self._process)

    def unpriced(self) -> list[str]:
        """The models this process used that have no price."""
        return [m for m in self._process if self.price(m) is None]

    def snapshot(self) -> ev.RunCost:
        """The session's running totals, for the turn's result."""
        entries: list[tuple[str, ev.ModelCost]] = []
        for model, usage in self._session.items():
            price = self.price(model)
            known = lookup(self.prices, model)
            entries.append(
                (
                    model,
                    ev.ModelCost(
                        usage=usage,
                        cost_usd=model_cost(usage, price),
                        context_window=known.context_window if known else None,
                        max_output_tokens=known.max_output_tokens if known else None,
                    ),
                )
            )
        return ev.RunCost(total_usd=self._total(self._session), by_model=tuple(entries))

    def session_usage(self) -> dict[str, Usage]:
        """The session's usage per model (what a ``result`` record saves)."""
        return dict(self._session)


__all__ = ["Meter", "recorded_usage", "usage_from_record"]
