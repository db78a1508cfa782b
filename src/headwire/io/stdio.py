"""The terminal writer: the one way text reaches a person's terminal or stderr.

stdout is the wire (written by :mod:`headwire.io.writer`); everything else a person reads goes
through here, and every string through :func:`~headwire.printable.printable` on its way, so
text from a tool, a model, a recording or a server (an OSC 2 title, an OSC 52 clipboard
write, a cursor move) is shown as ``^[``, never run:

* :func:`warn`: a diagnostic line on stderr;
* :func:`say`: a line of a command's own output on stdout (``doctor``, ``trust``,
  ``sessions list`` and ``prune``), for a person rather than a program, and
  :func:`stdout_failed`: the exit code when a command's own output cannot be written;
* :func:`console`: the ``rich`` console the progress view draws on (stderr), which passes
  every piece of text it renders through the sanitizer (its own styles and cursor moves are
  the only escapes it writes);
* :func:`prompt_output`: where the REPL's ``prompt_toolkit`` prompts draw (stderr);
* :func:`for_terminal`: the text-mode answer when stdout is a terminal (the REPL, ``-p`` on a
  terminal); on a pipe or a file the answer stays byte for byte what the model wrote;
* :func:`install_excepthook`, :func:`route_library_notes`: an unexpected traceback, a
  thread's, and a library's log record no handler took go to stderr through the sanitizer;
* :func:`flush_standard_streams`: the last flush of both before the process ends.

``tests/unit/io/test_terminal_writers.py`` lists every module that touches ``sys.stderr``,
``sys.stdout``, a ``rich`` console or a ``prompt_toolkit`` output, and fuzzes each path.
"""

from __future__ import annotations

import contextlib
import functools
import sys

from headwire.printable import printable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it as such)

if TYPE_CHECKING:  # annotations only: ``--version`` imports no ``typing`` machinery
    from types import TracebackType
    from typing import IO, Any

    from rich.console import Console

__all__ = [
    "console",
    "divert_stdout",
    "flush_standard_streams",
    "for_terminal",
    "install_excepthook",
    "prompt_output",
    "relay",
    "route_library_notes",
    "say",
    "stderr_is_terminal",
    "stdout_failed",
    "stdout_is_terminal",
    "warn",
]


def warn(message: str) -> None:
    """A diagnostic line on stderr (never on the wire), through the sanitizer."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(printable(message.rstrip("\n")) + "\n")
        sys.stderr.flush()


def flush_standard_streams() -> bool:
    """Flush ``sys.stdout`` and ``sys.stderr`` (a closed or missing stream is skipped);
    ``False`` when a flush failed."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok


def say(message: str, stream: IO[str] | None = None, *, flush: bool = False) -> None:
    """A line of a command's output for a person on stdout (or ``stream``), through the
    sanitizer (``flush``: now); a closed reader raises ``BrokenPipeError`` as a plain write
    would."""
    out = sys.stdout if stream is None else stream
    out.write(printable(message.rstrip("\n")) + "\n")
    if flush:
        out.flush()


def stdout_failed(prog: str, exc: OSError) -> int:
    """The exit code of a command whose own output on stdout failed with ``exc``: 141 when the
    reader went away (``EPIPE``, quietly, as a shell's pipeline expects), else 1 with one line
    on stderr naming the error (a full disk).  stdout then points at ``/dev/null``, so the
    flush at exit cannot fail again."""
    import os

    from headwire.errors import ExitCode

    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    if isinstance(exc, BrokenPipeError):
        return ExitCode.BROKEN_PIPE
    warn(f"{prog}: cannot write to stdout: {exc.strerror or exc}")
    return ExitCode.ERROR


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal."""
    return _is_terminal(sys.stdout)


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal."""
    return _is_terminal(sys.stderr)


def relay(text: str) -> None:
    """A piece of another program's stderr (an MCP server's, with ``--debug``) on stderr,
    through the sanitizer."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(printable(text))
        sys.stderr.flush()


def for_terminal(data: bytes) -> bytes:
    """``data`` (UTF-8 text for stdout) through the sanitizer when stdout is a terminal, else
    unchanged."""
    if not stdout_is_terminal():
        return data
    text = data.decode("utf-8", "replace")
    safe = printable(text)
    return data if safe is text else safe.encode("utf-8", "replace")


def divert_stdout() -> None:
    """Point ``sys.stdout`` at stderr, so a stray ``print`` cannot reach the wire (ACP)."""
    sys.stdout = sys.stderr


@functools.cache
def _safe_console_class() -> type[Console]:
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """A console that renders every text segment through the sanitizer; control
        segments (rich's own cursor moves for a live region) pass unchanged."""

        def _render_buffer(self, buffer: Any) -> str:
            safe = (
                seg if seg.control else Segment(printable(seg.text), seg.style, None)
                for seg in buffer
            )
            return str(super()._render_buffer(safe))

    return SafeConsole


def console(file: IO[str] | None = None) -> Console:
    """The ``rich`` console for stderr (or ``file``): no markup, no highlighting, no emoji,
    every text piece through the sanitizer."""
    return _safe_console_class()(
        file=sys.stderr if file is None else file,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
    )


def prompt_output() -> Any:
    """A ``prompt_toolkit`` output drawing on stderr (stdout carries answers only)."""
    from prompt_toolkit.output import create_output

    return create_output(stdout=sys.stderr)


def _excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    import traceback

    warn("".join(traceback.format_exception(kind, value, tb)))


def install_excepthook() -> None:
    """Show an unexpected traceback (whose message may quote a model or a tool) through the
    sanitizer."""
    sys.excepthook = _excepthook


def route_library_notes() -> None:
    """Send what libraries print on their own through the sanitizer too: a thread's uncaught
    exception, and log records no handler took (``logging.lastResort``: asyncio's "Task
    exception was never retrieved", whose text may quote a model).  Imports ``logging`` and
    ``threading``, so it is called where the agent starts, not for ``--version``."""
    import logging
    import threading

    class Notes(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            with contextlib.suppress(Exception):
                warn(self.format(record))

    logging.lastResort = Notes(logging.WARNING)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not SystemExit:
            _excepthook(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback)

    threading.excepthook = thread_hook
