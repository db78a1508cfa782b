"""``--fallback-model``: the wrapper switches on overload errors only, before any output."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from headwire.runtime.models.base import (
    Finished,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
)
from headwire.runtime.models.fallback import FallbackModel, is_overloaded


class Stub:
    """A real in-process model: fails with ``error`` (after ``emit`` deltas) or answers."""

    def __init__(self, name: str, error: ModelError | None = None, emit: int = 0) -> None:
        self.name = name
        self.error = error
        self.emit = emit
        self.seen: list[str] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.seen.append(request.model)
        for i in range(self.emit):
            yield TextDelta(f"{self.name}-{i}")
        if self.error is not None:
            raise self.error
        yield TextDelta(f"answer from {self.name}")
        yield Finished()


def run(model: FallbackModel) -> list[ModelEvent]:
    async def go() -> list[ModelEvent]:
        return [e async for e in model.stream(ModelRequest("main", [], []))]

    return asyncio.run(go())


def overloaded(status: int = 529) -> ModelError:
    return ModelError(f"Model server returned HTTP {status}: overloaded", status=status)


def test_overload_classification() -> None:
    for status in (429, 503, 529):
        assert is_overloaded(ModelError("x", status=status))
    assert is_overloaded(ModelError('HTTP 500: {"type": "overloaded_error"}', status=500))
    assert not is_overloaded(ModelError("bad request", status=400))
    assert not is_overloaded(ModelError("Connection closed mid-stream"))


def test_switches_in_order_and_names_the_model_in_the_request() -> None:
    notes: list[str] = []
    a, b, c = Stub("main", overloaded()), Stub("b", overloaded(503)), Stub("c")
    model = FallbackModel(a, [b, c], notes.append)
    events = run(model)
    assert events[0] == TextDelta("answer from c") and model.answered_by == "c"
    assert (a.seen, b.seen, c.seen) == (["main"], ["b"], ["c"])
    assert (
        len(notes) == 2
        and "main is overloaded" in notes[0]
        and "fallback model b (1/2)" in notes[0]
    )
    assert model.name == "main"
    run(model)
    assert a.seen == ["main", "main"]  # every call starts with the main model again


def test_other_errors_and_late_failures_are_raised() -> None:
    bad = ModelError("HTTP 400", status=400)
    with pytest.raises(ModelError, match="HTTP 400"):
        run(FallbackModel(Stub("main", bad), [Stub("b")]))
    late = Stub("main", overloaded(), emit=1)
    spare = Stub("b")
    with pytest.raises(ModelError):
        run(FallbackModel(late, [spare]))
    assert spare.seen == []
    with pytest.raises(ModelError, match="529"):
        run(FallbackModel(Stub("main", overloaded()), [Stub("b", overloaded())]))


def test_fallback_with_the_main_models_name_is_dropped() -> None:
    model = FallbackModel(Stub("main"), [Stub("main"), Stub("b")])
    assert [m.name for m in model.fallbacks] == ["b"]
