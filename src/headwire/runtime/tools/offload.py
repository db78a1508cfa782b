"""Blocking tool steps off the event loop, in threads that never hold up cancellation or exit.

``asyncio.to_thread`` runs work on the loop's default executor, whose threads ``asyncio.run``
joins at shutdown: a step stuck in a system call (a FIFO, a hung file system) or in a long
computation keeps the process alive after a signal asked it to stop.  :func:`in_thread` runs the
step on its own daemon thread instead: the awaiting coroutine can be cancelled (a signal, an
interrupt, the tool timeout) at once, the ``stop`` event tells the step to give up at its next
check, and an abandoned thread never delays the process's exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

from headwire.errors import ToolError

T = TypeVar("T")


class StepTimedOut(ToolError):
    """A blocking tool step ran past the tool timeout and was abandoned."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the operation did not finish within {seconds:g} s")
        self.seconds = seconds


async def in_thread(
    fn: Callable[[], T], *, stop: threading.Event | None = None, timeout_s: float | None = None
) -> T:
    """Run ``fn()`` on a daemon thread and return its result (or raise its exception).

    On cancellation or after ``timeout_s`` (then :class:`StepTimedOut` is raised) ``stop`` is
    set and the thread is left to finish on its own: steps that loop check ``stop``.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    # An abandoned step may still fail later: retrieve its exception so nothing is logged.
    done.add_done_callback(lambda f: f.cancelled() or f.exception())

    def deliver(outcome: tuple[bool, object]) -> None:
        if done.done():
            return
        ok, value = outcome
        if ok:
            done.set_result(value)  # type: ignore[arg-type]
        else:
            assert isinstance(value, BaseException)
            done.set_exception(value)

    def target() -> None:
        try:
            outcome: tuple[bool, object] = (True, fn())
        except BaseException as exc:  # delivered to the awaiting coroutine
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(deliver, outcome)

    threading.Thread(target=target, name="headwire-tool-step", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(done), timeout_s)
    except TimeoutError:
        if stop is not None:
            stop.set()
        raise StepTimedOut(timeout_s or 0.0) from None
    except BaseException:
        if stop is not None:
            stop.set()
        raise
