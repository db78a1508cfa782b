"""The one line reader: lines of any length from a descriptor or a byte stream, as they come.

* :func:`fd_lines` reads a descriptor (stdin) in a daemon thread, raw (``os.read``, no Python
  buffer: a thread blocked inside a buffered reader holds its lock, and the interpreter aborts
  if it exits while the client still holds stdin open), and yields the lines on the event loop.
  The thread is never joined: a client that keeps stdin open cannot hold up the exit.  A
  non-blocking descriptor is waited on with ``select``.
* :func:`stream_lines` reads any ``await read(n)`` source (an asyncio subprocess pipe).

Both split with :class:`~headwire.protocol.lines.LineSplitter` (no length limit, one copy per
line) and yield lines without their ``\\n``; the last line is yielded even without one.  A read
error ends the lines with :class:`ReadError` carrying the :class:`OSError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import threading
from collections.abc import AsyncIterator, Awaitable, Callable

from headwire.errors import HeadwireError
from headwire.protocol.lines import LineSplitter

READ_CHUNK = 1 << 20
"""Bytes asked for per read (a pipe may give fewer); not a line limit."""


class ReadError(HeadwireError):
    """Reading the input failed (``__cause__`` / :attr:`error`: the :class:`OSError`)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


_EOF = object()


def _pump(fd: int, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[object]) -> None:
    """Thread body: read chunks until end of file and hand them to the loop."""

    def push(item: object) -> bool:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: the reader ended
            return False
        return True

    try:
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                select.select([fd], [], [], 1.0)
                continue
            except InterruptedError:
                continue
            if not chunk:
                break
            if not push(chunk):
                return
    except OSError as exc:
        push(exc)
    push(_EOF)


async def fd_lines(fd: int, chunk: int = READ_CHUNK) -> AsyncIterator[bytes]:
    """The lines of descriptor ``fd``, read in a daemon thread."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()
    threading.Thread(
        target=_pump, args=(fd, loop, queue), daemon=True, name="headwire-stdin"
    ).start()
    splitter = LineSplitter()
    while True:
        item = await queue.get()
        if item is _EOF:
            break
        if isinstance(item, OSError):
            for line in splitter.close():
                yield line
            raise ReadError(item) from item
        assert isinstance(item, bytes)
        for line in splitter.feed(item):
            yield line
    for line in splitter.close():
        yield line


async def stream_lines(
    read: Callable[[int], Awaitable[bytes]], chunk: int = READ_CHUNK
) -> AsyncIterator[bytes]:
    """The lines of a byte stream read with ``await read(chunk)`` until it returns ``b""``."""
    splitter = LineSplitter()
    while data := await read(chunk):
        for line in splitter.feed(data):
            yield line
    for line in splitter.close():
        yield line


def stdin_fd() -> int:
    """The descriptor of stdin (0 when ``sys.stdin`` was replaced or closed)."""
    import sys

    with contextlib.suppress(AttributeError, OSError, ValueError):
        return sys.stdin.fileno()
    return 0


__all__ = ["READ_CHUNK", "ReadError", "fd_lines", "stdin_fd", "stream_lines"]
