"""The stdio transport for MCP servers: a child process speaking newline-delimited JSON-RPC.

Same contract as the SDK's ``stdio_client`` (an async context manager yielding the read and
write streams a ``ClientSession`` drives), with three differences that matter here:

* framing is linear: stdout is read a chunk at a time, each chunk is searched once for the
  newline and a long message grows in one buffer, so a 20 MB result costs one copy and one
  parse, not a quadratic re-split (nor a read buffer that doubles past the message); big
  messages are parsed off the event loop, and a big tool result block by block with its text
  runs folded (:mod:`headwire.runtime.mcp.large`), so memory follows its bytes, not its blocks;
* the server's stderr is captured (its last lines explain a failed start) and echoed to ours
  only when ``debug`` is on, like upstream, so tracebacks a server logs do not flood the CLI;
* shutdown follows the MCP spec (close stdin, wait, SIGTERM the process group, wait, SIGKILL)
  with every wait bounded and shielded from cancellation, and then also signals the group so
  helpers the server spawned do not outlive it.  The asyncio child watcher reaps the process.

Process state (pid, exit code, stderr tail, whether it closed) is kept on a
:class:`ProcessState` the caller passes in.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from headwire.io.stdio import relay
from headwire.records import dataclass, field
from headwire.runtime.mcp.large import STREAM_PARSE_BYTES, read_tool_response
from headwire.runtime.redact import redact
from headwire.runtime.tools.offload import in_thread
from headwire.wire import JsonDecodeError, dumps, loads

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""A message longer than this drops the connection (the call fails, the session goes on)."""
OFFLOAD_PARSE_BYTES = 1 << 20
READ_CHUNK = 1 << 20
"""Bytes per read of the server's stdout (also the stream's buffer limit: the pipe is not read
ahead of the parser by more than twice this)."""
_NOT_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")
EXIT_GRACE_S = 2.0
URGENT_EXIT_GRACE_S = 0.3
TERM_GRACE_S = 2.0
KILL_WAIT_S = 2.0
FLUSH_S = 0.5
STDERR_TAIL_BYTES = 8192


@dataclass(slots=True)
class StdioLaunch:
    """How to start the server."""

    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None


@dataclass(slots=True)
class ProcessState:
    """What is known about the running server process."""

    pid: int | None = None
    returncode: int | None = None
    process: asyncio.subprocess.Process | None = None
    closed: bool = False
    shutting_down: bool = False
    hurry: bool = False
    """Stop without the stdin-EOF grace period (the server never finished starting)."""
    urgent: bool = False
    """A call was cancelled in flight (a signal stopping headwire): the busy server gets
    :data:`URGENT_EXIT_GRACE_S` to leave after its stdin closes, not :data:`EXIT_GRACE_S`, so a
    signal still ends the run within 2 s."""
    stderr_tail: deque[bytes] = field(default_factory=deque)
    stderr_bytes: int = 0

    def exit_code(self) -> int | None:
        """The process's exit code once the child watcher has reaped it, else ``None``."""
        if self.returncode is None and self.process is not None:
            self.returncode = self.process.returncode
        return self.returncode

    def add_stderr(self, chunk: bytes) -> None:
        """Keep the last :data:`STDERR_TAIL_BYTES` of the server's stderr."""
        self.stderr_tail.append(chunk)
        self.stderr_bytes += len(chunk)
        while self.stderr_bytes - len(self.stderr_tail[0]) >= STDERR_TAIL_BYTES:
            self.stderr_bytes -= len(self.stderr_tail.popleft())

    def stderr_text(self, limit: int = 600) -> str:
        """The end of the server's stderr as one trimmed line-ish string."""
        text = redact(b"".join(self.stderr_tail).decode("utf-8", "replace")).strip()
        return text[-limit:]


_RESPONSE_ID = re.compile(
    rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")'
    rb'\s*,\s*"(?:result|error)"'
)
"""The opening of a response, ``{"jsonrpc":"2.0","id":ID,"result"`` (the order every JSON-RPC
writer uses), so its request can be answered even when the rest cannot be read."""


def _parse(line: bytes | bytearray) -> SessionMessage | Exception:
    """One server line as a message, read as Node's client reads it.

    A large tool result is read block by block with its text runs folded
    (:mod:`headwire.runtime.mcp.large`).  pydantic's JSON reader refuses escaped lone
    surrogates and bytes that are not UTF-8; such a line is read again by
    :func:`headwire.wire.loads` (lone surrogates kept, bad bytes as U+FFFD, as Node's decoder
    does).  A line that still cannot be read but names its ``id`` at
    the start answers that request with a parse error, so the call fails now instead of waiting
    for its timeout; any other unreadable line is returned as the exception, as the SDK does.
    Invariant: a line holding a JSON-RPC message, lone-surrogate escapes or bytes that are not
    UTF-8 included, never comes back as an exception.
    """
    adapter = types.jsonrpc_message_adapter
    head = bytes(line[:512])  # a large line may be consumed (emptied) as it is read
    try:
        if len(line) > STREAM_PARSE_BYTES:
            folded = read_tool_response(line)
            if folded is not None:
                return SessionMessage(adapter.validate_python(folded, by_name=False))
        return SessionMessage(adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        error: Exception = exc
    try:
        value = loads(line, replace_invalid=True) if line else None
    except JsonDecodeError as exc:
        error, value = exc, None
    if value is not None:
        try:
            return SessionMessage(adapter.validate_python(value, by_name=False))
        except ValueError as exc:
            error = exc
    match = _RESPONSE_ID.match(head)
    if match is None:
        return error
    reason = f"the server sent a line that is not JSON-RPC ({_first_line(error)})"
    failure = types.JSONRPCError(
        jsonrpc="2.0",
        id=loads(match.group(1)),
        error=types.ErrorData(code=types.PARSE_ERROR, message=reason),
    )
    return SessionMessage(failure)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


async def _wait_exit(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether the process exited within ``timeout`` (polls ``returncode``, which the child
    watcher sets on reaping; ``wait()`` would also wait for pipes a grandchild holds)."""
    deadline = anyio.current_time() + timeout
    while proc.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.01)
    return True


async def _stop(
    proc: asyncio.subprocess.Process, hurry: bool = False, urgent: bool = False
) -> None:
    """Spec shutdown: stdin closed, then SIGTERM, then SIGKILL, to the whole process group
    (``hurry``: SIGTERM at once, for a server that never finished starting; ``urgent``: a short
    grace, for a call cancelled in flight)."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            proc.stdin.close()
    grace = 0 if hurry else URGENT_EXIT_GRACE_S if urgent else EXIT_GRACE_S
    if not await _wait_exit(proc, grace):
        _signal_group(proc.pid, signal.SIGTERM)
        if not await _wait_exit(proc, TERM_GRACE_S):
            _signal_group(proc.pid, signal.SIGKILL)
            await _wait_exit(proc, KILL_WAIT_S)
    # Helpers the server started (same session) must not outlive it.
    _signal_group(proc.pid, signal.SIGTERM)


@asynccontextmanager
async def stdio_transport(
    launch: StdioLaunch,
    state: ProcessState,
    on_close: Callable[[], None] | None = None,
    debug: bool = False,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """Start the server and yield ``(read_stream, write_stream)``; raises ``OSError`` when
    the command cannot be started.  ``on_close`` runs when the server's stdout ends before
    shutdown (it crashed or exited)."""
    proc = await asyncio.create_subprocess_exec(
        launch.command,
        *launch.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=launch.cwd,
        env=launch.env,
        start_new_session=True,
        limit=READ_CHUNK,
    )
    state.pid, state.process = proc.pid, proc
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def deliver(box: list[bytes | bytearray]) -> None:
        """Parse the one line in ``box`` and pass the message on.  The line leaves the box as
        it is parsed, so no frame holds it once it is read: a large one is gone before the
        session sees its message (and the tool renders it)."""
        if len(box[0]) > OFFLOAD_PARSE_BYTES:
            # Not anyio's worker threads: an idle worker keeps its last job's arguments and
            # result (the line, the parsed result) alive until it is given the next job.
            item = await in_thread(lambda: _parse(box.pop()))
        else:
            item = _parse(box.pop())
        await read_send.send(item)

    async def reader() -> None:
        # A line that spans reads grows in one buffer (past glibc's mmap threshold it is its own
        # mapping, grown without copying and returned at once): no pieces to join.
        partial = bytearray()
        try:
            async with read_send:
                while chunk := await stdout.read(READ_CHUNK):
                    start = 0
                    while (end := chunk.find(b"\n", start) + 1) > 0:
                        if partial:
                            partial += memoryview(chunk)[start:end]
                            line: bytes | bytearray = partial
                            partial = bytearray()
                        else:
                            line = chunk[start:end] if start or end < len(chunk) else chunk
                        box = [line] if _NOT_BLANK.search(line) else []
                        del line
                        if box:
                            await deliver(box)
                        start = end
                    partial += memoryview(chunk)[start:]
                    if len(partial) > MAX_MESSAGE_BYTES:
                        message = f"MCP message over {MAX_MESSAGE_BYTES} bytes; connection dropped"
                        await read_send.send(ValueError(message))
                        return
                if _NOT_BLANK.search(partial):
                    box, partial = [partial], bytearray()
                    await deliver(box)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            state.closed = True
            state.returncode = proc.returncode
            if not state.shutting_down and on_close is not None:
                on_close()

    async def writer() -> None:
        try:
            async with write_recv:
                async for message in write_recv:
                    value = message.message.model_dump(
                        mode="json", by_alias=True, exclude_unset=True
                    )
                    stdin.write(dumps(value) + b"\n")  # lone surrogates as \udxxx
                    await stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, RuntimeError):
            await read_send.aclose()  # the session sees the connection end, not a hang
        finally:
            writer_done.set()

    async def drain_stderr() -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := await stderr.read(4096):
                state.add_stderr(chunk)
                if debug:
                    relay(redact(chunk.decode("utf-8", "replace")))

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        tg.start_soon(drain_stderr)
        try:
            yield read_recv, write_send
        finally:
            state.shutting_down = True
            with anyio.CancelScope(shield=True):
                write_send.close()
                with anyio.move_on_after(URGENT_EXIT_GRACE_S if state.urgent else FLUSH_S):
                    await writer_done.wait()
                await _stop(proc, state.hurry, state.urgent)
                state.returncode = proc.returncode
                for stream in (read_recv, write_send, read_send, write_recv):
                    await stream.aclose()
            tg.cancel_scope.cancel()
    transport = getattr(proc, "_transport", None)  # closed now, not at GC
    with contextlib.suppress(Exception):
        if transport is not None:
            transport.close()
