"""The progress renderer off a terminal: plain lines, never an exception into the run."""

from __future__ import annotations

import io
from typing import Any

from headwire import events as ev
from headwire.cli.run.progress import TerminalProgress
from headwire.progress import ProgressFeed

INFO = ev.SessionInfo(
    session_id="s",
    cwd="/w",
    tools=(),
    mcp_servers=(),
    model="m",
    permission_mode="default",
    version="0",
    agents=(),
)


def _view(**kw: Any) -> tuple[TerminalProgress, io.StringIO]:
    out = io.StringIO()
    ticks = iter(range(100))
    view = TerminalProgress(
        ProgressFeed(), file=out, live=False, clock=lambda: float(next(ticks)), **kw
    )
    return view, out


def test_plain_lines_with_the_text_as_it_streams() -> None:
    view, out = _view(answer_on_terminal=False)
    args = {"command": "printf '\\033[2J'"}
    response = ev.ToolResponse(call_id="c", name="run_shell_command", args=args, output="ok")
    for event in [
        ev.TurnStarted(info=INFO),
        ev.ModelCallStarted(message_id="1", model="m"),
        ev.TextDelta(text="Checking"),
        ev.TextDelta(text=" \x1b[31mnow."),
        ev.ModelCallFinished(usage=ev.Usage(), message={"tool_calls": [{}]}),
        ev.ToolCallPending(call_id="c", name="run_shell_command", args=args),
        ev.ToolStarted(call_id="c", name="run_shell_command", args=args),
        ev.ToolFinished(response=response, model_text="ok"),
    ]:
        view(event)
    view.close()
    assert out.getvalue() == (
        "Checking ^[[31mnow.\n"
        "● run_shell_command  printf '\\033[2J'\n"
        "  ✓ 2 bytes in 2.0s, whole on the wire\n"
    )


def test_a_broken_view_stops_itself_and_never_raises() -> None:
    class Broken(ProgressFeed):
        def feed(self, event: ev.Event, now: float) -> list[Any]:
            raise ValueError("bad terminal")

    out = io.StringIO()
    view = TerminalProgress(Broken(), file=out, live=False)
    view(ev.TurnStarted(info=INFO))
    view(ev.TurnStarted(info=INFO))
    assert out.getvalue() == "headwire: progress display stopped: bad terminal\n"


def test_paused_takes_nothing_down_off_a_terminal() -> None:
    view, out = _view()
    with view.paused():
        view(ev.TurnStarted(info=INFO))
    assert out.getvalue() == ""
