"""The one writer of protocol bytes: stdout (or any descriptor), never dropping a byte.

:class:`WireWriter` hands frames to a writer thread, so the event loop never waits on a slow
reader (a signal or a cancel is always handled) and the order of frames is kept.  A small frame
(at most ``PIPE_BUF`` bytes) written while nothing is pending is written at once by the caller,
when that cannot block: a regular file or a device that is not a terminal, or a pipe or socket
that ``poll`` says has room (it then takes ``PIPE_BUF`` bytes whole).  It saves the thread
hand-off, which dominates the cost of a small frame.  The thread
finishes short writes, waits for writability when the descriptor is non-blocking (``EAGAIN``:
a ``--json-fd 3 3>&1`` or a parent may have set ``O_NONBLOCK`` on the shared file description),
and stops at the first ``EPIPE``: the reader went away, nothing more is written, and
:attr:`WireWriter.closed` turns true (``on_closed`` is called once, on the loop that wrote).

Memory follows what the reader has not taken yet: past :data:`HIGH_WATER` bytes buffered the
writing caller waits for the reader (backpressure, as a blocking pipe gives), in slices, so the
wait ends as soon as the reader catches up or goes away.  :meth:`WireWriter.drain` waits until
everything was written (``await``-able, so a signal still ends a run whose reader is stuck) and
:meth:`WireWriter.close` does the same at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import errno
import os
import select
import stat
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

from headwire.io.stdio import warn

HIGH_WATER = 64 << 20
"""Bytes buffered for a slow reader before writers wait."""
BATCH_BYTES = 1 << 20
"""Frames queued together are written by one ``write`` call, up to this many bytes."""
_WAIT_SLICE_S = 0.05
DIRECT_BYTES = select.PIPE_BUF
"""Frames at most this long may be written by the caller itself (see the module docstring)."""


_FAILED: list[OSError] = []
"""Write errors that stopped a writer other than ``EPIPE`` (a full disk, an I/O error)."""


def output_failed() -> bool:
    """Whether a writer stopped on an error other than its reader leaving: the process's
    output is incomplete (:func:`~headwire.io.process_exit.leave` then exits non-zero)."""
    return bool(_FAILED)


_ALWAYS = "always"
"""A descriptor a write never blocks on (a regular file, a device that is not a terminal)."""


def _direct_mode(fd: int) -> select.poll | str | None:
    """How a small frame may be written to ``fd`` directly: :data:`_ALWAYS`, after a ``poll``
    for room (a pipe, a socket: the ``poll`` object), or never (``None``: a terminal, which may
    be stopped with room for fewer bytes than a frame)."""
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode) or (stat.S_ISCHR(mode) and not os.isatty(fd)):
            return _ALWAYS
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return None
    except OSError:
        return None
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return poller


class WireWriter:
    """Writes frames to a descriptor in order, from a thread; goes quiet once the reader left."""

    def __init__(self, stream: BinaryIO | int | None = None) -> None:
        if stream is None:
            stream = sys.stdout.buffer
        self.stream: BinaryIO | None = None
        """A stream without a descriptor (an in-memory buffer): written synchronously."""
        self.fd = -1
        if isinstance(stream, int):
            self.fd = stream
        else:
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
            try:
                self.fd = stream.fileno()
            except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation included
                self.stream = stream
        self.closed = False
        """The reader went away (``EPIPE``) or the descriptor failed: nothing more is written."""
        self.error: OSError | None = None
        self.on_closed: Callable[[], None] | None = None
        """Called once, on the event loop of the first write, when :attr:`closed` turns true."""
        self._queue: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self._direct = _direct_mode(self.fd) if self.fd >= 0 else None

    # -- the caller's side -------------------------------------------------------------------

    @property
    def buffered(self) -> int:
        """Bytes handed over and not yet written."""
        return self._buffered

    def write(self, data: bytes) -> None:
        """Queue one frame (a no-op once closed).  Waits only past :data:`HIGH_WATER`."""
        if not data or self.closed:
            return
        if self.stream is not None:
            self._write_stream(data)
            return
        if self._loop is None:
            with contextlib.suppress(RuntimeError):
                self._loop = asyncio.get_running_loop()
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="headwire-writer", daemon=True
                )
                self._thread.start()
                atexit.register(self.close)
            while self._buffered > HIGH_WATER and not self.closed:
                self._cond.wait(_WAIT_SLICE_S)
            if self.closed:
                return
            if not self._buffered and len(data) <= DIRECT_BYTES and self._write_now(data):
                return
            idle = not self._queue  # the thread waits only on an empty queue
            self._queue.append(data)
            self._buffered += len(data)
            if idle or self._buffered > HIGH_WATER:
                self._cond.notify_all()

    def _write_now(self, data: bytes) -> bool:
        """Write ``data`` from the caller when that cannot block (nothing pending, lock held);
        ``False``: the thread must write it (not writable now, or a short write's rest was
        queued already: ``True`` then too)."""
        direct = self._direct
        if direct is None:
            return False
        try:
            if direct is not _ALWAYS and not direct.poll(0):  # type: ignore[union-attr]
                return False
            written = os.write(self.fd, data)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            self._closed_by(exc)
            return True
        if written < len(data):  # a non-blocking descriptor took part of it
            rest = data[written:]
            self._queue.append(rest)
            self._buffered += len(rest)
            self._cond.notify_all()
        return True

    def _write_stream(self, data: bytes) -> None:
        assert self.stream is not None
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError) as exc:  # BrokenPipeError; ValueError: closed under us
            self.closed = True
            self.error = exc if isinstance(exc, OSError) else OSError(errno.EBADF, str(exc))
            if self.on_closed is not None:
                self.on_closed()

    async def drain(self) -> None:
        """Wait until every queued frame was written (or the writer closed)."""
        while self._buffered and not self.closed:
            await asyncio.sleep(_WAIT_SLICE_S if self._buffered else 0)

    def close(self, timeout: float | None = None) -> None:
        """Write what is queued (waiting up to ``timeout`` seconds, ``None``: as long as the
        reader takes), then stop the thread.  The descriptor itself stays open."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    # -- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if not self._queue:
                    return
                data = self._take()
            try:
                self._write_all(data)
            except OSError as exc:
                self._fail(exc)
                return
            with self._cond:
                self._buffered -= len(data)
                self._cond.notify_all()

    def _take(self) -> bytes:
        """The next frame, joined with the frames queued behind it up to :data:`BATCH_BYTES`
        (one system call, one wake of this thread, for a burst of small frames)."""
        data = self._queue.popleft()
        if not self._queue or len(data) >= BATCH_BYTES:
            return data
        parts, size = [data], len(data)
        while self._queue and size + len(self._queue[0]) <= BATCH_BYTES:
            part = self._queue.popleft()
            parts.append(part)
            size += len(part)
        return b"".join(parts)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:  # O_NONBLOCK set on the shared file description
                select.select([], [self.fd], [], 1.0)
                continue
            except InterruptedError:
                continue
            view = view[written:]

    def _fail(self, exc: OSError) -> None:
        with self._cond:
            self._closed_by(exc)

    def _closed_by(self, exc: OSError) -> None:
        """Stop writing for good after ``exc`` (the lock held); tell ``on_closed``."""
        self.closed = True
        self.error = exc
        self._queue.clear()
        self._buffered = 0
        self._cond.notify_all()
        if exc.errno == errno.EPIPE:
            with contextlib.suppress(OSError):
                # keep the interpreter from complaining when it flushes stdout at exit
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        else:  # not the reader leaving: the output is incomplete, and the exit code says so
            _FAILED.append(exc)
            where = "stdout" if self.fd == 1 else f"descriptor {self.fd}"
            warn(f"headwire: cannot write to {where}: {exc.strerror or exc}; the output is cut")
        callback, loop = self.on_closed, self._loop
        if callback is not None and loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody to tell
                loop.call_soon_threadsafe(callback)


__all__ = ["HIGH_WATER", "WireWriter", "output_failed"]
