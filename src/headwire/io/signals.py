"""Run a front end's event loop so that SIGINT and SIGTERM stop it cleanly.

:func:`run_cancellable` is ``asyncio.run`` plus signal handlers: the first SIGINT or SIGTERM
cancels the main task, so every ``finally`` on the way out runs (the running turn emits its
error ``result`` and records it, a shell tool's process group is killed, MCP servers are shut
down, the recorder is closed), and the run then returns ``128 + signal number``: ``130``
(``ExitCode.INTERRUPTED``) or ``143`` (``ExitCode.TERMINATED``), as a shell reports a process
killed by that signal.  Further signals during that cleanup are noted and ignored; the cleanup is
bounded by its own timeouts.  That stays true after the event loop's handlers are removed:
until the process exits, a further SIGINT or SIGTERM is noted on stderr and ignored, so a
second signal that arrives while ``asyncio.run`` shuts down (two SIGINTs 50 ms apart) cannot
kill the process by the signal instead of its exit code.  The handlers in place before are
back once the run returns; the CLI then calls :func:`ignore_until_exit` for the few steps left
before the process exits.

A signal the parent set to be ignored (``SIG_IGN``, e.g. a ``nohup`` or a background job of
a non-interactive shell) stays ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from typing import Any

from headwire.io.stdio import warn

_DEFAULTS: dict[signal.Signals, Any] = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGTERM: signal.SIG_DFL,
}


def _wanted() -> list[signal.Signals]:
    """The signals whose current disposition is the default (not ignored by the parent)."""
    wanted: list[signal.Signals] = []
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        wanted.append(signal.SIGINT)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        wanted.append(signal.SIGTERM)
    return wanted


_RECEIVED: list[signal.Signals] = []
"""The signal that stopped the current run, once one did (for :func:`cancelled_exit_code`)."""


def cancelled_exit_code() -> int:
    """The exit code of a run cancelled now: 128 + the signal that stopped it (143 for
    SIGTERM), 130 when no signal did (an interrupt from the client)."""
    return 128 + int(_RECEIVED[0]) if _RECEIVED else 130


def run_cancellable(main: Coroutine[Any, Any, int]) -> int:
    """Run ``main`` to its exit code; a SIGINT or SIGTERM cancels it and returns 128 + signum.

    ``main`` must let ``asyncio.CancelledError`` propagate after its cleanup (swallowing it is
    tolerated: the signal's exit code is returned all the same).
    """
    received: list[signal.Signals] = []
    _RECEIVED.clear()
    wanted = _wanted()

    def note(signum: signal.Signals) -> None:
        if received:
            warn(f"headwire: {signum.name} received again; still shutting down")
            return
        received.append(signum)
        _RECEIVED[:] = [signum]
        warn(f"headwire: {signum.name} received; stopping")

    def late(signum: int, _frame: object) -> None:
        note(signal.Signals(signum))

    async def guarded() -> int:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def on_signal(signum: signal.Signals) -> None:
            first = not received
            note(signum)
            if first:
                task.cancel()

        installed: list[signal.Signals] = []
        for signum in wanted:
            try:
                loop.add_signal_handler(signum, on_signal, signum)
            except (RuntimeError, ValueError, OSError):  # not the main thread, or no such signal
                continue
            installed.append(signum)
        try:
            code = await main
        except asyncio.CancelledError:
            if not received:
                raise
            task.uncancel()
            code = 0
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)
                signal.signal(signum, late)  # until exit: noted, never fatal
        return code

    code = asyncio.run(guarded())
    for signum in wanted:
        if signal.getsignal(signum) is late:
            signal.signal(signum, _DEFAULTS[signum])
    return 128 + int(received[0]) if received else code


def ignore_until_exit() -> None:
    """Ignore SIGINT and SIGTERM from now on: the process is about to exit with a code already
    decided.  (Python's finalization resets handlers written in Python to the default, which
    would let a late signal kill the process by the signal; an ignored one stays ignored.)"""
    for signum in _DEFAULTS:
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            signal.signal(signum, signal.SIG_IGN)


__all__ = ["ignore_until_exit", "run_cancellable"]
