"""``RoutedModel``: renamed to a model of another route, it builds that route's client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from headwire.errors import UsageError
from headwire.runtime.models.routed import RoutedModel

ROUTES = {"a1": "A", "a2": "A", "b": "B", "bad": "X"}


class Client:
    """A stand-in client: a name, a route, whether it was closed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.route = ROUTES.get(name)
        self.closed = False

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        yield (self.route, self.name)

    async def aclose(self) -> None:
        self.closed = True


def _build(name: str) -> Any:
    if ROUTES.get(name) == "X":
        raise UsageError(f"{name} cannot run")
    return Client(name)


def _model() -> tuple[RoutedModel, Client]:
    first = Client("a1")
    routed = RoutedModel(
        first, ROUTES.get, _build, lambda n: {"A": 1000, "B": 2000}.get(ROUTES.get(n, ""))
    )
    return routed, first


async def _one(model: RoutedModel) -> Any:
    async for event in model.stream(None):  # type: ignore[arg-type]
        return event


def test_a_name_of_the_same_route_is_only_a_new_name() -> None:
    routed, first = _model()
    routed.name = "a2"
    assert routed.inner is first and first.name == "a2"
    routed.name = "unlisted"  # no route, from route A: a new client
    assert routed.inner is not first and routed.name == "unlisted"


def test_a_name_of_another_route_builds_its_client_and_closes_the_old_at_the_end() -> None:
    routed, first = _model()
    assert routed.configured_window == 1000
    routed.name = "b"
    assert isinstance(routed.inner, Client) and routed.inner.route == "B"
    assert asyncio.run(_one(routed)) == ("B", "b")
    assert routed.configured_window == 2000
    second = routed.inner
    asyncio.run(routed.aclose())
    assert first.closed and isinstance(second, Client) and second.closed


def test_a_name_that_cannot_run_changes_nothing() -> None:
    routed, first = _model()
    with pytest.raises(UsageError, match="bad cannot run"):
        routed.name = "bad"
    assert routed.inner is first and routed.name == "a1"
    assert asyncio.run(_one(routed)) == ("A", "a1")
