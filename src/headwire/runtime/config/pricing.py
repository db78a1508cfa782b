"""What a run cost: ``total_cost_usd`` and per-model ``modelUsage`` from token usage.

Prices come from the built-in table (``headwire/runtime/data/prices.json``, list prices per
million tokens, dated) and the settings' ``modelPricing``, which adds models and overrides
them whole.  A model is found by its exact name, then without a dated snapshot suffix
(``-2025-04-14``, ``-20250514``) or ``-latest``.  A model with no price costs ``None``: the
result then says ``null``, never ``0``.

Token counts follow the result's ``usage``: ``input_tokens`` includes the tokens read from the
provider's prompt cache (``cached_tokens``), as OpenAI-compatible servers count them; those are
priced at ``cachedInputPerMillionTokens`` when the model has one, else as input.  Everything
here is pure: no I/O except reading the package's own table once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from headwire.records import dataclass
from headwire.runtime.data import read_data
from headwire.runtime.models.base import Usage
from headwire.wire import loads

_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)\Z")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """One model's prices (US dollars per million tokens) and, when known, its limits."""

    input_per_million: float | None = None
    output_per_million: float | None = None
    cached_input_per_million: float | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None


def _price(raw: Mapping[str, Any]) -> ModelPrice:
    return ModelPrice(
        raw.get("inputPerMillionTokens"),
        raw.get("outputPerMillionTokens"),
        raw.get("cachedInputPerMillionTokens"),
        raw.get("contextWindow"),
        raw.get("maxOutputTokens"),
    )


@cache
def builtin_prices() -> Mapping[str, ModelPrice]:
    """The package's price table."""
    text = read_data("prices.json")
    models: dict[str, Any] = loads(text)["models"]
    return MappingProxyType({name: _price(raw) for name, raw in models.items()})


def price_table(overrides: Mapping[str, ModelPrice] | None = None) -> Mapping[str, ModelPrice]:
    """The built-in table with ``overrides`` (settings' ``modelPricing``) laid over it."""
    table = dict(builtin_prices())
    for name, price in (overrides or {}).items():
        base = table.get(name)
        table[name] = ModelPrice(
            price.input_per_million,
            price.output_per_million,
            price.cached_input_per_million,
            price.context_window or (base.context_window if base else None),
            price.max_output_tokens or (base.max_output_tokens if base else None),
        )
    return MappingProxyType(table)


def lookup(table: Mapping[str, ModelPrice], model: str) -> ModelPrice | None:
    """The price of ``model``: exact name first, then without a snapshot suffix."""
    if model in table:
        return table[model]
    base = _SNAPSHOT.sub("", model)
    return table.get(base) if base != model else None


def model_cost(usage: Usage, price: ModelPrice | None) -> float | None:
    """Dollars for ``usage`` at ``price``; ``None`` when the price is unknown.

    A price with neither an input nor an output rate is unknown; a missing one of the two
    counts as free (Qwen Code's rule).  Cached input tokens (at most ``input_tokens``) use
    the cached rate when there is one.
    """
    if price is None or (price.input_per_million is None and price.output_per_million is None):
        return None
    rate_in = price.input_per_million or 0.0
    rate_cached = (
        price.cached_input_per_million if price.cached_input_per_million is not None else rate_in
    )
    rate_out = price.output_per_million or 0.0
    inputs = max(0, usage.input_tokens)
    cached = min(max(0, usage.cached_tokens), inputs)
    outputs = max(0, usage.output_tokens)
    return ((inputs - cached) * rate_in + cached * rate_cached + outputs * rate_out) / 1_000_000


def model_usage_entry(usage: Usage, price: ModelPrice | None) -> dict[str, Any]:
    """One ``modelUsage`` value (Claude Code's shape; ``costUSD`` ``None`` when unpriced)."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadInputTokens": usage.cached_tokens,
        "cacheCreationInputTokens": 0,
        "webSearchRequests": 0,
        "costUSD": model_cost(usage, price),
        "contextWindow": price.context_window if price else None,
        "maxOutputTokens": price.max_output_tokens if price else None,
    }


def run_cost(
    usage_by_model: Mapping[str, Usage], table: Mapping[str, ModelPrice]
) -> tuple[float | None, dict[str, dict[str, Any]]]:
    """``(total_cost_usd, modelUsage)`` for a run's usage per model.

    The total is the sum of the models' costs, ``None`` as soon as one model that was used is
    unpriced (an unknown part makes the whole unknown); ``0.0`` only when nothing was used.
    """
    entries: dict[str, dict[str, Any]] = {}
    total: float | None = 0.0
    for model, usage in usage_by_model.items():
        entry = model_usage_entry(usage, lookup(table, model))
        entries[model] = entry
        cost = entry["costUSD"]
        total = None if cost is None or total is None else total + cost
    return total, entries
