"""The Dual Output reverse channel: ``--input-file PATH``, polled for JSON-line commands.

``{"type": "submit", "text": ...}`` queues a prompt for when the agent is idle;
``{"type": "confirmation_response", "request_id": ..., "allowed": bool}`` answers a mirrored
permission request (the first answer wins).  Lines appended to the file are read every 500 ms;
malformed lines are reported on stderr with their line number and skipped.

Reading costs what was appended, never the whole file: each poll reads on from where the last
one stopped, at most :data:`READ_CHUNK` bytes at a time, off the event loop (a worker thread),
and polls again at once while more is waiting.  A line longer than :data:`MAX_LINE_BYTES` is
skipped with a note.  The path may name a FIFO: it is opened non-blocking and kept open, so
neither the open nor a read can block; a socket or device is refused with a note.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from headwire.wire import loads

POLL_INTERVAL_S = 0.5
READ_CHUNK = 1 << 20
"""Bytes read by one step of a poll."""
MAX_LINE_BYTES = 16 << 20
"""Longer command lines are skipped (a command is a small JSON object)."""


class InputFilePoller:
    """Reads new command lines from a file as they are appended."""

    def __init__(
        self, path: Path, on_command: Callable[[dict[str, Any]], None], warn: Callable[[str], None]
    ) -> None:
        self.path = path
        self.on_command = on_command
        self.warn = warn
        self.offset = 0
        self.lineno = 0
        self.partial = bytearray()
        self.skipping = False
        """Inside a line longer than ``MAX_LINE_BYTES``: drop bytes up to its end."""
        self.fifo: int | None = None
        self.refused = False

    # -- reading (worker thread) ---------------------------------------------------------------

    def _read_chunk(self) -> bytes | None:
        """Up to ``READ_CHUNK`` new bytes (``b""``: nothing new), ``None`` when the path is
        gone or unusable (a note was printed)."""
        if self.fifo is not None:
            try:
                return os.read(self.fifo, READ_CHUNK)
            except BlockingIOError:
                return b""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.warn(f"headwire: --input-file {self.path}: {exc.strerror}")
            return None
        mode = os.fstat(fd).st_mode
        if stat.S_ISFIFO(mode):
            self.fifo = fd  # kept open: a writer's data waits in the pipe between polls
            return self._read_chunk()
        try:
            if not stat.S_ISREG(mode):
                self.warn(f"headwire: --input-file {self.path}: not a regular file or a FIFO")
                self.refused = True
                return None
            return os.pread(fd, READ_CHUNK, self.offset)
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                self.warn(f"headwire: --input-file {self.path}: {exc.strerror}")
            return None
        finally:
            os.close(fd)

    def _lines(self, data: bytes) -> list[bytes]:
        """The complete lines ``data`` finishes (the rest is kept for the next chunk)."""
        if self.fifo is None:
            self.offset += len(data)
        lines: list[bytes] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self.skipping:
                self.skipping = False
                self.lineno += 1
            else:
                self.partial += data[start:end]
                lines.append(bytes(self.partial))
            self.partial.clear()
            start = end + 1
        if not self.skipping:
            self.partial += data[start:]
            if len(self.partial) > MAX_LINE_BYTES:
                self.partial.clear()
                self.skipping = True
                self.warn(
                    f"headwire: --input-file line {self.lineno + len(lines) + 1}: longer than "
                    f"{MAX_LINE_BYTES} bytes; skipped"
                )
        return lines

    def read_step(self) -> tuple[list[bytes], bool]:
        """One step: the complete lines read, and whether more data may be waiting."""
        data = self._read_chunk()
        if not data:
            return [], False
        return self._lines(data), len(data) == READ_CHUNK

    # -- dispatching (event loop) ------------------------------------------------------------

    def dispatch(self, lines: list[bytes]) -> None:
        """Parse and hand on each command line (numbered from 1 across the whole file)."""
        for raw in lines:
            self.lineno += 1
            if not raw.strip():
                continue
            try:
                command = loads(raw)
            except orjson.JSONDecodeError:
                self.warn(f"headwire: --input-file line {self.lineno}: not valid JSON")
                continue
            if not isinstance(command, dict) or command.get("type") not in (
                "submit",
                "confirmation_response",
            ):
                self.warn(f"headwire: --input-file line {self.lineno}: unknown command")
                continue
            self.on_command(command)

    def poll(self) -> None:
        """Read and dispatch whatever complete lines were appended since the last poll
        (synchronously: for callers without an event loop)."""
        more = True
        while more:
            lines, more = self.read_step()
            self.dispatch(lines)

    async def run(self) -> None:
        """Poll until cancelled; the reads run on a worker thread."""
        from headwire.runtime.tools.offload import in_thread

        try:
            with contextlib.suppress(asyncio.CancelledError):
                while not self.refused:
                    lines, more = await in_thread(self.read_step)
                    self.dispatch(lines)
                    if not more:
                        await asyncio.sleep(POLL_INTERVAL_S)
        finally:
            if self.fifo is not None:
                os.close(self.fifo)
                self.fifo = None
