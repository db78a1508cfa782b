"""``--fallback-model``: other models to try when the model is overloaded.

:class:`FallbackModel` wraps any :class:`~headwire.runtime.models.base.Model` (the provider
does its own retries first).  When a call fails before yielding anything, with an overload
error (:func:`is_overloaded`: HTTP 429, 503 or 529, or a message saying "overloaded"), the
same request goes to the next fallback, with its ``model`` field set to that model's name,
and so on in order; a stderr note says each switch.  A failure after output began, or of
another kind, is raised as it is.  Every call starts with the main model again (Qwen Code's
rule), so a passing overload costs one call, not the session.  :attr:`FallbackModel.answered_by`
names the model whose answer the last call returned, for per-model accounting.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from headwire.runtime.models.base import Model, ModelError, ModelEvent, ModelRequest

OVERLOAD_STATUSES = frozenset({429, 503, 529})


def is_overloaded(error: ModelError) -> bool:
    """Whether ``error`` says the model has no capacity now (worth another model)."""
    if error.status in OVERLOAD_STATUSES:
        return True
    return error.status is not None and "overloaded" in error.message.lower()


class FallbackModel:
    """A model that falls back to others on overload errors (see the module docstring)."""

    def __init__(
        self,
        primary: Model,
        fallbacks: Sequence[Model],
        note: Callable[[str], None] | None = None,
    ) -> None:
        self.primary = primary
        self.fallbacks = [m for m in fallbacks if m.name != primary.name]
        self.name = primary.name
        self.answered_by = primary.name
        self._note = note

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Run the call on the main model, then on each fallback while they are overloaded."""
        chain = [self.primary, *self.fallbacks]
        for index, model in enumerate(chain):
            call = request
            if index:
                call = dataclasses.replace(request, model=model.name)
            yielded = False
            try:
                async for event in model.stream(call):
                    if not yielded:
                        yielded = True
                        self.answered_by = model.name
                    yield event
                return
            except ModelError as exc:
                if yielded or index == len(chain) - 1 or not is_overloaded(exc):
                    raise
                following = chain[index + 1]
                if self._note is not None:
                    self._note(
                        f"headwire: model {model.name} is overloaded ({exc.message}); "
                        f"trying fallback model {following.name} ({index + 1}/{len(chain) - 1})"
                    )

    async def server_window(self) -> int | None:
        """The main model's window as its server states it (``None``: unknown)."""
        ask: Any = getattr(self.primary, "server_window", None)
        return None if ask is None else await ask()

    async def aclose(self) -> None:
        """Close every wrapped model that can be closed."""
        for model in (self.primary, *self.fallbacks):
            aclose: Any = getattr(model, "aclose", None)
            if aclose is not None:
                await aclose()
