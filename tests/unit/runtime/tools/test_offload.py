"""Blocking steps run on abandonable threads: cancellation and timeouts return at once."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from headwire.runtime.tools.offload import StepTimedOut, in_thread


def test_result_and_exception_come_back() -> None:
    async def scenario() -> None:
        assert await in_thread(lambda: 42) == 42
        with pytest.raises(ZeroDivisionError):
            await in_thread(lambda: 1 / 0)

    asyncio.run(scenario())


def test_cancellation_abandons_a_blocked_step_and_the_loop_exits() -> None:
    never = threading.Event()
    stop = threading.Event()

    async def scenario() -> float:
        task = asyncio.ensure_future(in_thread(never.wait, stop=stop))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    started = time.monotonic()
    assert asyncio.run(scenario()) < 0.1
    # asyncio.run did not wait for the blocked thread (asyncio.to_thread would wait forever).
    assert time.monotonic() - started < 1.0
    assert stop.is_set()
    never.set()


def test_timeout_sets_stop_and_raises() -> None:
    stop = threading.Event()

    async def scenario() -> None:
        with pytest.raises(StepTimedOut):
            await in_thread(lambda: stop.wait(5), stop=stop, timeout_s=0.05)

    asyncio.run(scenario())
    assert stop.is_set()
