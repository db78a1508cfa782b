"""The limits of a run, counted in one place, and the state of a running turn.

One :class:`RunLimits` per run, shared by reference by the main agent and every subagent,
nested ones too (it sits on :class:`~headwire.runtime.agent.loop.AgentConfig`, which a subagent's
config copies).  It is the one gate of the session's work:

* every model call passes :meth:`RunLimits.before_model_call` first (the turn limit
  ``--max-session-turns``/``--max-turns``, then the budget ``--max-budget-usd``, so the call
  that crosses the budget is the last);
* every tool call the model asks for passes :meth:`RunLimits.before_tool_call` first
  (``--max-tool-calls``): a call that is refused, fails its argument check, is denied or names
  no tool counts as Qwen Code counts it, and so does the ``agent`` call and each call its
  subagent makes;
* ``--max-duration`` is a deadline around the turn (:meth:`RunLimits.deadline`), so it covers
  the subagents that run inside the turn.

The counters belong to the run: a one-shot run, or the whole process of a persistent session
(a resumed run starts at zero).  Once a limit is reached, every later gate of the same turn
raises the same error, so a subagent that stopped at a limit stops its parent at its next step
too; :meth:`RunLimits.start_turn` clears that for the next turn of a session, whose own calls
still count against the run's totals.  Each limit ends the turn with its own error ``result``
(README "Exit codes and the result").
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, ClassVar

from headwire.errors import ExitCode, RunLimitError
from headwire.events import Limit
from headwire.records import dataclass, field
from headwire.runtime.agent.meter import Meter

MAX_TURNS_MESSAGE = (
    "Reached max session turns for this session. Increase the number of turns with "
    "--max-session-turns, or by specifying model.maxSessionTurns in settings.json "
    "(.headwire/settings.json or ~/.headwire/settings.json)."
)
MAX_TOOL_CALLS = 1_000_000
"""The largest ``--max-tool-calls`` / ``model.maxToolCalls`` (Qwen Code's ceiling: a larger
number is taken for a typo)."""
DEFAULT_SUBAGENT_DEPTH = 5
"""``model.maxSubagentDepth`` when nothing sets it (Qwen Code's default)."""
MAX_SUBAGENT_DEPTH = 100
"""The deepest nesting ``--max-subagent-depth`` / ``model.maxSubagentDepth`` allow."""

LimitName = Limit
"""Which run limit ended a turn (:data:`headwire.events.Limit`)."""


class LimitReached(RunLimitError):
    """A run limit ended the turn; ``subtype`` is its result's subtype, ``limit`` its name."""

    subtype: ClassVar[str] = "error_during_execution"
    limit: ClassVar[LimitName]


class TurnLimitExceeded(LimitReached):
    """``--max-session-turns`` / ``--max-turns`` was reached."""

    subtype = "error_max_turns"
    limit = "turns"


class BudgetExceeded(LimitReached):
    """``--max-budget-usd`` was reached (or can no longer be kept: a model has no price)."""

    subtype = "error_max_budget_usd"
    limit = "budget"


class ToolCallLimitExceeded(LimitReached):
    """``--max-tool-calls`` was reached: the call that would go over it does not run.  Claude
    Code has no such limit and its SDKs no subtype for it, so the subtype is
    ``error_during_execution`` (as for ``--max-duration``)."""

    limit = "tool_calls"


def exit_code(limit: LimitName) -> int:
    """A one-shot run's exit code when ``limit`` ended it: 55 for ``--max-tool-calls`` (Qwen
    Code's code for its run budgets), 53 for the others."""
    return ExitCode.RUN_BUDGET if limit == "tool_calls" else ExitCode.TURN_LIMIT


def budget_message(budget: float, spent: float) -> str:
    """The error result's message when the budget stops a turn."""
    return (
        f"Reached --max-budget-usd {budget:g}: this run spent ${spent:.6f}. Resume the session "
        "with a larger budget to go on."
    )


def duration_message(seconds: float) -> str:
    """The error result's message when ``--max-duration`` stops a turn."""
    return (
        f"Reached --max-duration {seconds:g} s: the turn was stopped. Resume the session to go on."
    )


def tool_calls_message(limit: int) -> str:
    """The error result's message when ``--max-tool-calls`` stops a turn."""
    return (
        f"Reached --max-tool-calls {limit}: this run may make {limit} tool "
        f"call{'' if limit == 1 else 's'}, and the model asked for one more, which did not run. "
        "Resume the session to go on."
    )


def check_max_tool_calls(value: int) -> int:
    """``--max-tool-calls`` / ``model.maxToolCalls``: -1 (no limit), or 0 (no tool call) to
    :data:`MAX_TOOL_CALLS`; anything else is a ValueError naming the range."""
    if value == -1 or 0 <= value <= MAX_TOOL_CALLS:
        return value
    raise ValueError(
        f"expected -1 (no limit) or a whole number from 0 to {MAX_TOOL_CALLS:,}, got {value}"
    )


def check_subagent_depth(value: int) -> int:
    """``--max-subagent-depth``: a whole number from 1 to :data:`MAX_SUBAGENT_DEPTH`, else a
    ValueError (Qwen Code refuses the flag out of range)."""
    if 1 <= value <= MAX_SUBAGENT_DEPTH:
        return value
    raise ValueError(f"expected a whole number from 1 to {MAX_SUBAGENT_DEPTH}, got {value}")


def clamp_subagent_depth(value: Any) -> int:
    """``model.maxSubagentDepth`` as Qwen Code reads it: a finite number is rounded down and
    clamped to 1..:data:`MAX_SUBAGENT_DEPTH`; anything else (missing, not a finite number) is
    :data:`DEFAULT_SUBAGENT_DEPTH`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return DEFAULT_SUBAGENT_DEPTH
    if not math.isfinite(value):
        return DEFAULT_SUBAGENT_DEPTH
    return min(MAX_SUBAGENT_DEPTH, max(1, math.floor(value)))


@dataclass(slots=True, eq=False)
class RunLimits:
    """The limits of one run and what it has used of them (see the module docstring).

    ``max_model_calls`` and ``max_tool_calls`` are ``-1`` for no limit; ``max_budget_usd`` and
    ``max_duration_s`` are ``None`` for none.  ``meter`` is the session's usage and cost (the
    budget reads what this process spent from it).
    """

    max_model_calls: int = -1
    max_tool_calls: int = -1
    max_budget_usd: float | None = None
    max_duration_s: float | None = None
    meter: Meter = field(default_factory=Meter)
    model_calls: int = 0
    """Model calls this run has started (the main agent's and every subagent's)."""
    tool_calls: int = 0
    """Tool calls this run has let through (the main agent's and every subagent's)."""
    reached: LimitReached | None = None
    """The limit that stopped the current turn, raised again by every later gate."""

    def start_turn(self) -> None:
        """A new turn of the session begins: an earlier turn's stop no longer applies (the
        counters go on)."""
        self.reached = None

    def before_model_call(self) -> None:
        """Let one model call start, or raise the limit that forbids it."""
        self._stopped()
        if 0 <= self.max_model_calls <= self.model_calls:
            self._stop(TurnLimitExceeded(MAX_TURNS_MESSAGE))
        self._check_budget()
        self.model_calls += 1

    def before_side_call(self) -> None:
        """Let a tool's side question to the model start (``web_fetch``'s prompt about a page:
        no turn of the conversation, so not counted as one), or raise the limit that forbids
        it: a stopped turn, or a spent budget."""
        self._stopped()
        self._check_budget()

    def _check_budget(self) -> None:
        budget = self.max_budget_usd
        if budget is not None:
            spent = self.meter.spent_usd()
            if spent is None:
                self._stop(
                    BudgetExceeded(
                        f"Cannot keep to --max-budget-usd {budget:g}: "
                        f"{', '.join(self.meter.unpriced())} has no price; add it to "
                        "modelPricing in settings."
                    )
                )
            elif spent >= budget:
                self._stop(BudgetExceeded(budget_message(budget, spent)))

    def before_tool_call(self) -> None:
        """Let one tool call go on to its checks and its run, or raise the limit that forbids
        it."""
        self._stopped()
        if 0 <= self.max_tool_calls <= self.tool_calls:
            self._stop(ToolCallLimitExceeded(tool_calls_message(self.max_tool_calls)))
        self.tool_calls += 1

    def deadline(self) -> asyncio.Timeout:
        """The wall-clock limit of a turn, to wrap around it (never expires without one)."""
        return asyncio.timeout(self.max_duration_s)

    def _stopped(self) -> None:
        if self.reached is not None:
            raise self.reached

    def _stop(self, reached: LimitReached) -> None:
        self.reached = reached
        raise reached


LOW_TIME_FRACTION = 0.2
"""Below this share of ``--max-duration`` left, the model is told once that time is short."""


def deadline_prompt(seconds: float) -> str:
    """The system prompt's note of ``--max-duration``: how long the model has."""
    return (
        f"# Time limit\n\nThis task has a wall-clock limit of {seconds:g} seconds, counted from "
        "the user's message. When it runs out the work is stopped where it is, unfinished. Plan "
        "for it: keep steps short, and leave time to finish and give your answer."
    )


def low_time_note(seconds: float, left: float) -> str | None:
    """The note appended to a tool result when less than :data:`LOW_TIME_FRACTION` of the
    ``seconds`` limit is ``left`` (``None`` otherwise)."""
    if left >= seconds * LOW_TIME_FRACTION:
        return None
    return (
        f"\n\n[headwire: about {max(0.0, left):.0f} s of the {seconds:g} s time limit are left. "
        "Finish now: wrap up and give your answer before the work is stopped.]"
    )


@dataclass(slots=True)
class Turn:
    """What a running turn has produced so far (read when it ends, however it ends)."""

    num_turns: int = 0
    last_text: str = ""
    """The last model call's text (a successful turn's answer, empty when it had none)."""
    said: str = ""
    """The last text any model call of the turn produced."""
    streaming: list[str] = field(default_factory=list)
    """The text deltas of the model call streaming now (the partial answer if it is cut)."""
    stop_reason: str | None = None
    deadline: float | None = None
    """``time.monotonic()`` when ``--max-duration`` ends the turn (``None``: no limit)."""
    warned: bool = False
    """Whether the model was told that little time is left (:func:`low_time_note`)."""
    corrections: int = 0
    structured: bool = False
    value: Any = None

    def partial_text(self) -> str:
        """The answer so far: the call cut off mid-stream, else the last text of the turn."""
        return "".join(self.streaming) or self.said


__all__ = [
    "DEFAULT_SUBAGENT_DEPTH",
    "MAX_SUBAGENT_DEPTH",
    "MAX_TOOL_CALLS",
    "MAX_TURNS_MESSAGE",
    "BudgetExceeded",
    "LimitName",
    "LimitReached",
    "RunLimits",
    "ToolCallLimitExceeded",
    "Turn",
    "TurnLimitExceeded",
    "budget_message",
    "check_max_tool_calls",
    "check_subagent_depth",
    "clamp_subagent_depth",
    "duration_message",
    "exit_code",
    "tool_calls_message",
]
