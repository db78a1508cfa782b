"""One agent's context management: its window, its size estimate, and compacting its history.

The window comes from, in order: ``model.generationConfig.contextWindowSize``, the model's entry
in the price/model table, the server's model listing (asked once, the first time the estimate
passes :data:`PROBE_TOKENS`; ``server_window`` on the provider) and the window a "too long"
error states; else :data:`~headwire.runtime.compaction.DEFAULT_WINDOW`.

Before each model call (:meth:`ContextKeeper.before_call`) the next request is estimated from
the last call's real usage (prompt plus answer) plus the estimate of what was added since,
scaled by how the last real count compared with its estimate; with no usable last call
(the first call, after a compaction) the whole request is estimated: system prompt (context
files included), tool schemas and messages.  Old tool results are first cleared down
(``context.clearContextOnIdle``: past a total size, or after an idle time, when the provider's
prompt cache has expired anyway); a request still estimated over the trigger is compacted
(:meth:`ContextKeeper.compact`): a summary call to the same model (no tools offered), then the
new history of :func:`~headwire.runtime.compaction.compacted`.  A summary call that fails
leaves a summary written from the transcript itself, so a compaction never fails for it.

Events: :class:`~headwire.events.CompactionStarted`, then
:class:`~headwire.events.CompactionFinished` (with the new history, for the recording).  The
summary call's usage is counted in the turn and the meter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from headwire import events as ev
from headwire.records import dataclass
from headwire.runtime import compaction as cp
from headwire.runtime.models.base import Finished, Model, ModelError, ModelRequest, TextDelta

PROBE_TOKENS = 6_000
"""The estimate past which the server is asked for its window (once)."""
PROBE_TIMEOUT_S = 10.0
"""How long the model listing may take before headwire goes on without it."""


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """The settings of context management (``AgentConfig.context``)."""

    window: int | None = None
    """``model.generationConfig.contextWindowSize``."""
    threshold: float = cp.DEFAULT_THRESHOLD
    """``context.autoCompactThreshold``."""
    clear_chars: float = 500_000
    """``context.clearContextOnIdle.toolResultsTotalCharsThreshold`` (-1: never)."""
    clear_keep: int = 5
    """``context.clearContextOnIdle.toolResultsNumToKeep``."""
    idle_minutes: float = 60
    """``context.clearContextOnIdle.toolResultsThresholdMinutes``: after this long without a
    model call, old tool results are cleared (all but ``clear_keep``); -1: never."""


class ContextKeeper:
    """The context state of one agent (see the module docstring)."""

    def __init__(
        self,
        settings: ContextSettings,
        model: Model,
        publish: ev.EventSink,
        parent: str | None,
        count_usage: Callable[[ev.Usage], None],
        table_window: Callable[[str], int | None] = lambda name: None,
        clock: Callable[[], float] = time.monotonic,
        gate: Callable[[], None] = lambda: None,
        before: Callable[[ev.CompactionTrigger], Awaitable[bool]] | None = None,
        after: Callable[[ev.CompactionTrigger, str], Awaitable[None]] | None = None,
    ) -> None:
        self.settings = settings
        self.model = model
        self.publish = publish
        self.parent = parent
        self.count_usage = count_usage
        self._table = table_window
        self._learned: dict[str, tuple[int, str]] = {}
        """Per model name: the window its server or a refusal stated, and which."""
        self._probed: set[str] = set()
        """The model names whose server was asked."""
        self._clock = clock
        self._gate = gate
        self._before = before
        """``PreCompact`` hooks: ``False`` skips the compaction."""
        self._after = after
        """``PostCompact`` hooks, with the summary."""
        """Passed before the summary call (the run's limits: a stopped run, the budget)."""
        self._last_call: float | None = None
        """When the last model call finished (for the idle clearing)."""
        self._base: tuple[int, int] | None = None
        """``(real tokens of the last call, conversation length after it)``."""
        self._ratio = 1.0
        self.compactions = 0

    @property
    def window(self) -> int | None:
        """The current model's window as known now (``None``: unknown, the default applies);
        the model may change during a session (``set_model``, ``/model``)."""
        return self._window_and_source()[0]

    @property
    def source(self) -> str | None:
        """Where :attr:`window` comes from: settings, table, server or error."""
        return self._window_and_source()[1]

    def _window_and_source(self) -> tuple[int | None, str | None]:
        # a model rerouted by its name (runtime.models.routed) knows the window its current
        # route's settings give; any other model has the one of the start
        configured = getattr(self.model, "configured_window", self.settings.window)
        if configured:
            return configured, "settings"
        name = self.model.name
        table = self._table(name)
        if table:
            return table, "table"
        learned = self._learned.get(name)
        return (learned[0], learned[1]) if learned else (None, None)

    def budget(self) -> cp.Budget:
        """The limits in force now."""
        return cp.Budget(self.window or cp.DEFAULT_WINDOW, self.settings.threshold)

    @staticmethod
    def raw_estimate(fixed: list[dict[str, Any]], conversation: list[dict[str, Any]]) -> int:
        """The byte-based estimate of a whole request (no calibration)."""
        return cp.estimate_tokens(fixed) + sum(cp.estimate_tokens(m) for m in conversation)

    def estimate(self, fixed: list[dict[str, Any]], conversation: list[dict[str, Any]]) -> int:
        """The next request's tokens (``fixed``: the system message and tool schemas): the last
        call's real count plus what was added since, else the whole request; byte estimates
        scaled by the last real count over its byte estimate."""
        if self._base is not None and self._base[1] <= len(conversation):
            tokens, length = self._base
            added = sum(cp.estimate_tokens(m) for m in conversation[length:])
            return tokens + int(added * self._ratio)
        return int(self.raw_estimate(fixed, conversation) * self._ratio)

    def observe(self, usage: ev.Usage, estimated: int, conversation: list[dict[str, Any]]) -> None:
        """After a call: its real usage (``estimated``: the request's :meth:`raw_estimate`)."""
        self._last_call = self._clock()
        if usage.input_tokens <= 0:
            self._base = None
            return
        if estimated > 0:
            self._ratio = min(4.0, max(0.25, usage.input_tokens / estimated))
        self._base = (usage.input_tokens + usage.output_tokens, len(conversation))

    async def _probe(self) -> None:
        name = self.model.name
        self._probed.add(name)
        ask = getattr(self.model, "server_window", None)
        if ask is None:
            return
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S):
                window = await ask()
        except Exception:  # a listing that fails or hangs tells nothing; the 400 still would
            return
        if isinstance(window, int) and window > 0 and self.window is None:
            self._learned[name] = (window, "server")

    def overflowed(self, error: ModelError) -> bool:
        """Whether ``error`` says the request was too long (then the window it states, if it
        is smaller, is the window from now on)."""
        if not cp.is_context_overflow(error.message):
            return False
        stated = cp.window_in_error(error.message)
        if stated is not None and (self.window is None or stated < self.window):
            self._learned[self.model.name] = (stated, "error")
        return True

    async def before_call(
        self, fixed: list[dict[str, Any]], conversation: list[dict[str, Any]]
    ) -> bool:
        """Clear old tool results, then compact when the next request would pass the trigger;
        whether a compaction (a summary call) happened."""
        settings = self.settings
        idle = (
            settings.idle_minutes >= 0
            and self._last_call is not None
            and self._clock() - self._last_call >= settings.idle_minutes * 60
        )
        threshold = 0 if idle else settings.clear_chars
        if cp.clear_old_tool_results(conversation, threshold, settings.clear_keep):
            self._base = None
        estimate = self.estimate(fixed, conversation)
        if self.window is None and self.model.name not in self._probed and estimate > PROBE_TOKENS:
            await self._probe()
        if estimate > self.budget().trigger:
            return await self.compact("auto", fixed, conversation, estimate)
        return False

    async def compact(
        self,
        trigger: ev.CompactionTrigger,
        fixed: list[dict[str, Any]],
        conversation: list[dict[str, Any]],
        pre_tokens: int | None = None,
    ) -> bool:
        """Compact ``conversation`` in place; ``False`` when there is nothing to summarize.
        A ``manual`` compaction summarizes everything but the user's requests and the last
        step; an ``auto`` one keeps the recent steps that fit in the target."""
        pre = self.estimate(fixed, conversation) if pre_tokens is None else pre_tokens
        budget = self.budget()
        room = budget.target - cp.estimate_tokens(fixed)
        # manual: asked for, so everything but the requests and the last step is summarized
        room = 0 if trigger == "manual" else max(room, budget.target // 4)
        plan = cp.plan_compaction(conversation, room)
        if plan is None:
            return False
        self._gate()  # the limit that forbids the summary call: no compaction starts
        if self._before is not None and not await self._before(trigger):
            return False
        started = time.monotonic()
        self.publish(ev.CompactionStarted(trigger=trigger, pre_tokens=pre, parent=self.parent))
        max_chars = max(4_000, (budget.window - cp.SUMMARY_RESERVE * 2) * cp.BYTES_PER_TOKEN // 2)
        transcript = cp.summary_transcript(conversation, plan, max_chars)
        summary, usage = await self._summarize(transcript)
        conversation[:] = cp.compacted(conversation, plan, summary)
        self._base = None
        self.compactions += 1
        post = self.estimate(fixed, conversation)
        self.publish(
            ev.CompactionFinished(
                trigger=trigger,
                pre_tokens=pre,
                post_tokens=post,
                duration_ms=int((time.monotonic() - started) * 1000),
                usage=usage,
                messages=tuple(conversation),
                parent=self.parent,
            )
        )
        if self._after is not None:
            await self._after(trigger, summary)
        return True

    async def _summarize(self, transcript: str) -> tuple[str, ev.Usage]:
        request = ModelRequest(
            model=self.model.name,
            messages=[
                {"role": "system", "content": cp.SUMMARY_SYSTEM},
                {"role": "user", "content": f"{transcript}\n\n---\n\n{cp.SUMMARY_REQUEST}"},
            ],
            tools=[],
        )
        parts: list[str] = []
        usage = ev.Usage()
        try:
            async for event in self.model.stream(request):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, Finished):
                    usage = event.usage or ev.Usage()
        except ModelError as exc:
            self.count_usage(usage)  # a request made, whatever it cost
            return _excerpt(f"(The summary call failed: {exc.message[:300]})", transcript), usage
        self.count_usage(usage)
        text = "".join(parts).strip()
        if not text:
            return _excerpt("(The summary call answered nothing.)", transcript), usage
        return text[: cp.SUMMARY_MAX_CHARS], usage


def _excerpt(note: str, transcript: str) -> str:
    """A summary made without the model: ``note``, then the end of the transcript (its most
    recent steps) within :data:`~headwire.runtime.compaction.SUMMARY_MAX_CHARS`."""
    head = f"{note} The most recent part of the transcript:\n"
    room = max(0, cp.SUMMARY_MAX_CHARS - len(head))
    return head + transcript[-room:] if room else head


__all__ = ["PROBE_TIMEOUT_S", "PROBE_TOKENS", "ContextKeeper", "ContextSettings"]
