"""A model whose name chooses its route: ``set_model`` and ``/model`` across the user's catalog.

With a ``modelProviders`` catalog, each of its models has its own server, key and request
settings (:mod:`.catalog`).  Renaming a run's model (an SDK's ``set_model``, the REPL's
``/model``) to one with another route than the current one must change all three, as Qwen
Code's model switch does; renaming it to a name of the same route (a model the catalog does
not list, on a run whose model it does not list either) only changes the name sent, as before.

:class:`RoutedModel` wraps the run's model and does that on assignment to ``name``: ``route``
names a model's route (its catalog entry, or ``None``), ``build`` builds the client for a name.
A name that cannot be built (an entry whose base URL is not HTTP) raises the builder's error
and changes nothing.  Clients left behind are closed with the model (:meth:`RoutedModel.aclose`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from headwire.runtime.models.base import Model, ModelEvent, ModelRequest

__all__ = ["RoutedModel"]


class RoutedModel:
    """A :class:`~headwire.runtime.models.base.Model` that rebuilds its client when renamed
    to a model with another route (see the module docstring)."""

    def __init__(
        self,
        inner: Model,
        route: Callable[[str], object],
        build: Callable[[str], Model],
        window: Callable[[str], int | None] = lambda _: None,
        choices: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.choices = choices
        """``(id, display name)`` of the catalog's models this run can be renamed to."""
        self._inner = inner
        self._route = route
        self._build = build
        self._window = window
        self._key = route(inner.name)
        self._retired: list[Model] = []

    @property
    def name(self) -> str:
        """The model name sent with each request."""
        return self._inner.name

    @name.setter
    def name(self, value: str) -> None:
        key = self._route(value)
        if key == self._key:
            self._inner.name = value
            return
        fresh = self._build(value)  # raises before anything changes
        self._retired.append(self._inner)
        self._inner, self._key = fresh, key

    @property
    def inner(self) -> Model:
        """The client of the current route."""
        return self._inner

    @property
    def answered_by(self) -> str:
        """The model whose answer the last call returned (a fallback's, after an overload)."""
        return str(getattr(self._inner, "answered_by", self._inner.name))

    @property
    def configured_window(self) -> int | None:
        """The current model's ``contextWindowSize`` from the settings (its catalog entry's,
        else ``model.generationConfig``'s), or ``None``."""
        return self._window(self._inner.name)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Run one call on the current route's client."""
        return self._inner.stream(request)

    async def server_window(self) -> int | None:
        """The current model's window as its server states it (``None``: unknown)."""
        ask: Any = getattr(self._inner, "server_window", None)
        return None if ask is None else await ask()

    async def aclose(self) -> None:
        """Close the current client and every one left behind."""
        for model in (*self._retired, self._inner):
            aclose: Any = getattr(model, "aclose", None)
            if aclose is not None:
                await aclose()
        self._retired.clear()
