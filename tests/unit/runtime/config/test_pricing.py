"""Pricing: the documented table, settings overrides, and ``None`` (never 0) when unknown."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.config.pricing import (
    ModelPrice,
    builtin_prices,
    lookup,
    model_cost,
    price_table,
    run_cost,
)
from headwire.runtime.models.base import Usage

PRICE = ModelPrice(2.0, 8.0, 0.5)


def test_table_is_documented_and_priced() -> None:
    table = builtin_prices()
    assert "gpt-4o" in table and "claude-sonnet-4" in table
    for name, price in table.items():
        assert price.input_per_million is not None and price.input_per_million > 0, name
        assert price.output_per_million is not None and price.output_per_million > 0, name


def test_lookup_exact_then_without_snapshot_suffix() -> None:
    table = {"gpt-4.1": PRICE}
    assert lookup(table, "gpt-4.1") is PRICE
    assert lookup(table, "gpt-4.1-2025-04-14") is PRICE
    assert lookup(table, "gpt-4.1-latest") is PRICE
    assert lookup(table, "gpt-4.1-mini") is None
    assert lookup(builtin_prices(), "claude-sonnet-4-20250514") is not None


def test_cost_with_cached_tokens() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000, cached_tokens=400_000)
    assert model_cost(usage, PRICE) == (600_000 * 2 + 400_000 * 0.5 + 500_000 * 8) / 1e6
    no_cache_rate = ModelPrice(2.0, 8.0)
    assert model_cost(usage, no_cache_rate) == (1_000_000 * 2 + 500_000 * 8) / 1e6


def test_unknown_price_is_none_never_zero() -> None:
    usage = Usage(10, 5)
    assert model_cost(usage, None) is None
    assert model_cost(usage, ModelPrice()) is None
    total, entries = run_cost({"fake-model": usage}, price_table())
    assert total is None and entries["fake-model"]["costUSD"] is None
    total, entries = run_cost({"gpt-4o": usage, "mystery": usage}, price_table())
    assert total is None and entries["gpt-4o"]["costUSD"] is not None
    assert run_cost({}, price_table()) == (0.0, {})


def test_settings_override_and_add_models() -> None:
    table = price_table({"fake-model": ModelPrice(1.0, 2.0), "gpt-4o": ModelPrice(0.0, 0.0)})
    total, entries = run_cost({"fake-model": Usage(1_000_000, 1_000_000, 0, 2_000_000)}, table)
    assert total == 3.0
    assert entries["fake-model"] == {
        "inputTokens": 1_000_000,
        "outputTokens": 1_000_000,
        "cacheReadInputTokens": 0,
        "cacheCreationInputTokens": 0,
        "webSearchRequests": 0,
        "costUSD": 3.0,
        "contextWindow": None,
        "maxOutputTokens": None,
    }
    gpt = run_cost({"gpt-4o": Usage(100, 100)}, table)[1]["gpt-4o"]
    assert gpt["costUSD"] == 0.0 and gpt["contextWindow"] == 128000


counts = st.integers(min_value=0, max_value=10**9)
rates = st.none() | st.floats(min_value=0, max_value=1000, allow_nan=False)


@given(counts, counts, counts, counts, counts, counts, rates, rates, rates)
def test_cost_is_nonnegative_additive_and_none_only_when_unpriced(
    i1: int,
    o1: int,
    c1: int,
    i2: int,
    o2: int,
    c2: int,
    ri: float | None,
    ro: float | None,
    rc: float | None,
) -> None:
    """Invariant: a cost is None exactly when neither rate is known, never negative, and the
    cost of two calls' usage is the sum of their costs (cached tokens within the input)."""
    price = ModelPrice(ri, ro, rc)
    a, b = Usage(i1, o1, min(c1, i1)), Usage(i2, o2, min(c2, i2))
    ca, cb, cab = model_cost(a, price), model_cost(b, price), model_cost(a + b, price)
    if ri is None and ro is None:
        assert ca is None and cb is None and cab is None
        return
    assert ca is not None and cb is not None and cab is not None
    assert ca >= 0 and cb >= 0
    assert math.isclose(ca + cb, cab, rel_tol=1e-9, abs_tol=1e-9)
