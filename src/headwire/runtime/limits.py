"""The limits of a run and the state of a running turn, for :mod:`headwire.runtime.agent`.

``--max-session-turns``/``--max-turns`` and ``--max-budget-usd`` are checked before each model
call (:func:`check_limits`); ``--max-duration`` is a deadline around the turn (the agent's
``asyncio.timeout``).  Each limit ends the turn with its own error ``result`` (README "Exit
codes and the result").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from headwire.errors import RunLimitError

if TYPE_CHECKING:
    from headwire.runtime.agent import AgentConfig

MAX_TURNS_MESSAGE = (
    "Reached max session turns for this session. Increase the number of turns with "
    "--max-session-turns, or by specifying model.maxSessionTurns in settings.json "
    "(.headwire/settings.json or ~/.headwire/settings.json)."
)


class TurnLimitExceeded(RunLimitError):
    """``--max-session-turns`` was reached."""


class BudgetExceeded(RunLimitError):
    """``--max-budget-usd`` was reached (or can no longer be kept: a model has no price)."""


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


def check_limits(config: AgentConfig, session_turns: int) -> None:
    """Before a model call (the main agent's and a subagent's): the turn limit, then the budget
    (so the call that crosses the budget is the last one)."""
    if 0 <= config.max_session_turns <= session_turns:
        raise TurnLimitExceeded(MAX_TURNS_MESSAGE)
    budget = config.max_budget_usd
    if budget is None:
        return
    meter = config.meter
    spent = meter.spent_usd()
    if spent is None:
        raise BudgetExceeded(
            f"Cannot keep to --max-budget-usd {budget:g}: {', '.join(meter.unpriced())} has "
            "no price; add it to modelPricing in settings."
        )
    if spent >= budget:
        raise BudgetExceeded(budget_message(budget, spent))


__all__ = [
    "MAX_TURNS_MESSAGE",
    "BudgetExceeded",
    "Turn",
    "TurnLimitExceeded",
    "budget_message",
    "check_limits",
    "duration_message",
]
