"""Dual Output: the stream-JSON event schema mirrored to a side channel next to human output.

``--json-fd N`` (N >= 3, already open) or ``--json-file PATH`` (a regular file, a FIFO, or
``/dev/fd/N``) receives every event of the session, partial messages included, framed as
stream-JSON lines and bounded at the same tool-result boundary as every other wire.  The first
event is ``system/session_start`` with ``data.protocol_version = 2`` ("textual tool_result
content is bounded for transport"); the last is ``system/session_end``, exactly once.

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
import uuid
from collections.abc import Callable

from headwire.errors import ConfigError
from headwire.protocol import messages as m
from headwire.transports import StreamJsonTransport

DUAL_OUTPUT_PROTOCOL_VERSION = 2
MAX_BUFFERED_BYTES = 1024 * 1024
CLOSE_GRACE_S = 0.3
"""How long the final ``session_end`` may wait for a slow reader before the channel closes."""
SUPPORTED_EVENTS = [
    "system",
    "user",
    "assistant",
    "stream_event",
    "result",
    "control_request",
    "control_response",
]


class DualOutputError(ConfigError):
    """The side channel cannot be opened; the message says why (exit code 2)."""


def open_json_fd(fd: int) -> int:
    """Validate ``--json-fd``: 3 or more, open, and switched to non-blocking."""
    if fd < 3:
        raise DualOutputError(f"--json-fd {fd}: descriptors 0, 1 and 2 are reserved; use 3 or more")
    try:
        os.fstat(fd)
    except OSError:
        raise DualOutputError(f"--json-fd {fd}: descriptor is not open") from None
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
    """Mirrors wire messages to a non-blocking descriptor, buffering at most 1 MiB."""

    def __init__(
        self, fd: int, session_id: str, cwd: str, version: str, warn: Callable[[str], None]
    ) -> None:
        self.fd: int | None = fd
        self.session_id = session_id
        self.warn = warn
        self.transport = StreamJsonTransport(include_partial_messages=True)
        self.pending = bytearray()
        self.ended = False
        self.disabled_reason: str | None = None
        self._watched: int | None = None
        self.emit(
            m.system_event(
                uuid=str(uuid.uuid4()),
                session_id=session_id,
                subtype="session_start",
                data={
                    "session_id": session_id,
                    "cwd": cwd,
                    "protocol_version": DUAL_OUTPUT_PROTOCOL_VERSION,
                    "version": version,
                    "supported_events": SUPPORTED_EVENTS,
                },
            )
        )

    @property
    def active(self) -> bool:
        """Whether frames still go out."""
        return self.fd is not None

    def emit(self, message: m.JsonDict) -> None:
        """Mirror one message (never blocks, never raises)."""
        if self.fd is None:
            return
        try:
            self.pending += self.transport.feed(message).stdout
        except Exception as exc:  # an encoder bug must not take the agent down
            self.disable(f"cannot encode an event: {exc}")
            return
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
        self.pending.clear()
        with contextlib.suppress(OSError):
            os.close(fd)
        self.warn(f"headwire: dual output disabled: {reason}")

    def close(self) -> None:
        """Emit ``session_end`` (exactly once), flush what the reader takes, and close."""
        if self.ended:
            return
        self.ended = True
        self.emit(
            m.system_event(
                uuid=str(uuid.uuid4()),
                session_id=self.session_id,
                subtype="session_end",
                data={"session_id": self.session_id},
            )
        )
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
