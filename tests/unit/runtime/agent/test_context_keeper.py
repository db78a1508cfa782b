"""One agent's context keeping (:mod:`headwire.runtime.agent.context_keeper`), with an in-process
model that answers the summary call (or fails it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from headwire import events as ev
from headwire.runtime import compaction as cp
from headwire.runtime.agent.context_keeper import ContextKeeper, ContextSettings
from headwire.runtime.models.base import Finished, ModelError, ModelEvent, ModelRequest, TextDelta


class SummaryModel:
    """Answers every call with a fixed summary, or fails it with ``error``."""

    name = "fake-model"

    def __init__(self, error: str | None = None, window: int | None = None) -> None:
        self.error = error
        self.window = window
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if self.error is not None:
            raise ModelError(self.error, status=500)
        yield TextDelta("the summary")
        yield Finished(ev.Usage(input_tokens=100, output_tokens=10))

    async def server_window(self) -> int | None:
        return self.window


def _conversation(steps: int, size: int = 4_000) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "the task"}]
    for n in range(steps):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "sh", "arguments": "{}"}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"c{n}", "content": "z" * size})
    return out


def _keeper(model: SummaryModel, window: int | None = 8_000) -> tuple[ContextKeeper, list[Any]]:
    published: list[Any] = []
    counted: list[ev.Usage] = []
    keeper = ContextKeeper(
        ContextSettings(window=window), model, published.append, None, counted.append
    )
    return keeper, published


def test_a_proactive_compaction_publishes_start_and_end_and_shrinks_the_request() -> None:
    model = SummaryModel()
    keeper, published = _keeper(model)
    conversation = _conversation(8)
    fixed = [{"role": "system", "content": "sys"}]
    before = keeper.estimate(fixed, conversation)
    assert before > keeper.budget().trigger
    asyncio.run(keeper.before_call(fixed, conversation))
    started, finished = published
    assert isinstance(started, ev.CompactionStarted) and started.pre_tokens == before
    assert isinstance(finished, ev.CompactionFinished) and finished.post_tokens < before
    assert finished.messages == tuple(conversation)
    assert conversation[0] == {"role": "user", "content": "the task"}
    assert cp.is_summary(conversation[1]) and "the summary" in conversation[1]["content"]
    assert conversation[-1]["role"] == "tool"  # the pending result stays
    assert model.requests[0].tools == []  # the summary call offers no tools


def test_a_failed_summary_call_still_compacts() -> None:
    """Invariant (module docstring): a compaction never fails because of the summary call."""
    keeper, _ = _keeper(SummaryModel(error="boom"))
    conversation = _conversation(8)
    assert asyncio.run(keeper.compact("auto", [], conversation))
    assert "(The summary call failed: boom)" in conversation[1]["content"]


def test_the_estimate_follows_the_last_real_usage() -> None:
    keeper, _ = _keeper(SummaryModel())
    conversation = _conversation(1, size=100)
    keeper.observe(ev.Usage(input_tokens=1_000, output_tokens=50), 500, conversation)
    added = {"role": "tool", "tool_call_id": "x", "content": "q" * 400}
    conversation.append(added)
    assert keeper.estimate([], conversation) == 1_050 + 2 * cp.estimate_tokens(added)
    # with no usable last call (after a compaction) the whole request is estimated, calibrated
    longer = _conversation(3, size=100)
    assert asyncio.run(keeper.compact("manual", [], longer))
    assert keeper.estimate([], longer) == int(keeper.raw_estimate([], longer) * 2)


def test_the_window_comes_from_the_server_then_from_a_refusal() -> None:
    model = SummaryModel(window=20_000)
    keeper, _ = _keeper(model, window=None)
    asyncio.run(keeper.before_call([], _conversation(2, size=30_000)))
    assert (keeper.window, keeper.source) == (20_000, "server")
    refusal = ModelError("This model's maximum context length is 16000 tokens.", status=400)
    assert keeper.overflowed(refusal)
    assert (keeper.window, keeper.source) == (16_000, "error")
    assert not keeper.overflowed(ModelError("rate limited", status=429))


def test_old_tool_results_are_cleared_after_the_idle_time() -> None:
    now = [0.0]
    settings = ContextSettings(window=1_000_000, clear_keep=2, idle_minutes=60)
    published: list[Any] = []
    counted: list[ev.Usage] = []
    keeper = ContextKeeper(
        settings, SummaryModel(), published.append, None, counted.append, clock=lambda: now[0]
    )
    conversation = _conversation(5, size=100)
    keeper.observe(ev.Usage(input_tokens=10), 10, conversation)
    now[0] = 59 * 60.0
    asyncio.run(keeper.before_call([], conversation))
    assert all(m["content"] != cp.CLEARED_TOOL_RESULT for m in conversation)
    now[0] = 60 * 60.0
    asyncio.run(keeper.before_call([], conversation))
    results = [m["content"] for m in conversation if m["role"] == "tool"]
    assert results == [cp.CLEARED_TOOL_RESULT] * 3 + ["z" * 100] * 2


def test_a_hanging_model_listing_does_not_hold_the_call(monkeypatch: Any) -> None:
    import headwire.runtime.agent.context_keeper as keeper_module

    class Hanging(SummaryModel):
        async def server_window(self) -> int | None:
            await asyncio.sleep(3600)
            return 1

    monkeypatch.setattr(keeper_module, "PROBE_TIMEOUT_S", 0.05)
    keeper, _ = _keeper(Hanging(), window=None)
    asyncio.run(keeper.before_call([], _conversation(2, size=30_000)))
    assert keeper.window is None and keeper.budget().window == cp.DEFAULT_WINDOW


def test_the_window_follows_a_change_of_model() -> None:
    """``set_model`` / ``/model`` rename the model: the table's window for the new name
    applies, and what a server or refusal taught stays with the model it was about."""
    model = SummaryModel()
    table = {"big": 1_000_000, "small": 32_000}
    keeper = ContextKeeper(
        ContextSettings(), model, [].append, None, [].append, table_window=table.get
    )
    assert keeper.window is None
    keeper.overflowed(ModelError("maximum context length is 16000 tokens", status=400))
    assert (keeper.window, keeper.source) == (16_000, "error")
    model.name = "small"
    assert (keeper.window, keeper.source) == (32_000, "table")
    model.name = "big"
    assert keeper.budget().window == 1_000_000
    model.name = "fake-model"
    assert keeper.window == 16_000


def test_pre_and_post_compact_hooks() -> None:
    """A ``PreCompact`` block skips the compaction (nothing published, nothing changed);
    ``PostCompact`` gets the trigger and the summary."""
    seen: list[tuple[str, str]] = []

    async def block(trigger: Any) -> bool:
        seen.append(("pre", trigger))
        return False

    async def allow(trigger: Any) -> bool:
        seen.append(("pre", trigger))
        return True

    async def after(trigger: Any, summary: str) -> None:
        seen.append(("post", summary))

    published: list[Any] = []
    conversation = _conversation(4)
    before = list(conversation)
    blocked = ContextKeeper(
        ContextSettings(window=8_000),
        SummaryModel(),
        published.append,
        None,
        [].append,
        before=block,
        after=after,
    )
    assert not asyncio.run(blocked.compact("manual", [], conversation))
    assert conversation == before and published == [] and seen == [("pre", "manual")]
    allowed = ContextKeeper(
        ContextSettings(window=8_000),
        SummaryModel(),
        published.append,
        None,
        [].append,
        before=allow,
        after=after,
    )
    assert asyncio.run(allowed.compact("auto", [], conversation))
    assert seen[1:] == [("pre", "auto"), ("post", "the summary")]
