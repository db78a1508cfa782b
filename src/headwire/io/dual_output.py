"""Dual Output's descriptor: opening ``--json-fd`` / ``--json-file`` and writing its frames.

``--json-fd N`` (N >= 3, already open) or ``--json-file PATH`` (a regular file, a FIFO, or
``/dev/fd/N``) receives the frames the sans-IO protocol
(:mod:`headwire.protocol.dual_output`) produces: every event of the session, partial messages
included, bounded at the same tool-result boundary as every other wire.

The agent never waits for the reader: the descriptor is non-blocking, frames the reader has not
taken yet are buffered, and past 1 MiB buffered, or on any write error, the bridge turns itself
off, closes the channel (the reader sees EOF) and says so once on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import select
import stat
import time
from collections.abc import Callable

from headwire.errors import ConfigError

MAX_BUFFERED_BYTES = 1024 * 1024
CLOSE_GRACE_S = 0.3
"""How long the final ``session_end`` may wait for a slow reader before the channel closes."""


class DualOutputError(ConfigError):
    """The side channel cannot be opened; the message says why (exit code 2)."""


def check_json_fd(fd: int) -> None:
    """Validate ``--json-fd`` before headwire opens descriptors of its own (so a number the
    parent never passed cannot name one of ours): 3 or more, and open."""
    if fd < 3:
        raise DualOutputError(f"--json-fd {fd}: descriptors 0, 1 and 2 are reserved; use 3 or more")
    try:
        os.fstat(fd)
    except (OSError, OverflowError):
        raise DualOutputError(f"--json-fd {fd}: descriptor is not open") from None


def shares_stdout(fd: int) -> bool:
    """Whether ``fd`` writes to the same pipe or file as stdout (``--json-fd 3 3>&1``)."""
    try:
        a, b = os.fstat(fd), os.fstat(1)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) and not stat.S_ISCHR(a.st_mode)


def open_json_fd(fd: int) -> int:
    """Validate ``--json-fd`` and switch it to non-blocking."""
    check_json_fd(fd)
    os.set_blocking(fd, False)
    return fd


def open_json_file(path: str) -> int:
    """Open ``--json-file`` for non-blocking writes; a FIFO without a reader does not block."""
    flags = os.O_WRONLY | os.O_NONBLOCK
    try:
        is_fifo = stat.S_ISFIFO(os.stat(path).st_mode)
    except FileNotFoundError:
        is_fifo = False
    except OSError as exc:
        raise DualOutputError(f"--json-file {path}: {exc.strerror}") from None
    try:
        if is_fifo:
            try:
                return os.open(path, flags)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # no reader yet: hold the FIFO open ourselves
                    raise
                return os.open(path, os.O_RDWR | os.O_NONBLOCK)
        fd = os.open(path, flags | os.O_CREAT | os.O_APPEND, 0o600)
        return fd
    except OSError as exc:
        raise DualOutputError(f"--json-file {path}: {exc.strerror}") from None


class DualOutputBridge:
    """Writes sidecar frames to a non-blocking descriptor, buffering at most 1 MiB."""

    def __init__(self, fd: int, warn: Callable[[str], None]) -> None:
        self.fd: int | None = fd
        self.warn = warn
        self.pending = bytearray()
        self.disabled_reason: str | None = None
        self._watched: int | None = None

    @property
    def active(self) -> bool:
        """Whether frames still go out."""
        return self.fd is not None

    def write(self, frame: bytes) -> None:
        """Queue one frame and write what the reader takes now (never blocks, never raises)."""
        if self.fd is None:
            return
        self.pending += frame
        self.flush()

    def flush(self) -> None:
        """Write as much of the buffer as the reader takes now."""
        while self.fd is not None and self.pending:
            try:
                written = os.write(self.fd, self.pending)
            except BlockingIOError:
                break
            except OSError as exc:
                self.disable(f"write failed: {exc.strerror}")
                return
            del self.pending[:written]
        if self.fd is not None and len(self.pending) > MAX_BUFFERED_BYTES:
            self.disable("the reader fell more than 1 MiB behind")
        self._watch()

    def _watch(self) -> None:
        """While frames wait, let the event loop write them as soon as the reader takes more."""
        want = self.fd is not None and bool(self.pending)
        if want == (self._watched is not None):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if want and self.fd is not None:
            with contextlib.suppress(OSError, ValueError, PermissionError):
                loop.add_writer(self.fd, self.flush)
                self._watched = self.fd
        elif self._watched is not None:
            with contextlib.suppress(OSError, ValueError):
                loop.remove_writer(self._watched)
            self._watched = None

    def disable(self, reason: str) -> None:
        """Stop mirroring, close the channel and tell stderr once."""
        if self.fd is None:
            return
        self.disabled_reason = reason
        self.pending.clear()
        self._watch()
        fd, self.fd = self.fd, None
        with contextlib.suppress(OSError):
            os.close(fd)
        self.warn(f"headwire: dual output disabled: {reason}")

    def close(self, last: bytes = b"") -> None:
        """Write ``last`` (the ``session_end`` frame), give a live reader the tail for at most
        :data:`CLOSE_GRACE_S`, then close the channel."""
        if last:
            self.write(last)
        deadline = time.monotonic() + CLOSE_GRACE_S
        while self.fd is not None and self.pending:
            # the run is over: give a live reader the tail, but never hang on a stuck one
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            with contextlib.suppress(OSError, ValueError):
                select.select([], [self.fd], [], remaining)
            self.flush()
        if self.fd is not None:
            self.pending.clear()
            self._watch()
            fd, self.fd = self.fd, None
            with contextlib.suppress(OSError):
                os.close(fd)
