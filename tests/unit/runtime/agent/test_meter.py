"""The meter: usage per model, cost (``None`` when unpriced, never 0), totals that go on."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.agent.meter import Meter, recorded_usage
from headwire.runtime.config.pricing import ModelPrice, price_table
from headwire.runtime.models.base import Usage

PRICES = price_table({"a": ModelPrice(1.0, 2.0), "b": ModelPrice(10.0, 20.0, 1.0, 1000, 100)})


def test_cost_per_model_and_unknown_models() -> None:
    meter = Meter(PRICES)
    meter.add("a", Usage(1_000_000, 1_000_000))
    meter.add("b", Usage(100, 10, cached_tokens=50))
    snapshot = meter.snapshot()
    by_model = dict(snapshot.by_model)
    assert by_model["a"].cost_usd == 3.0
    assert by_model["b"].cost_usd == (50 * 10 + 50 * 1 + 10 * 20) / 1e6
    assert by_model["b"].context_window == 1000 and by_model["a"].context_window is None
    assert snapshot.total_usd == 3.0 + by_model["b"].cost_usd
    meter.add("mystery", Usage(1, 1))
    assert meter.snapshot().total_usd is None and meter.spent_usd() is None
    assert dict(meter.snapshot().by_model)["mystery"].cost_usd is None
    assert meter.unpriced() == ["mystery"]
    assert Meter(PRICES).snapshot().total_usd == 0.0  # nothing used costs nothing


def test_a_resumed_session_counts_on_but_its_budget_starts_anew() -> None:
    meter = Meter(PRICES, {"a": Usage(1_000_000, 0)})
    meter.add("a", Usage(0, 1_000_000))
    assert meter.snapshot().total_usd == 3.0
    assert meter.spent_usd() == 2.0


def test_recorded_usage_is_the_last_main_result(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = [
        {"type": "result", "model_usage": {"a": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "result", "parent_tool_use_id": "call", "model_usage": {"x": {}}},
        {"type": "user"},
        {"type": "result", "model_usage": {"a": {"input_tokens": 7, "total_tokens": 9}}},
        {"type": "result"},  # from before results carried it: the last saved one stands
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + '{"torn')
    assert recorded_usage(path) == {"a": Usage(7, 0, 0, 9)}


@given(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 10**6), st.integers(0, 10**5))))
def test_the_total_is_the_sum_of_the_models(calls: list[tuple[str, int, int]]) -> None:
    meter = Meter(PRICES)
    for model, inputs, outputs in calls:
        meter.add(model, Usage(inputs, outputs))
    snapshot = meter.snapshot()
    parts = [c.cost_usd for _, c in snapshot.by_model]
    assert snapshot.total_usd is not None
    assert abs(snapshot.total_usd - sum(p for p in parts if p is not None)) < 1e-9
    assert snapshot.total_usd == meter.spent_usd()
