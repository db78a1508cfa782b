"""The interactive line-mode REPL: ``headwire`` with no prompt on a terminal.

Each line typed is one turn; the answer is printed as in Text mode.  Prompts submitted on the
Dual Output reverse channel (``--input-file``) run when the agent is idle.  ``/quit`` or end of
input (Ctrl-D) ends the session; Ctrl-C ends it too (exit code 130).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

from headwire.cli.build import Runtime
from headwire.cli.dual import DualOutput
from headwire.io.stdio import warn

PROMPT = "> "


def _read_line() -> str | None:
    try:
        sys.stderr.write(PROMPT)
        sys.stderr.flush()
        return input()
    except EOFError:
        return None


async def run_repl(runtime: Runtime, dual: DualOutput | None) -> int:
    """Read prompts until end of input; returns the exit code (0)."""
    warn("headwire: interactive mode; type a prompt, /quit to leave.")
    loop = asyncio.get_running_loop()
    typed: asyncio.Task[str | None] = loop.create_task(asyncio.to_thread(_read_line))
    while True:
        waiters: set[asyncio.Future[Any]] = {typed}
        submitted: asyncio.Task[str] | None = None
        if dual is not None:
            submitted = loop.create_task(dual.submits.get())
            waiters.add(submitted)
        done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if submitted is not None and submitted not in done:
            submitted.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await submitted
        if typed in done:
            line = typed.result()
            if line is None or line.strip() in ("/quit", "/exit"):
                return 0
            prompt = line
            typed = loop.create_task(asyncio.to_thread(_read_line))
        else:
            assert submitted is not None
            prompt = submitted.result()
        if not prompt.strip():
            continue
        await runtime.agent.run_turn(prompt)
