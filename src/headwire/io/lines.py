"""The one line reader: lines of any length from a descriptor or a byte stream, as they come.

* :func:`fd_lines` reads a descriptor (stdin) in a daemon thread, raw (``os.read``, no Python
  buffer: a thread blocked inside a buffered reader holds its lock, and the interpreter aborts
  if it exits while the client still holds stdin open), and yields the lines on the event loop.
  The thread is never joined: a client that keeps stdin open cannot hold up the exit.  A
  non-blocking descriptor is waited on with ``select``.
* :func:`stream_lines` reads any ``await read(n)`` source (an asyncio subprocess pipe).
* :func:`open_regular` and :func:`file_lines` read a regular file (a session recording) that
  may be hostile: the open never blocks (a FIFO is refused), and a line that is torn (no
  newline before the end of the file) or longer than a limit is skipped without being read
  into memory.

Both split with :class:`~headwire.protocol.lines.LineSplitter` (no length limit, one copy per
line) and yield lines without their ``\\n``; the last line is yielded even without one.  A read
error ends the lines with :class:`ReadError` carrying the :class:`OSError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import select
import stat
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Literal

from headwire.errors import HeadwireError
from headwire.protocol.lines import LineSplitter
from headwire.records import dataclass

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


class NotRegularFile(HeadwireError, OSError):
    """:func:`open_regular` met a FIFO, socket, device or directory."""


def open_regular(path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> int:
    """A blocking read descriptor of the regular file ``path`` (the caller closes it).

    The open itself is non-blocking (opening a FIFO without a writer would block forever, past
    SIGTERM), then anything but a regular file is refused with :class:`NotRegularFile`, and
    only then is the descriptor made blocking.  ``follow_symlinks=False`` refuses a symlink
    (``ELOOP``).  Raises :class:`OSError`.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (a FIFO, socket or device)")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


HELD_LINE_BYTES = 1 << 20
"""A line's first bytes kept while its end is sought; a longer line is read again whole."""


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line :func:`file_lines` did not read: ``torn`` (the file ends before its newline) or
    ``too_long`` (longer than the limit).  ``number`` counts from 1; ``size`` in bytes."""

    number: int
    size: int
    reason: Literal["torn", "too_long"]


def _pread_all(fd: int, size: int, offset: int) -> bytes:
    pieces: list[bytes] = []
    while size > 0:
        piece = os.pread(fd, size, offset)
        if not piece:
            break
        pieces.append(piece)
        size -= len(piece)
        offset += len(piece)
    return b"".join(pieces)


def file_lines(
    fd: int, *, limit: int, chunk: int = READ_CHUNK, hold: int = HELD_LINE_BYTES
) -> Iterator[bytes | SkippedLine]:
    """The lines of the regular file open as ``fd`` (read from its current offset), without
    their ``\n``, each as one ``bytes``; a line that cannot be read is a :class:`SkippedLine`.

    Memory is bounded by ``chunk + hold`` plus one line of at most ``limit`` bytes: a line's
    first ``hold`` bytes are kept while its newline is sought; past that, its bytes are only
    counted, and once the newline is found the line is read again with ``pread`` (when it is
    at most ``limit`` bytes long, else it is skipped as ``too_long``).  A last line without a
    newline is yielded when it was held whole (a small file written without a final newline),
    else skipped as ``torn``: it is never read whole.  Raises :class:`OSError`.
    """
    position = os.lseek(fd, 0, os.SEEK_CUR)
    start = position  # where the current line begins in the file
    held: list[bytes] = []
    held_bytes = 0
    holding = True
    number = 1
    while data := os.read(fd, chunk):
        base = position
        position += len(data)
        at = 0
        while (end := data.find(b"\n", at)) != -1:
            size = base + end - start
            if size > limit:
                yield SkippedLine(number, size, "too_long")
            elif holding:
                held.append(data[at:end])
                yield b"".join(held)
            else:
                yield _pread_all(fd, size, start)
            held, held_bytes, holding = [], 0, True
            number += 1
            start = base + end + 1
            at = end + 1
        if at < len(data) and holding:
            held_bytes += len(data) - at
            if held_bytes <= hold and held_bytes <= limit:
                held.append(data[at:])
            else:
                held, holding = [], False
    if position > start:
        if holding:
            yield b"".join(held)
        else:
            yield SkippedLine(number, position - start, "torn")


def stdin_fd() -> int:
    """The descriptor of stdin (0 when ``sys.stdin`` was replaced or closed)."""
    import sys

    with contextlib.suppress(AttributeError, OSError, ValueError):
        return sys.stdin.fileno()
    return 0


__all__ = [
    "HELD_LINE_BYTES",
    "READ_CHUNK",
    "NotRegularFile",
    "ReadError",
    "SkippedLine",
    "fd_lines",
    "file_lines",
    "open_regular",
    "stdin_fd",
    "stream_lines",
]
