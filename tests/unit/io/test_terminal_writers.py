"""Every writer to a person's terminal goes through the one sanitizer.

* The list: an AST scan of ``src/headwire`` finds every module that touches ``sys.stderr``,
  ``sys.stdout``, a ``rich`` console, a ``prompt_toolkit`` output or ``print``.  stderr, the
  console and the prompts belong to the terminal writer (:mod:`headwire.io.stdio`) alone;
  each module that writes stdout is listed in :data:`STDOUT_WRITERS` with what it writes, and
  a module that starts writing either fails this test until it uses the terminal writer or is
  listed.
* The fuzz: strings of C0 and C1 controls and OSC, CSI and DCS sequences go through every
  path of the terminal writer and of the progress view (its live region included); what comes
  out holds no control character but newline and tab, and no escape but the console's own
  styles and cursor moves.
"""

from __future__ import annotations

import ast
import io
import logging
import re
import sys
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from rich.text import Text

from headwire import events as ev
from headwire.cli.run.progress import TerminalProgress
from headwire.io import stdio
from headwire.progress import ProgressFeed
from headwire.transports import make_transport
from tests.paths import PACKAGE
from tests.strategies import terminal_sequences

TERMINAL_WRITER = "headwire.io.stdio"

STDOUT_WRITERS: dict[str, str] = {
    "headwire.io.writer": "the wire (protocol bytes), and the text answer after for_terminal",
    "headwire.io.stdio": "the terminal writer itself (say, for_terminal)",
    "headwire.cli.main": "the version string (a constant of ours) for --version",
    "headwire.acp.server": "takes the wire's descriptor, then diverts sys.stdout to stderr",
    "headwire.cli.run.result_guard": "a startup failure's error result (protocol bytes)",
    "headwire.cli.commands.demo": "the demo's stream-JSON lines (protocol bytes)",
    "headwire.cli.commands.bound": "the bounded stream (protocol bytes)",
    "headwire.cli.commands.sessions": "render_terminal (every string through printable) and "
    "export bytes through for_terminal",
    "headwire.cli.commands.schema": "the wire's JSON Schema (generated from code)",
    "headwire.cli.docs.cli": "docs generated from code",
    "headwire.cli.docs.settings": "docs generated from code",
    "headwire.cli.docs.wire": "docs generated from code",
    "headwire.runtime.tools.worker": "a worker process's JSON answer to its parent",
}
"""Every module that writes to stdout, and what it writes there."""


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(part for part in rel.parts if part != "__init__")
        found.append((name, ast.parse(path.read_text(), filename=str(path))))
    return found


def _uses(tree: ast.Module) -> set[str]:
    """What of the terminal a module touches: ``stdout``, ``stderr``, ``console`` (a ``rich``
    Console or Live made), ``prompt_output`` (a ``prompt_toolkit`` output), ``print``."""
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "sys" and node.attr in ("stdout", "__stdout__"):
                used.add("stdout")
            if node.value.id == "sys" and node.attr in ("stderr", "__stderr__"):
                used.add("stderr")
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if isinstance(func, ast.Name) and name == "print":
                used.add("print")
            if name == "Console":
                used.add("console")
            if name == "create_output":
                used.add("prompt_output")
            if name in ("write", "fdopen") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and first.value in (1, 2):
                    used.add("stdout" if first.value == 1 else "stderr")
        if isinstance(node, ast.Constant) and node.value == "/dev/tty":
            used.add("stderr")
    return used


def test_every_terminal_writer_is_the_terminal_writer_or_listed() -> None:
    stdout, other = set(), []
    for name, tree in _modules():
        used = _uses(tree)
        if "stdout" in used:
            stdout.add(name)
        if name != TERMINAL_WRITER:
            other += [f"{name}: {what}" for what in sorted(used - {"stdout"})]
    assert not other, "write to a terminal through headwire.io.stdio instead:\n" + "\n".join(other)
    assert stdout == set(STDOUT_WRITERS), (
        f"stdout writers not listed: {sorted(stdout - set(STDOUT_WRITERS))}; "
        f"listed but gone: {sorted(set(STDOUT_WRITERS) - stdout)}"
    )


def test_the_scan_sees_every_way_of_writing() -> None:
    code = (
        "import sys\nsys.stderr.write('x')\nprint('x')\nConsole(file=None)\n"
        "create_output(stdout=None)\nos.write(2, b'x')\n"
    )
    assert _uses(ast.parse(code)) == {"stderr", "print", "console", "prompt_output"}


# ---------------------------------------------------------------------------------------------
# The fuzz.

CONSOLE_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[[0-9]*A|\r")
"""The escapes rich writes itself: styles, the live region's cursor moves and line clears."""
LEFT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _safe(out: str, *, console: bool = False) -> None:
    rest = CONSOLE_OWN.sub("", out) if console else out
    assert not LEFT.search(rest), repr(out)


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@settings(max_examples=150, deadline=None)
@given(terminal_sequences())
def test_stderr_notes_and_relayed_output_are_sanitized(text: str) -> None:
    err = Terminal()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stderr", err)
        stdio.warn(text)
        stdio.relay(text)
    _safe(err.getvalue())


@settings(max_examples=50, deadline=None)
@given(terminal_sequences())
def test_tracebacks_and_library_notes_are_sanitized(text: str) -> None:
    err = Terminal()
    quiet = logging.getLogger("headwire-test-no-handler")
    quiet.propagate = False  # no handler anywhere: logging.lastResort takes the record
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stderr", err)
        mp.setattr("sys.excepthook", sys.excepthook)
        mp.setattr("threading.excepthook", threading.excepthook)
        mp.setattr("logging.lastResort", logging.lastResort)
        stdio.install_excepthook()
        stdio.route_library_notes()
        try:
            raise ValueError(text)
        except ValueError as exc:
            sys.excepthook(ValueError, exc, exc.__traceback__)
        quiet.warning("%s", text)

        def fail() -> None:
            raise ValueError(text)

        thread = threading.Thread(target=fail)
        thread.start()
        thread.join()
    shown = err.getvalue()
    assert shown.count("Traceback (most recent call last)") == 2, shown
    _safe(shown)


@settings(max_examples=150, deadline=None)
@given(terminal_sequences())
def test_command_output_and_the_answer_on_a_terminal_are_sanitized(text: str) -> None:
    out = Terminal()
    stdio.say(text, out)
    _safe(out.getvalue())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stdout", out)
        answer = make_transport("text").feed({"type": "result", "result": text})
        shown = stdio.for_terminal(answer.stdout).decode()
    _safe(shown)
    piped = io.StringIO()  # not a terminal: the answer stays byte for byte
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stdout", piped)
        assert stdio.for_terminal(answer.stdout) is answer.stdout


@settings(max_examples=100, deadline=None)
@given(terminal_sequences())
def test_the_console_sanitizes_even_raw_text(text: str) -> None:
    out = Terminal()
    console = stdio.console(out)
    console.print(Text(text, style="bold"))
    console.out(text)
    _safe(out.getvalue(), console=True)


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


@settings(max_examples=60, deadline=None)
@given(terminal_sequences(), terminal_sequences(8))
def test_the_progress_view_and_its_live_region_are_sanitized(text: str, name: str) -> None:
    out = Terminal()
    ticks = iter(range(1000))
    view = TerminalProgress(
        ProgressFeed(),
        file=out,
        live=True,
        answer_on_terminal=False,
        clock=lambda: float(next(ticks)),
    )
    args: dict[str, Any] = {"command": text, "file_path": text}
    failed = ev.ToolResponse(call_id="c", name=name, args=args, error=text, error_type="x")
    events: list[Any] = [
        ev.TurnStarted(info=INFO),
        ev.ModelCallStarted(message_id="1", model="m"),
        ev.TextDelta(text=text),
        ev.TextDelta(text=text),
        ev.ModelCallFinished(usage=ev.Usage(), message={"tool_calls": [{}]}),
        ev.ToolCallPending(call_id="c", name=name, args=args),
        ev.ToolStarted(call_id="c", name=name, args=args),
        ev.ToolFinished(response=failed, model_text=text),
        ev.ModelCallStarted(message_id="2", model="m"),
        ev.TextDelta(text=text),
        ev.ModelCallFinished(usage=ev.Usage(), message={}),
    ]
    try:
        for event in events:
            view(event)
            if view._live is not None:
                view._live.refresh()  # draw the live region now
    finally:
        view.close()
    assert not view._broken
    _safe(out.getvalue(), console=True)
