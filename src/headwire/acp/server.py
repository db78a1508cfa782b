"""``headwire --acp``: an Agent Client Protocol agent over stdio (JSON-RPC 2.0, protocol 1).

stdin carries the client's messages and stdout only protocol frames, one JSON object per line
(:mod:`headwire.protocol.jsonrpc`); diagnostics go to stderr.  The connection's protocol state
(lifecycle, ids in flight) is the sans-IO :class:`~headwire.protocol.acp_peer.AcpPeer`; this
module performs what it decides.  After ``initialize`` the client calls:

* ``initialize`` -> capabilities (``loadSession``, text and embedded-context prompts, MCP over
  stdio and HTTP), ``agentInfo``, no ``authMethods``;
* ``session/new`` ``{cwd, mcpServers}`` -> ``{sessionId, modes, models, configOptions}``, then an
  ``available_commands_update``; the MCP servers are kept on the session (and connected by
  ``connect_mcp`` when one is given);
* ``session/load`` ``{sessionId, cwd, mcpServers}``: the recording is replayed as the
  ``session/update`` notifications the live session sent (the same projection,
  :mod:`headwire.acp.event_updates`; each prompt as a ``user_message_chunk``), streamed record
  by record (:mod:`headwire.acp.replay`), then answered with ``{modes, models,
  configOptions}``; the session continues where it stopped;
* ``session/prompt`` ``{sessionId, prompt}``: one agent turn; text deltas, thoughts and tool
  calls stream as ``session/update``; the answer is ``{stopReason}`` (``end_turn``,
  ``cancelled``, ``max_turn_requests``, ``max_tokens``, ``refusal``: :func:`prompt_response`); a
  model failure is an error response;
* ``session/set_mode`` ``{sessionId, modeId}``: the approval mode;
* ``session/set_model`` ``{sessionId, modelId}`` (unstable in ACP; Qwen Code and Zed speak it):
  the model from the next request on, switched as an SDK's ``set_model`` switches it;
* ``session/set_config_option`` ``{sessionId, configId, value}``: ``mode``, ``model`` or
  ``output_style``, answered
  with every option's value (``session/new`` and ``session/load`` list the options, with the
  ``models`` the session can switch to);
* ``session/cancel`` (notification): stops the running prompt, its tool too (the shell's
  process group is killed), and that prompt answers ``cancelled``.

The agent asks the client with ``session/request_permission`` before a tool that needs approval
(options allow always / allow once / reject); a rejection or a ``cancelled`` outcome denies the
call and ends the turn after it, as upstream does.

Every tool result reaches the client through the ACP boundary
(:func:`headwire.boundary.acp_tool_result_update`, which applies
:func:`~headwire.projection.project_acp_tool_call_update`: multi-block fair share, A2UI tools
exempt), live and in replay alike; :meth:`AcpServer.send_update` only frames.  The recording
stays unprojected.

Bad input never stops the server: a line that is not JSON gets ``-32700`` (id ``null``), a
message that is not JSON-RPC ``-32600``, an unknown method ``-32601`` (``data.method``), a
request before ``initialize`` ``-32002``, bad params or an unknown session ``-32602``; an
unknown notification is ignored with a note on stderr.  Lines have no length limit.
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
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from uuid import uuid4

from headwire import __version__
from headwire import events as ev
from headwire.acp.event_updates import CANCELLED_TEXT
from headwire.acp.replay import Replayer, replay
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
    config_options,
    initialize_result,
    mode_state,
    model_state,
    permission_options,
    tool_kind,
    tool_locations,
    tool_title,
)
from headwire.errors import ConfigError, ExitCode, UsageError
from headwire.io.lines import ReadError, fd_lines, stdin_fd
from headwire.io.signals import run_cancellable
from headwire.io.stdio import divert_stdout, warn
from headwire.io.writer import WireWriter
from headwire.protocol import acp_peer as peer
from headwire.protocol import jsonrpc as rpc
from headwire.protocol.messages import JsonDict
from headwire.runtime.agent.loop import Agent
from headwire.runtime.config.output_styles import OutputStyle, resolve_style
from headwire.runtime.policy.permissions import Decision
from headwire.runtime.store.recording import (
    Recorder,
    RecordingError,
    conversation_of,
    find_session,
    open_recording,
)
from headwire.runtime.store.storage import data_dir
from headwire.runtime.tools.base import Tool

__all__ = ["AcpServer", "AcpSession", "OpenRuntime", "SessionRuntime", "prompt_text", "run_acp"]


class SessionRuntime(Protocol):
    """What the server needs of a session's object graph (:class:`headwire.cli.build.Runtime`)."""

    agent: Agent
    events: ev.Broadcast
    recorder: Recorder

    async def aclose(self) -> None:
        """Take the session down (MCP servers, model, recording)."""
        ...


OpenRuntime = Callable[..., Awaitable[SessionRuntime]]
"""``open(args, cwd, session_id, *, ask, acp_servers)``: builds one session's graph (the CLI's
:func:`headwire.cli.build.build_runtime`, injected: this layer does not import the CLI)."""

_MODE_IDS = frozenset(mode for mode, _, _ in MODES)


def session_state(agent: Agent) -> dict[str, Any]:
    """``modes``, ``models`` and ``configOptions`` of a session, as ``session/new`` and
    ``session/load`` answer them."""
    mode, model, choices = agent.config.approval_mode, agent.model.name, agent.model_choices()
    return {
        "modes": mode_state(mode),
        "models": model_state(model, choices),
        "configOptions": config_options(mode, model, choices, _style_option(agent)),
    }


def _offered_styles(agent: Agent) -> dict[str, OutputStyle] | None:
    """The output styles an editor may pick for this session (``None``: the option is not
    offered: a replaced system prompt takes no style).  ``Learning`` waits for the user at
    the keyboard, which an editor's prompt is not, so it is left out, as in a headless run."""
    read = agent.config.style_choices
    if read is None or agent.config.system_prompt is not None:
        return None
    return {key: s for key, s in read().items() if not s.interactive_only}


def _style_option(agent: Agent) -> tuple[str, list[tuple[str, str, str]]] | None:
    styles = _offered_styles(agent)
    if styles is None:
        return None
    current = agent.config.output_style
    offered = [("default", "Default", "No style: the built-in prompt")]
    offered += [(s.name, s.name, s.description) for s in styles.values()]
    return (current.name if current is not None else "default"), offered


def _set_style(agent: Agent, value: str) -> None:
    styles = _offered_styles(agent)
    if styles is None:
        raise rpc.RpcError.invalid_params(
            "no output style applies: --system-prompt replaces the prompt"
        )
    style, note = resolve_style(value, styles, interactive=False)
    if note is not None:
        raise rpc.RpcError.invalid_params(note)
    agent.config.output_style = style


def _set_mode(agent: Agent, mode: str) -> None:
    if mode not in _MODE_IDS:
        raise rpc.RpcError.invalid_params(f"unknown mode {mode!r}; one of {sorted(_MODE_IDS)}")
    agent.config.approval_mode = mode  # type: ignore[assignment]


def _set_model(agent: Agent, model: str) -> None:
    if not model.strip():
        raise rpc.RpcError.invalid_params("modelId: expected a model name")
    try:
        agent.switch_model(model)
    except ConfigError as exc:  # a catalog entry that cannot run here: nothing changed
        raise rpc.RpcError.invalid_params(str(exc)) from None


_PIPE_BYTES = 1 << 20
"""Pipe capacity asked for on stdout (Linux caps it at ``/proc/sys/fs/pipe-max-size``)."""
_SHUTDOWN_WAIT_S = 10.0


def prompt_response(finished: ev.TurnFinished) -> dict[str, Any]:
    """``session/prompt``'s answer for a turn that ended (not cancelled).

    An answer is ``end_turn``, or ``max_tokens``/``refusal`` when the model's last call stopped
    for that reason; a run limit (turns, budget, duration, tool calls) is
    ``max_turn_requests``, as claude-agent-acp maps Claude Code's limits; a model failure or a
    bug is a JSON-RPC error carrying its message.
    """
    if finished.error is None:
        if finished.stop_reason in ("max_tokens", "refusal"):
            return {"stopReason": finished.stop_reason}
        return {"stopReason": "end_turn"}
    if finished.limit is not None:
        return {"stopReason": "max_turn_requests"}
    raise rpc.RpcError(rpc.INTERNAL_ERROR, finished.error or "the turn failed")


class AcpServer:
    """The ACP agent side: performs what the protocol state machine decides, runs sessions."""

    def __init__(
        self, args: argparse.Namespace, open_runtime: OpenRuntime, writer: WireWriter
    ) -> None:
        self.args = args
        self.open_runtime = open_runtime
        self.writer = writer
        self.peer = peer.AcpPeer()
        self.sessions: dict[str, AcpSession] = {}
        self._waiting: dict[int, asyncio.Future[rpc.Response]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._loads: set[asyncio.Task[Any]] = set()
        """Running ``session/load`` replays (stopped at once on shutdown)."""
        self._methods: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/prompt": self.prompt,
            "session/set_mode": self.set_mode,
            "session/set_model": self.set_model,
            "session/set_config_option": self.set_config_option,
        }

    # -- output -------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Write one frame (a no-op once the client stopped reading)."""
        self.writer.write(rpc.frame(message))

    def send_update(self, session_id: str, update: dict[str, Any]) -> None:
        """Write one ``session/update`` (tool results arrive here already projected)."""
        self.send(rpc.notification("session/update", {"sessionId": session_id, "update": update}))

    # -- input --------------------------------------------------------------------------------

    def handle_line(self, line: bytes) -> None:
        """Route one input line: requests run as tasks; notifications and answers at once."""
        self.perform(self.peer.receive_line(line))

    def perform(self, actions: Sequence[peer.Action]) -> None:
        """Carry out what the protocol state machine decided."""
        for action in actions:
            if isinstance(action, peer.SendFrame):
                self.send(action.message)
            elif isinstance(action, peer.Warn):
                warn(f"headwire: acp: {action.text}")
            elif isinstance(action, peer.Dispatch):
                task = asyncio.create_task(self._answer(action.request))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            elif isinstance(action, peer.Cancel):
                self._cancel(action.session_id)
            elif isinstance(action, peer.Resolve):
                future = self._waiting.get(action.request_id)
                if future is not None and not future.done():
                    future.set_result(action.response)
            elif isinstance(action, peer.Abort):
                future = self._waiting.get(action.request_id)
                if future is not None and not future.done():
                    future.set_exception(ConnectionError("the client closed the connection"))

    async def _answer(self, req: rpc.Request) -> None:
        handler = self._methods[req.method]
        try:
            result = await handler(req.params)
        except rpc.RpcError as exc:
            self.perform([self.peer.respond_error(req.id, exc)])
        except Exception as exc:
            warn(f"headwire: acp: {req.method} failed:\n{traceback.format_exc()}")
            error = rpc.RpcError(
                rpc.INTERNAL_ERROR, "Internal error", {"details": f"{type(exc).__name__}: {exc}"}
            )
            self.perform([self.peer.respond_error(req.id, error)])
        else:
            self.perform([self.peer.respond(req.id, result)])

    def _cancel(self, session_id: Any) -> None:
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            # reprlib: a sessionId nested ~1,000 deep must not overflow the stack in repr()
            warn(f"headwire: acp: session/cancel for unknown session {reprlib.repr(session_id)}")
            return
        self.stop_turn(session, "cancelled")

    # -- agent -> client requests ---------------------------------------------------------------

    async def call_client(self, method: str, params: Any) -> Any:
        """Send a request to the client and wait for its result (its error raises RpcError)."""
        msg_id, frame = self.peer.request(method, params)
        future: asyncio.Future[rpc.Response] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        try:
            self.perform([frame])
            answer = await future
        finally:
            self._waiting.pop(msg_id, None)
            self.peer.forget(msg_id)
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
        if session.recorder is not None:  # session/load replays the turn up to here
            session.recorder.record("turn_stopped", reason=reason)
        session.agent.cancelled.set()
        task.cancel()

    # -- methods ------------------------------------------------------------------------------

    async def initialize(self, params: Any) -> dict[str, Any]:
        """Negotiate: headwire speaks protocol version 1 whatever the client asked for (the
        params were checked by the protocol state machine)."""
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
        session: AcpSession | None = None

        async def ask(tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
            assert session is not None
            return await self.ask_permission(session, tool, call_id, args)

        try:
            runtime = await self.open_runtime(
                self.args, cwd, session_id, ask=ask, acp_servers=servers
            )
        except ConfigError as exc:  # e.g. a bad settings file in the session's folder
            raise rpc.RpcError(rpc.INVALID_PARAMS, str(exc)) from None
        except (ValueError, OSError) as exc:
            raise rpc.RpcError(rpc.INTERNAL_ERROR, f"cannot start the session: {exc}") from None
        session = AcpSession(
            session_id,
            cwd,
            runtime.agent,
            runtime.aclose,
            servers,
            history,
            recorder=runtime.recorder,
        )
        info: Callable[[str], JsonDict | None] | None = None
        if getattr(self.args, "include_bound_records", False):
            from headwire.runtime.trajectory import artifact_info

            info = artifact_info
        runtime.events.subscribe(SessionUpdates(self, session, runtime.agent.tools, info))
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
        return {"sessionId": session.id, **session_state(session.agent)}

    async def load_session(self, params: Any) -> dict[str, Any]:
        """``session/load``: replay the recording (streamed, projected), then continue it."""
        p = object_params(params)
        session_id, cwd, servers = string_param(p, "sessionId"), cwd_param(p), mcp_servers_param(p)
        try:
            path = find_session(data_dir(), cwd, session_id)
            os.close(open_recording(path))  # a FIFO or device is refused here, never opened
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
        current = asyncio.current_task()
        assert current is not None  # a request handler always runs in its own task
        self._loads.add(current)
        try:
            await replay(path, replayer, lambda u: self.send_update(session_id, u), self.writer)
        finally:
            self._loads.discard(current)
        self._after_open(session)
        return session_state(session.agent)

    async def set_mode(self, params: Any) -> dict[str, Any]:
        """``session/set_mode``: the approval mode used from the next tool call on."""
        p = object_params(params)
        _set_mode(self._session(p).agent, string_param(p, "modeId"))
        return {}

    async def set_model(self, params: Any) -> dict[str, Any]:
        """``session/set_model``: the model from the next request on (ACP's unstable method,
        as Qwen Code and Zed speak it): any name the run's provider takes."""
        p = object_params(params)
        _set_model(self._session(p).agent, string_param(p, "modelId"))
        return {}

    async def set_config_option(self, params: Any) -> dict[str, Any]:
        """``session/set_config_option``: ``mode``, ``model`` or ``output_style``, to one of
        the option's values; the answer is every option with its value after the change."""
        p = object_params(params)
        agent = self._session(p).agent
        config_id, value = string_param(p, "configId"), string_param(p, "value")
        if config_id == "mode":
            _set_mode(agent, value)
        elif config_id == "model":
            offered = [model_id for model_id, _ in agent.model_choices()]
            if value not in offered:
                raise rpc.RpcError.invalid_params(f"unknown model {value!r}; one of {offered}")
            _set_model(agent, value)
        elif config_id == "output_style":
            _set_style(agent, value)
        else:
            ids = [o["id"] for o in session_state(agent)["configOptions"]]
            shown = config_id if len(config_id) <= 64 else config_id[:64] + "…"
            raise rpc.RpcError.invalid_params(f"unknown configId {shown!r}; one of {ids}")
        return {"configOptions": session_state(agent)["configOptions"]}

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
        recorder = session.recorder
        if recorder is not None and recorder.failed:
            warn(f"headwire: acp: session recording disabled: {recorder.failed}")
        if task.cancelled():
            return {"stopReason": session.stop_reason or "cancelled"}
        error = task.exception()
        if error is not None:
            raise error
        return prompt_response(task.result())

    def _close_open_calls(self, session: AcpSession) -> None:
        """Answer the tool calls a stopped turn left open (``failed``)."""
        if session.updates is not None:
            session.updates.close_open_calls(CANCELLED_TEXT)

    # -- lifetime -----------------------------------------------------------------------------

    async def run(self, fd: int = 0) -> int:
        """Serve until the client closes stdin (or stops reading stdout); returns 0."""
        loop = asyncio.get_running_loop()
        stdout_closed = loop.create_future()

        def closed() -> None:
            if not stdout_closed.done():
                stdout_closed.set_result(None)

        self.writer.on_closed = closed
        reader = asyncio.create_task(self._read(fd))
        try:
            await asyncio.wait({reader, stdout_closed}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # SIGINT/SIGTERM: answer running prompts, close sessions
            reader.cancel()
            await self.shutdown()
            raise
        finally:
            stdout_closed.cancel()
        if not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        await self.shutdown()
        return 0

    async def _read(self, fd: int) -> None:
        try:
            async for line in fd_lines(fd):
                self.handle_line(line)
                if self.writer.closed:
                    return
        except ReadError as exc:
            warn(f"headwire: acp: cannot read stdin: {exc}")

    async def shutdown(self) -> None:
        """Cancel what still runs, fail our open requests, close every session."""
        self.perform(self.peer.end_of_input())
        for load in list(self._loads):  # a replay has nothing to finish: stop it now
            load.cancel()
        for session in self.sessions.values():
            self.stop_turn(session, "cancelled")
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=_SHUTDOWN_WAIT_S)
        for task in list(self._tasks):
            task.cancel()
        for session in list(self.sessions.values()):
            try:
                await session.close()
            except Exception as exc:
                warn(f"headwire: acp: closing session {session.id}: {exc}")
        self.sessions.clear()
        await self.writer.drain()


def _widen_pipe(stream: BinaryIO) -> None:
    """Give a stdout pipe room for whole frames (Linux), so a ~100 KB frame is one write."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:
        return
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        fcntl.fcntl(stream.fileno(), setpipe, _PIPE_BYTES)


def run_acp(
    args: argparse.Namespace,
    open_runtime: OpenRuntime,
    check_flags: Callable[[argparse.Namespace], Awaitable[None]],
) -> int:
    """Serve ACP on stdin/stdout until stdin closes; returns the exit code.

    The flags are checked once up front (a bad ``--script`` or model setup exits 2 with a
    note on stderr).  From then on ``sys.stdout`` points at stderr, so nothing but frames can
    reach the wire.  SIGINT or SIGTERM answers running prompts ``cancelled``, closes every
    session (tools and MCP servers stopped) and exits 130 or 143.
    """
    wire = sys.stdout.buffer
    divert_stdout()
    _widen_pipe(wire)
    writer = WireWriter(wire)

    async def main() -> int:
        try:
            await check_flags(args)
        except (UsageError, ValueError) as exc:
            warn(f"headwire: {exc}")
            return ExitCode.USAGE
        return await AcpServer(args, open_runtime, writer).run(stdin_fd())

    try:
        return run_cancellable(main())
    except KeyboardInterrupt:
        warn("headwire: interrupted")
        return ExitCode.INTERRUPTED
    finally:
        writer.close()
