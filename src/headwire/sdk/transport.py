"""The subprocess under a client: spawn, write JSON lines, read lines of any length, reap.

``stdout`` is read in chunks and split on ``b"\\n"`` here, never with
``StreamReader.readline`` (whose 64 KiB limit is what makes the published ``qwen-code-sdk``
fail on long lines); a line may be hundreds of megabytes.  ``stderr`` is drained concurrently,
so a chatty CLI never blocks on a full pipe, into a bounded tail buffer that error messages
quote.  :meth:`SubprocessTransport.close` always leaves no process behind: it closes stdin,
waits, then terminates and kills, also when the caller is being cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from headwire.errors import SDKError
from headwire.io.lines import stream_lines

READ_CHUNK = 4 << 20
"""Bytes per read of stdout (also the pipe buffer limit: not a line limit)."""

STDERR_TAIL_BYTES = 64 << 10
"""stderr kept for error messages (the last this many bytes)."""

EXIT_QUIET_S = 0.3
"""After the CLI exited, stdout counts as ended once it stays quiet this long (a grandchild
that inherited it may hold it open for ever)."""
EXIT_DRAIN_S = 2.0
"""After the CLI exited, stdout is read for at most this long."""


class TransportError(SDKError):
    """The CLI process could not be started or written to."""


def resolve_command(executable: str | Sequence[str] | None) -> list[str]:
    """The argv prefix that runs the CLI.

    ``None`` runs headwire with this interpreter (``python -m headwire``); a path ending in
    ``.py`` runs with this interpreter, ``.js``/``.mjs``/``.cjs`` with ``node``; any other path
    is executed directly; a bare name is looked up on ``PATH`` (so ``"qwen"`` drives the upstream
    Qwen Code CLI); a sequence is used as is.
    """
    if executable is None:
        return [sys.executable, "-m", "headwire"]
    if not isinstance(executable, str):
        return list(executable)
    if os.sep not in executable and (os.altsep is None or os.altsep not in executable):
        return [shutil.which(executable) or executable]
    path = Path(executable).expanduser().resolve()
    suffix = path.suffix.lower()
    if suffix == ".py":
        return [sys.executable, str(path)]
    if suffix in (".js", ".mjs", ".cjs"):
        return ["node", str(path)]
    return [str(path)]


def headwire_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with this headwire's source root on ``PYTHONPATH`` (for ``python -m headwire``)."""
    root = str(Path(__file__).resolve().parents[2])
    out = dict(env)
    parts = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in parts:
        out["PYTHONPATH"] = os.pathsep.join([root, *parts])
    return out


def split_lines(
    read: Callable[[int], Awaitable[bytes]], chunk: int = READ_CHUNK
) -> AsyncIterator[bytes]:
    """Yield the lines (without ``\\n``) of a byte stream read with ``await read(chunk)``
    (:func:`headwire.io.lines.stream_lines`: no length limit, one copy per line)."""
    return stream_lines(read, chunk)


class StderrTail:
    """The last :data:`STDERR_TAIL_BYTES` of stderr, line by line."""

    def __init__(self, limit: int = STDERR_TAIL_BYTES) -> None:
        self.limit = limit
        self.lines: deque[bytes] = deque()
        self.size = 0
        self.dropped = 0

    def add(self, line: bytes) -> None:
        """Keep ``line`` (cut to the limit), dropping the oldest lines to stay bounded."""
        if len(line) >= self.limit:
            line = line[: max(0, self.limit - 1)]
        self.lines.append(line)
        self.size += len(line) + 1
        while self.size > self.limit and self.lines:
            self.size -= len(self.lines.popleft()) + 1
            self.dropped += 1

    def text(self) -> str:
        """The kept tail as text."""
        return b"\n".join(self.lines).decode("utf-8", "replace")


class SubprocessTransport:
    """One CLI child process speaking JSON lines on stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stderr_limit: int = STDERR_TAIL_BYTES,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.on_stderr = on_stderr
        self.stderr = StderrTail(stderr_limit)
        self.process: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        self._input_closed = False
        self._exited_at: float | None = None
        self._gave_up = False

    @property
    def returncode(self) -> int | None:
        """The exit code once the process ended (negative: killed by that signal)."""
        return self.process.returncode if self.process is not None else None

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        return self.process.pid if self.process is not None else None

    async def start(self) -> None:
        """Spawn the process (stdin, stdout and stderr piped)."""
        if self.process is not None:
            return
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                limit=READ_CHUNK,
            )
        except OSError as exc:
            raise TransportError(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from exc
        self._stderr_task = asyncio.create_task(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        async for line in split_lines(self.process.stderr.read, 64 << 10):
            self.stderr.add(line)
            if self.on_stderr is not None:
                with contextlib.suppress(Exception):
                    self.on_stderr(line.decode("utf-8", "replace"))

    async def write(self, data: bytes) -> None:
        """Write ``data`` (whole lines) to stdin and wait until the pipe took it."""
        if self.process is None or self.process.stdin is None:
            raise TransportError("the CLI process is not running")
        if self._input_closed:
            raise TransportError("input to the CLI process is already closed")
        async with self._write_lock:
            try:
                self.process.stdin.write(data)
                await self.process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise TransportError(f"the CLI process stopped reading its input: {exc}") from exc

    async def end_input(self) -> None:
        """Close stdin: the CLI finishes its queued turns and exits."""
        if self._input_closed or self.process is None or self.process.stdin is None:
            return
        self._input_closed = True
        async with self._write_lock:
            self.process.stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await self.process.stdin.wait_closed()

    async def lines(self) -> AsyncIterator[bytes]:
        """Yield stdout lines until EOF, or until the CLI exited and its stdout went quiet
        (one reader at a time)."""
        if self.process is None or self.process.stdout is None:
            raise TransportError("the CLI process is not running")
        async for line in split_lines(self._read_while_alive):
            yield line
        if self._gave_up:
            self._release_pipes()

    def _release_pipes(self) -> None:
        """Close our ends of the pipes (a grandchild may hold the others open for ever)."""
        transport = getattr(self.process, "_transport", None)
        if transport is not None:
            with contextlib.suppress(Exception):
                transport.close()

    async def _read_while_alive(self, size: int) -> bytes:
        """``stdout.read(size)``; ``b""`` (the end) once the CLI has exited and nothing more
        comes within :data:`EXIT_QUIET_S` (or :data:`EXIT_DRAIN_S` after the exit)."""
        proc = self.process
        assert proc is not None and proc.stdout is not None
        read = asyncio.ensure_future(proc.stdout.read(size))
        try:
            if self._exited_at is None:
                exited = asyncio.ensure_future(self._exited())
                try:
                    await asyncio.wait({read, exited}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    exited.cancel()
                if read.done():
                    return read.result()
                self._exited_at = asyncio.get_running_loop().time()
            left = self._exited_at + EXIT_DRAIN_S - asyncio.get_running_loop().time()
            try:
                async with asyncio.timeout(max(0.0, min(EXIT_QUIET_S, left))):
                    return await asyncio.shield(read)
            except TimeoutError:
                self._gave_up = True
                return b""  # the CLI is gone; whoever still holds its stdout is not the CLI
        finally:
            if not read.done():
                read.cancel()

    async def _exited(self) -> int:
        """Wait for the process itself to exit.  (asyncio's ``Process.wait`` also waits for
        every pipe to close, which a grandchild holding stdout or stderr delays for ever.)"""
        proc = self.process
        assert proc is not None
        while proc.returncode is None:
            await asyncio.sleep(0.05)
        return proc.returncode

    async def wait(self) -> int:
        """Wait for exit (and for stderr to be drained); returns the exit code."""
        code = await self._exited()
        await self._finish_stderr()
        return code

    async def _finish_stderr(self) -> None:
        task = self._stderr_task
        if task is None or task.done():
            return
        try:  # a grandchild may hold stderr open: give up after a second
            async with asyncio.timeout(1.0):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()

    async def close(self, timeout_s: float = 10.0) -> int | None:
        """End input, wait up to ``timeout_s`` for exit, then terminate and kill.

        The process is gone when this returns, also when the caller is cancelled meanwhile
        (it is killed then; asyncio's child watcher reaps it).
        """
        proc = self.process
        if proc is None:
            return None
        try:
            with contextlib.suppress(TransportError, OSError, TimeoutError):
                async with asyncio.timeout(2.0):
                    await self.end_input()
            if proc.returncode is None:
                try:
                    async with asyncio.timeout(timeout_s):
                        await self._exited()
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        proc.terminate()
                    try:
                        async with asyncio.timeout(3.0):
                            await self._exited()
                    except TimeoutError:
                        with contextlib.suppress(ProcessLookupError):
                            proc.kill()
                        await self._exited()
            await self._finish_stderr()
            self._release_pipes()
        except BaseException:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            if self._stderr_task is not None:
                self._stderr_task.cancel()
            raise
        return proc.returncode


__all__ = [
    "READ_CHUNK",
    "STDERR_TAIL_BYTES",
    "StderrTail",
    "SubprocessTransport",
    "TransportError",
    "headwire_env",
    "resolve_command",
    "split_lines",
]
