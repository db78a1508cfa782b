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
    check_budget(config)


def check_budget(config: AgentConfig) -> None:
    """The budget alone: also checked after a compaction's summary call, so the call that
    crosses the budget is the last one whichever call it is."""
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
    "check_budget",
    "check_limits",
    "duration_message",
]
