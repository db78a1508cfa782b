"""``headwire --acp``: an Agent Client Protocol agent over stdio (JSON-RPC 2.0, protocol 1).

stdin carries the client's messages and stdout only protocol frames, one JSON object per line
(:mod:`headwire.acp.jsonrpc`); diagnostics go to stderr.  The client calls:

* ``initialize`` -> capabilities (``loadSession``, text and embedded-context prompts, MCP over
  stdio and HTTP), ``agentInfo``, no ``authMethods``;
* ``session/new`` ``{cwd, mcpServers}`` -> ``{sessionId, modes}``, then an
  ``available_commands_update``; the MCP servers are kept on the session (and connected by
  ``connect_mcp`` when one is given);
* ``session/load`` ``{sessionId, cwd, mcpServers}``: the recording is replayed as
  ``session/update`` notifications, streamed record by record (:mod:`headwire.acp.replay`),
  then answered with ``{modes}``; the session continues where it stopped;
* ``session/prompt`` ``{sessionId, prompt}``: one agent turn; text deltas, thoughts and tool
  calls stream as ``session/update``; the answer is ``{stopReason}`` (``end_turn``,
  ``cancelled``, ``max_turn_requests``); a model failure is an error response;
* ``session/set_mode`` ``{sessionId, modeId}``: the approval mode;
* ``session/cancel`` (notification): stops the running prompt, its tool too (the shell's
  process group is killed), and that prompt answers ``cancelled``.

The agent asks the client with ``session/request_permission`` before a tool that needs approval
(options allow always / allow once / reject); a rejection or a ``cancelled`` outcome denies the
call and ends the turn after it, as upstream does.

Every ``session/update`` goes through :meth:`AcpServer.send_update`, which applies
:func:`~headwire.projection.project_acp_tool_call_update` immediately before encoding (it
changes only ``tool_call_update`` text fields, exempts A2UI tools, and returns everything else
as is), live and in replay alike.  The recording stays unprojected.

Bad input never stops the server: a line that is not JSON gets ``-32700`` (id ``null``), a
message that is not JSON-RPC ``-32600``, an unknown method ``-32601`` (``data.method``), bad
params or an unknown session ``-32602``; an unknown notification is ignored with a note on
stderr.  Lines have no length limit (stdin is read in a thread).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import io
import os
import reprlib
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO
from uuid import uuid4

from headwire import __version__
from headwire.acp import jsonrpc as rpc
from headwire.acp.replay import Replayer, stream_records
from headwire.acp.session import (
    AcpSession,
    SessionUpdates,
    cwd_param,
    mcp_servers_param,
    object_params,
    prompt_text,
    string_param,
)
from headwire.acp.updates import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    MODES,
    always_rule,
    available_commands_update,
    initialize_result,
    mode_state,
    permission_options,
    tool_call_result,
    tool_kind,
    tool_locations,
    tool_title,
)
from headwire.errors import ConfigError, ExitCode
from headwire.io.signals import run_cancellable
from headwire.io.stdio import WireWriter, warn
from headwire.projection import ACP_TRUNCATION_MARKER, project_acp_tool_call_update
from headwire.protocol.messages import JsonDict
from headwire.runtime.agent import Agent
from headwire.runtime.permissions import Decision
from headwire.runtime.recording import RecordingError, conversation_of, find_session
from headwire.runtime.storage import data_dir
from headwire.runtime.tools.base import Tool

__all__ = ["AcpServer", "AcpSession", "BuildAgent", "McpConnector", "prompt_text", "run_acp"]

BuildAgent = Callable[
    [argparse.Namespace, Path, Callable[[JsonDict], None]],
    tuple[Agent, Callable[[], Awaitable[None]]],
]
"""``build_agent(args, cwd, emit)`` of the CLI: the session's agent and its closer."""

McpConnector = Callable[
    [list[dict[str, Any]], Path],
    Awaitable[tuple[list[Tool], list[dict[str, Any]], Callable[[], Awaitable[None]]]],
]
"""Connects a session's ``mcpServers`` (as the client sent them); returns their tools, their
statuses and the closer that shuts them down with the session."""

CANCELLED_TEXT = "Operation cancelled."
"""``content`` of a tool call that a cancellation or a stopped turn left unfinished."""

_MODE_IDS = frozenset(mode for mode, _, _ in MODES)
_REPLAY_YIELD_EVERY = 64
"""Replayed records between two returns to the event loop (so cancels and answers get in)."""
_PIPE_BYTES = 1 << 20
"""Pipe capacity asked for on stdout (Linux caps it at ``/proc/sys/fs/pipe-max-size``)."""
_EOF = object()


def _ignore(message: JsonDict) -> None:
    """The headless ``emit`` of an ACP session: its wire is ``session/update`` instead."""


def _raw_lines(fd: int) -> Iterator[bytes]:
    """The lines of ``fd`` (each with its ``\\n``; the last may lack it), read in 1 MiB chunks."""
    pending: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            pending.append(chunk[start : end + 1])
            yield b"".join(pending)
            pending = []
            start = end + 1
        if start < len(chunk):
            pending.append(chunk[start:])
    if pending:
        yield b"".join(pending)


def _read_lines(
    stream: BinaryIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[object]
) -> None:
    """Read whole lines of any length in a thread and hand them to the event loop.

    A stream with a descriptor is read raw (``os.read``): a thread blocked inside a buffered
    reader holds its lock, and the interpreter aborts if it exits (SIGTERM, stdout closed)
    while the client still holds stdin open.
    """
    try:
        fd: int | None = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    try:
        for line in stream if fd is None else _raw_lines(fd):
            loop.call_soon_threadsafe(queue.put_nowait, line)
    except (OSError, ValueError) as exc:
        loop.call_soon_threadsafe(queue.put_nowait, exc)
    with contextlib.suppress(RuntimeError):  # the loop may be gone at interpreter exit
        loop.call_soon_threadsafe(queue.put_nowait, _EOF)


class AcpServer:
    """The ACP agent side: routes client messages and writes every frame."""

    def __init__(
        self,
        args: argparse.Namespace,
        build: BuildAgent,
        writer: WireWriter,
        connect_mcp: McpConnector | None = None,
    ) -> None:
        self.args = args
        self.build = build
        self.writer = writer
        self.connect_mcp = connect_mcp
        self.sessions: dict[str, AcpSession] = {}
        self._pending: dict[rpc.Id, asyncio.Future[rpc.Response]] = {}
        self._next_id = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._methods: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/prompt": self.prompt,
            "session/set_mode": self.set_mode,
        }

    # -- output -------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Write one frame (a no-op once the client stopped reading)."""
        self.writer.write(rpc.frame(message))

    def send_update(self, session_id: str, update: dict[str, Any]) -> None:
        """Write one ``session/update``, projected immediately before it is encoded."""
        try:
            update = project_acp_tool_call_update(update)
        except Exception as exc:  # keep the frame bounded and the turn alive, whatever happens
            warn(
                f"headwire: acp: projection failed ({type(exc).__name__}: {exc}); "
                "sending the marker instead"
            )
            update = {k: v for k, v in update.items() if k != "rawOutput"}
            update["content"] = [
                {"type": "content", "content": {"type": "text", "text": ACP_TRUNCATION_MARKER}}
            ]
        self.send(rpc.notification("session/update", {"sessionId": session_id, "update": update}))

    # -- agent -> client requests ---------------------------------------------------------------

    async def call_client(self, method: str, params: Any) -> Any:
        """Send a request to the client and wait for its result (its error raises RpcError)."""
        msg_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[rpc.Response] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            self.send(rpc.request(msg_id, method, params))
            answer = await future
        finally:
            self._pending.pop(msg_id, None)
        if answer.error is not None:
            error = answer.error
            code = error.get("code")
            raise rpc.RpcError(
                code if isinstance(code, int) else rpc.INTERNAL_ERROR,
                rpc.as_text(error.get("message") or "error"),
                error.get("data"),
            )
        return answer.result

    async def ask_permission(
        self, session: AcpSession, tool: Tool, call_id: str, args: dict[str, Any]
    ) -> Decision:
        """``session/request_permission`` for one call; a rejection ends the turn after it."""
        params = {
            "sessionId": session.id,
            "options": permission_options(tool, args),
            "toolCall": {
                "toolCallId": call_id,
                "status": "pending",
                "title": tool_title(tool.name, tool, args),
                "content": [],
                "locations": tool_locations(args, session.cwd),
                "kind": tool_kind(tool),
                "rawInput": args,
                "_meta": {"toolName": tool.name},
            },
        }
        try:
            result = await self.call_client("session/request_permission", params)
        except (rpc.RpcError, ConnectionError) as exc:
            warn(f"headwire: acp: permission request for {tool.name} failed: {exc}")
            session.stop_after = call_id
            return Decision(
                allow=False, message=f'Permission request failed for "{tool.name}": {exc}'
            )
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            option = outcome.get("optionId")
            if option == ALLOW_ONCE:
                return Decision(allow=True)
            if option == ALLOW_ALWAYS:
                rule = always_rule(tool, args)
                config = session.agent.config
                config.allowed_tools = (*config.allowed_tools, rule)
                return Decision(allow=True)
        session.stop_after = call_id
        return Decision(allow=False, message=f'Tool "{tool.name}" was canceled by the user.')

    def stop_turn(self, session: AcpSession, reason: str) -> None:
        """End the session's running turn now, answering its prompt with ``reason``."""
        task = session.prompt_task
        if task is None or task.done():
            return
        session.stop_reason = session.stop_reason or reason
        session.stopping = True
        session.agent.cancelled.set()
        task.cancel()

    # -- input --------------------------------------------------------------------------------

    def handle_line(self, line: bytes) -> None:
        """Route one input line: requests run as tasks; notifications and answers at once."""
        message = rpc.parse_message(line)
        if message is None:
            return
        if isinstance(message, rpc.BadMessage):
            warn(
                f"headwire: acp: bad input: {message.message}"
                + (f" ({message.data['details']})" if isinstance(message.data, dict) else "")
            )
            self.send(rpc.error_response(message.id, message.code, message.message, message.data))
        elif isinstance(message, rpc.Request):
            task = asyncio.create_task(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(message, rpc.Notification):
            self._notification(message)
        else:
            future = self._pending.get(message.id)
            if future is None or future.done():
                warn(f"headwire: acp: ignoring a response to unknown request id {message.id!r}")
            else:
                future.set_result(message)

    async def _answer(self, req: rpc.Request) -> None:
        handler = self._methods.get(req.method)
        try:
            if handler is None:
                raise rpc.RpcError.method_not_found(req.method)
            result = await handler(req.params)
        except rpc.RpcError as exc:
            self.send(rpc.error_response(req.id, exc.code, exc.message, exc.data))
        except Exception as exc:
            warn(f"headwire: acp: {req.method} failed:\n{traceback.format_exc()}")
            self.send(
                rpc.error_response(
                    req.id,
                    rpc.INTERNAL_ERROR,
                    "Internal error",
                    {"details": f"{type(exc).__name__}: {exc}"},
                )
            )
        else:
            self.send(rpc.response(req.id, result))

    def _notification(self, note: rpc.Notification) -> None:
        if note.method != "session/cancel":
            warn(f"headwire: acp: ignoring notification {note.method!r}")
            return
        params = note.params if isinstance(note.params, dict) else {}
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            # reprlib: a sessionId nested ~1,000 deep must not overflow the stack in repr()
            warn(f"headwire: acp: session/cancel for unknown session {reprlib.repr(session_id)}")
            return
        self.stop_turn(session, "cancelled")

    # -- methods ------------------------------------------------------------------------------

    async def initialize(self, params: Any) -> dict[str, Any]:
        """Negotiate: headwire speaks protocol version 1 whatever the client asked for."""
        version = object_params(params).get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            raise rpc.RpcError.invalid_params("protocolVersion must be an integer")
        return initialize_result(__version__)

    def _session(self, params: dict[str, Any]) -> AcpSession:
        session_id = string_param(params, "sessionId")
        session = self.sessions.get(session_id)
        if session is None:
            raise rpc.RpcError(
                rpc.INVALID_PARAMS, f"Session not found: {session_id}", {"sessionId": session_id}
            )
        return session

    async def _open(
        self, session_id: str, cwd: Path, servers: list[dict[str, Any]], history: Path | None
    ) -> AcpSession:
        ns = argparse.Namespace(**vars(self.args))
        ns.session_id, ns.resume, ns.continue_ = session_id, None, False
        try:
            agent, close = self.build(ns, cwd, _ignore)
        except ConfigError as exc:  # e.g. a bad settings file in the session's folder
            raise rpc.RpcError(rpc.INVALID_PARAMS, str(exc)) from None
        except Exception as exc:
            raise rpc.RpcError(rpc.INTERNAL_ERROR, f"cannot start the session: {exc}") from None
        session = AcpSession(session_id, cwd, agent, close, servers, history)
        agent.emit = _ignore
        agent.observer = SessionUpdates(self, session)

        async def ask(tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
            return await self.ask_permission(session, tool, call_id, args)

        agent.ask = ask
        if self.connect_mcp is not None and servers:
            try:
                tools, statuses, close_mcp = await self.connect_mcp(servers, cwd)
            except Exception:
                await close()
                raise
            for tool in tools:
                agent.tools[tool.name] = tool
            agent.config.mcp_servers = statuses
            close_agent = close

            async def close_both() -> None:
                try:
                    await close_mcp()
                finally:
                    await close_agent()

            session.close = close_both
        self.sessions[session_id] = session
        return session

    def _after_open(self, session: AcpSession) -> None:
        """Announce the commands right after the response (the response is sent first)."""
        asyncio.get_running_loop().call_soon(
            self.send_update, session.id, available_commands_update()
        )

    async def new_session(self, params: Any) -> dict[str, Any]:
        """``session/new``: a fresh session in ``cwd`` with the flags' model and tools."""
        p = object_params(params)
        cwd, servers = cwd_param(p), mcp_servers_param(p)
        session = await self._open(str(uuid4()), cwd, servers, None)
        self._after_open(session)
        return {"sessionId": session.id, "modes": mode_state(session.agent.config.approval_mode)}

    async def load_session(self, params: Any) -> dict[str, Any]:
        """``session/load``: replay the recording (streamed, projected), then continue it."""
        p = object_params(params)
        session_id, cwd, servers = string_param(p, "sessionId"), cwd_param(p), mcp_servers_param(p)
        try:
            path = find_session(data_dir(), cwd, session_id)
        except RecordingError as exc:
            raise rpc.RpcError(rpc.INVALID_PARAMS, str(exc), {"sessionId": session_id}) from None
        old = self.sessions.get(session_id)
        if old is not None:
            if old.prompt_task is not None and not old.prompt_task.done():
                raise rpc.RpcError(rpc.INVALID_PARAMS, "the session is running a prompt")
            del self.sessions[session_id]
            await old.close()
        session = await self._open(session_id, cwd, servers, path)
        replayer = Replayer(session.agent.tools, cwd)
        for count, record in enumerate(stream_records(path), 1):
            for update in replayer.updates(record):
                self.send_update(session_id, update)
            if count % _REPLAY_YIELD_EVERY == 0:
                await asyncio.sleep(0)
        for update in replayer.finish():
            self.send_update(session_id, update)
        self._after_open(session)
        return {"modes": mode_state(session.agent.config.approval_mode)}

    async def set_mode(self, params: Any) -> dict[str, Any]:
        """``session/set_mode``: the approval mode used from the next tool call on."""
        p = object_params(params)
        session = self._session(p)
        mode = string_param(p, "modeId")
        if mode not in _MODE_IDS:
            raise rpc.RpcError.invalid_params(f"unknown mode {mode!r}; one of {sorted(_MODE_IDS)}")
        session.agent.config.approval_mode = mode  # type: ignore[assignment]
        return {}

    async def prompt(self, params: Any) -> dict[str, Any]:
        """``session/prompt``: run one turn and answer with its stop reason."""
        p = object_params(params)
        session = self._session(p)
        text = prompt_text(p.get("prompt"))
        if session.prompt_task is not None and not session.prompt_task.done():
            raise rpc.RpcError(rpc.INVALID_PARAMS, "a prompt is already running in this session")
        agent = session.agent
        if session.history is not None:
            path, session.history = session.history, None
            try:
                agent.conversation = conversation_of(path) + agent.conversation
            except RecordingError as exc:
                warn(f"headwire: acp: {exc}")
        session.stop_reason = session.stop_after = None
        session.stopping = False
        task = asyncio.create_task(agent.run_turn(text))
        session.prompt_task = task
        try:
            await asyncio.wait({task})
        finally:
            if not task.done():  # the server is shutting down
                task.cancel()
            session.prompt_task = None
            self._close_open_calls(session)
        if agent.recorder is not None and agent.recorder.failed:
            warn(f"headwire: acp: session recording disabled: {agent.recorder.failed}")
        if task.cancelled():
            return {"stopReason": session.stop_reason or "cancelled"}
        error = task.exception()
        if error is not None:
            raise error
        result = task.result()
        if not result.get("is_error"):
            return {"stopReason": "end_turn"}
        if result.get("subtype") == "error_max_turns":
            return {"stopReason": "max_turn_requests"}
        details = result.get("error")
        message = details.get("message") if isinstance(details, dict) else None
        raise rpc.RpcError(rpc.INTERNAL_ERROR, str(message or "the turn failed"))

    def _close_open_calls(self, session: AcpSession) -> None:
        """Answer the tool calls a stopped turn left open (``failed``)."""
        calls, session.open_calls = session.open_calls, {}
        for call_id, name in calls.items():
            tool = session.agent.tools.get(name)
            self.send_update(
                session.id,
                tool_call_result(
                    call_id, name, tool, failed=True, text=CANCELLED_TEXT, display=None
                ),
            )

    # -- lifetime -----------------------------------------------------------------------------

    async def run(self, stream: BinaryIO) -> int:
        """Serve until the client closes stdin (or stops reading stdout); returns 0."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[object] = asyncio.Queue()
        threading.Thread(
            target=_read_lines, args=(stream, loop, lines), name="headwire-acp-stdin", daemon=True
        ).start()
        try:
            while True:
                item = await lines.get()
                if item is _EOF:
                    break
                if isinstance(item, Exception):
                    warn(f"headwire: acp: cannot read stdin: {item}")
                    break
                assert isinstance(item, bytes)
                self.handle_line(item)
                if self.writer.closed:
                    break
        except asyncio.CancelledError:  # SIGINT/SIGTERM: answer running prompts, close sessions
            await self.shutdown()
            raise
        await self.shutdown()
        return 0

    async def shutdown(self) -> None:
        """Cancel what still runs, fail our open requests, close every session."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the client closed the connection"))
        for session in self.sessions.values():
            self.stop_turn(session, "cancelled")
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10.0)
        for task in list(self._tasks):
            task.cancel()
        for session in list(self.sessions.values()):
            try:
                await session.close()
            except Exception as exc:
                warn(f"headwire: acp: closing session {session.id}: {exc}")
        self.sessions.clear()


def _widen_pipe(stream: BinaryIO) -> None:
    """Give a stdout pipe room for whole frames (Linux), so a ~100 KB frame is one write."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:
        return
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        fcntl.fcntl(stream.fileno(), setpipe, _PIPE_BYTES)


def run_acp(
    args: argparse.Namespace, build: BuildAgent, connect_mcp: McpConnector | None = None
) -> int:
    """Serve ACP on stdin/stdout until stdin closes; returns the exit code.

    The flags are checked once up front (a bad ``--script`` or model setup exits 2 with a
    note on stderr).  From then on ``sys.stdout`` points at stderr, so nothing but frames can
    reach the wire.  SIGINT or SIGTERM answers running prompts ``cancelled``, closes every
    session (tools and MCP servers stopped) and exits 130 or 143.
    """
    wire = sys.stdout.buffer
    sys.stdout = sys.stderr
    _widen_pipe(wire)
    writer = WireWriter(wire)

    async def main() -> int:
        probe_args = argparse.Namespace(**vars(args))
        probe_args.resume, probe_args.continue_ = None, False
        try:
            _agent, close = build(probe_args, Path.cwd(), _ignore)
        except Exception as exc:
            warn(f"headwire: {exc}")
            return ExitCode.USAGE
        await close()
        return await AcpServer(args, build, writer, connect_mcp).run(sys.stdin.buffer)

    try:
        return run_cancellable(main())
    except KeyboardInterrupt:
        warn("headwire: interrupted")
        return ExitCode.INTERRUPTED
