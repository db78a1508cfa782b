"""The client: a persistent stream-JSON session with a CLI child process.

:class:`Session` spawns the CLI with ``--input-format stream-json --output-format stream-json
--channel=SDK`` (plus the flags of :class:`Options`, spelled as Qwen Code spells them, so the
same client drives ``headwire`` or the upstream ``qwen``), sends ``initialize``, and then:

* :meth:`Session.send` writes a ``user`` line; :meth:`Session.receive_turn` yields typed
  messages up to and including the turn's ``result``; :meth:`Session.turn` does both;
* control requests (:meth:`~Session.interrupt`, :meth:`~Session.set_model`,
  :meth:`~Session.set_permission_mode` ...) wait for their ``control_response``;
* the CLI's ``can_use_tool`` requests go to ``Options.can_use_tool`` (an async callback
  returning :class:`Allow` or :class:`Deny`); no callback, an exception or a timeout deny;
* :meth:`Session.close` ends input, lets the CLI finish, and reaps it (terminating it if it
  does not exit in time), also when the caller is cancelled.

A non-zero exit raises :class:`ProcessError` with the tail of the CLI's stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from headwire.errors import SDKError
from headwire.records import dataclass, field
from headwire.sdk.messages import (
    AssistantMessage,
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    JsonDict,
    Message,
    MessageParseError,
    ResultMessage,
    SystemMessage,
    ToolUseBlock,
    UserMessage,
    parse_message,
    user_input,
)
from headwire.sdk.transport import (
    STDERR_TAIL_BYTES,
    SubprocessTransport,
    TransportError,
    headwire_env,
    resolve_command,
)
from headwire.wire import dumps, loads


class ProcessError(SDKError):
    """The CLI exited with a non-zero code (``exit_code``); ``stderr`` is its tail."""

    def __init__(self, message: str, exit_code: int | None, stderr: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class ControlError(SDKError):
    """A control request failed (error ``control_response``, timeout, or the CLI went away)."""


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the tool run; ``updated_input`` (when given) replaces its arguments."""

    updated_input: JsonDict | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the tool; ``message`` becomes its error, ``interrupt`` ends the turn too."""

    message: str = "Denied by the client."
    interrupt: bool = False


@dataclass(frozen=True, slots=True)
class PermissionContext:
    """What a ``can_use_tool`` request carries besides the tool name and input."""

    tool_use_id: str
    suggestions: list[JsonDict]
    blocked_path: str | None
    request: JsonDict


PermissionCallback = Callable[[str, JsonDict, PermissionContext], Awaitable[Allow | Deny]]


@dataclass
class Options:
    """How to start the CLI and how to answer it.

    ``executable``: ``None`` runs headwire (``python -m headwire``); a path or a name on
    ``PATH`` (``"qwen"``) runs that CLI; a list is an argv prefix.  The other CLI options map
    to Qwen Code's flags (``approval_mode`` -> ``--approval-mode`` ...); ``extra_args`` are
    appended as given.
    """

    executable: str | Sequence[str] | None = None
    cwd: str | Path | None = None
    env: Mapping[str, str] | None = None
    model: str | None = None
    approval_mode: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    core_tools: Sequence[str] | None = None
    exclude_tools: Sequence[str] | None = None
    allowed_tools: Sequence[str] | None = None
    max_session_turns: int | None = None
    include_partial_messages: bool = False
    session_id: str | None = None
    resume: str | None = None
    continue_session: bool = False
    auth_type: str | None = None
    base_url: str | None = None
    """``--openai-base-url`` (every provider's base URL, as in Qwen Code)."""
    api_key: str | None = field(default=None, repr=False)
    """The provider's key, given to the CLI in its environment (``OPENAI_API_KEY``,
    ``ANTHROPIC_API_KEY`` or ``GEMINI_API_KEY`` after ``auth_type``), never on its command
    line, where other users of the machine could read it."""
    json_schema: str | Mapping[str, Any] | None = None
    """``--json-schema``: a JSON Schema (an object, JSON text or a file path) the final answer
    must match; the result's ``structured_output`` carries it."""
    max_budget_usd: float | None = None
    """``--max-budget-usd``."""
    max_duration_s: float | None = None
    """``--max-duration`` (seconds)."""
    fallback_models: Sequence[str] | None = None
    """``--fallback-model``."""
    tool_timeout_s: float | None = None
    """``--tool-timeout`` (seconds)."""
    settings: str | Mapping[str, Any] | None = None
    """``--settings``: an object, JSON text or a file path."""
    mcp_config: str | Mapping[str, Any] | None = None
    """``--mcp-config``: ``{"mcpServers": {...}}``, JSON text or a file path."""
    include_directories: Sequence[str] | None = None
    """``--include-directories``."""
    extra_args: Sequence[str] = ()
    can_use_tool: PermissionCallback | None = None
    permission_timeout_s: float = 60.0
    control_timeout_s: float = 60.0
    close_timeout_s: float = 10.0
    stderr: Callable[[str], None] | None = None
    stderr_limit: int = STDERR_TAIL_BYTES
    initialize: JsonDict = field(default_factory=dict)
    """Extra fields of the ``initialize`` request (e.g. ``{"timeout": {"canUseTool": ms}}``)."""


def _json_text(value: str | Mapping[str, Any] | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _number(value: float | None) -> str | None:
    return None if value is None else repr(value)


KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}
"""Where :attr:`Options.api_key` goes in the CLI's environment, by auth type."""


def child_env(options: Options) -> dict[str, str]:
    """The CLI's environment: this process's, then :attr:`Options.env`, then the API key."""
    env = {**os.environ, **(options.env or {})}
    if options.api_key:
        env[KEY_VARIABLES.get((options.auth_type or "openai").lower(), "OPENAI_API_KEY")] = (
            options.api_key
        )
    return env


def build_args(options: Options) -> list[str]:
    """The CLI flags for ``options`` (Qwen Code's spelling, which headwire shares)."""
    args = ["--input-format", "stream-json", "--output-format", "stream-json", "--channel=SDK"]
    pairs: list[tuple[str, str | None]] = [
        ("--model", options.model),
        ("--system-prompt", options.system_prompt),
        ("--append-system-prompt", options.append_system_prompt),
        ("--approval-mode", options.approval_mode),
        (
            "--max-session-turns",
            str(options.max_session_turns) if options.max_session_turns is not None else None,
        ),
        ("--core-tools", ",".join(options.core_tools) if options.core_tools else None),
        ("--exclude-tools", ",".join(options.exclude_tools) if options.exclude_tools else None),
        ("--allowed-tools", ",".join(options.allowed_tools) if options.allowed_tools else None),
        ("--auth-type", options.auth_type),
        ("--openai-base-url", options.base_url),
        ("--json-schema", _json_text(options.json_schema)),
        ("--max-budget-usd", _number(options.max_budget_usd)),
        ("--max-duration", _number(options.max_duration_s)),
        ("--fallback-model", ",".join(options.fallback_models or ()) or None),
        ("--tool-timeout", _number(options.tool_timeout_s)),
        ("--settings", _json_text(options.settings)),
        ("--mcp-config", _json_text(options.mcp_config)),
        (
            "--include-directories",
            ",".join(options.include_directories) if options.include_directories else None,
        ),
    ]
    for flag, value in pairs:
        if value is not None:
            args += [flag, value]
    if options.include_partial_messages:
        args.append("--include-partial-messages")
    if options.resume:
        args += ["--resume", options.resume]
    elif options.continue_session:
        args.append("--continue")
    elif options.session_id:
        args += ["--session-id", options.session_id]
    return [*args, *options.extra_args]


_REQUEST_IDS = itertools.count(1)


AGENT_TOOL_NAMES = frozenset({"agent", "task", "Agent", "Task"})


def track_agent_calls(message: Message, open_agents: set[str]) -> None:
    """Keep ``open_agents`` = the main agent's ``agent`` calls that have no result yet."""
    if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name in AGENT_TOOL_NAMES:
                open_agents.add(block.id)
    elif isinstance(message, UserMessage) and message.parent_tool_use_id is None:
        for block in message.tool_results:
            open_agents.discard(block.tool_use_id)


def _encode(message: JsonDict) -> bytes:
    return dumps(message) + b"\n"


class Session:
    """A persistent session with one CLI process (use ``async with``, or start/close)."""

    def __init__(self, options: Options | None = None) -> None:
        self.options = options or Options()
        self.session_id: str | None = self.options.resume or self.options.session_id
        self.server_info: JsonDict = {}
        self.skipped_lines = 0
        """stdout lines that were not JSON objects (skipped)."""
        self.transport: SubprocessTransport | None = None
        self._queue: asyncio.Queue[Message | None] = asyncio.Queue()  # None: the CLI exited
        self._pending: dict[str, asyncio.Future[ControlResponse]] = {}
        self._handlers: dict[str, asyncio.Task[None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._exit_error: SDKError | None = None
        self._closing = False
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> Session:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close(timeout_s=1.0 if exc_type is not None else None)

    async def start(self) -> JsonDict:
        """Spawn the CLI and send ``initialize``; returns its response (capabilities)."""
        opts = self.options
        argv = resolve_command(opts.executable) + build_args(opts)
        env = child_env(opts)
        if opts.executable is None:
            env = headwire_env(env)
        self.transport = SubprocessTransport(
            argv, cwd=opts.cwd, env=env, on_stderr=opts.stderr, stderr_limit=opts.stderr_limit
        )
        await self.transport.start()
        self._reader = asyncio.create_task(self._read())
        try:
            self.server_info = await self.request("initialize", hooks=None, **opts.initialize)
        except BaseException:
            await self.close(timeout_s=1.0)
            raise
        sid = self.server_info.get("session_id")
        if isinstance(sid, str) and sid:
            self.session_id = sid
        return self.server_info

    async def end_input(self) -> None:
        """Close the CLI's stdin: it finishes the queued turns and exits."""
        if self.transport is not None:
            await self.transport.end_input()

    async def close(self, timeout_s: float | None = None) -> None:
        """End input, wait for the CLI to exit (terminate it after ``timeout_s``), reap it."""
        if self._closed:
            return
        self._closed = True
        self._closing = True
        for task in self._handlers.values():
            task.cancel()
        try:
            if self.transport is not None:
                wait = self.options.close_timeout_s if timeout_s is None else timeout_s
                await self.transport.close(wait)
        finally:
            if self._reader is not None and not self._reader.done():
                self._reader.cancel()
                with contextlib.suppress(BaseException):
                    await self._reader
            self._fail_pending(ControlError("the session is closed"))

    @property
    def stderr(self) -> str:
        """The last part of the CLI's stderr."""
        return self.transport.stderr.text() if self.transport is not None else ""

    @property
    def returncode(self) -> int | None:
        """The CLI's exit code once it exited."""
        return self.transport.returncode if self.transport is not None else None

    # -- reading --------------------------------------------------------------------------------

    async def _read(self) -> None:
        assert self.transport is not None
        error: SDKError | None = None
        try:
            async for line in self.transport.lines():
                self._route(line)
            code = await self.transport.wait()
            if code != 0 and not self._closing:
                tail = self.stderr.strip()
                error = ProcessError(
                    f"{self.transport.argv[0]} exited with code {code}"
                    + (f": {tail[-4000:]}" if tail else ""),
                    code,
                    tail,
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken pipe or a bug: surface it to the consumer
            error = SDKError(f"reading from the CLI failed: {type(exc).__name__}: {exc}")
        finally:
            self._exit_error = error
            self._fail_pending(error or ControlError("the CLI exited before answering"))
            self._queue.put_nowait(None)

    def _route(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = parse_message(loads(line))
        except (orjson.JSONDecodeError, MessageParseError):
            self.skipped_lines += 1
            return
        if isinstance(message, ControlResponse):
            future = self._pending.get(message.request_id)
            if future is not None and not future.done():
                future.set_result(message)
        elif isinstance(message, ControlRequest):
            task = asyncio.create_task(self._answer(message))
            self._handlers[message.request_id] = task
            task.add_done_callback(functools.partial(self._forget, message.request_id))
        elif isinstance(message, ControlCancelRequest):
            for rid, task in list(self._handlers.items()):
                if message.request_id is None or rid == message.request_id:
                    task.cancel()
        else:
            if (
                isinstance(message, SystemMessage)
                and message.subtype == "init"
                and message.session_id
            ):
                self.session_id = message.session_id
            self._queue.put_nowait(message)

    def _forget(self, request_id: str, _task: asyncio.Task[None]) -> None:
        self._handlers.pop(request_id, None)

    async def messages(self) -> AsyncIterator[Message]:
        """Every message the CLI writes (control traffic excluded), until it exits."""
        while True:
            item = await self._queue.get()
            if item is None:
                self._queue.put_nowait(None)  # for any later reader
                if self._exit_error is not None:
                    raise self._exit_error
                return
            yield item

    async def receive_turn(self) -> AsyncIterator[Message]:
        """The messages of the next turn, through its own ``result``.

        A subagent's interim error ``result`` (:attr:`ResultMessage.interim`) is yielded and
        the turn goes on: it is marked with ``parent_tool_use_id``, or -- from a CLI that does
        not mark it -- recognised by upstream's shape (an error with ``num_turns`` 0 and
        ``duration_ms`` 0) while an ``agent`` call of the main agent has no result yet.
        """
        open_agents: set[str] = set()
        async for message in self.messages():
            track_agent_calls(message, open_agents)
            if isinstance(message, ResultMessage) and not message.interim and open_agents:
                message.interim = (
                    message.is_error and message.num_turns == 0 and message.duration_ms == 0
                )
            yield message
            if isinstance(message, ResultMessage) and not message.interim:
                return
        raise ProcessError(
            "the CLI exited before the turn ended"
            + (f": {self.stderr.strip()[-4000:]}" if self.stderr.strip() else ""),
            self.returncode,
            self.stderr,
        )

    # -- writing --------------------------------------------------------------------------------

    async def _write(self, message: JsonDict) -> None:
        if self.transport is None:
            raise SDKError("the session is not started")
        await self.transport.write(_encode(message))

    async def send(self, prompt: str | list[JsonDict]) -> None:
        """Queue a turn: write one ``user`` line."""
        await self._write(user_input(prompt, self.session_id or ""))

    async def turn(self, prompt: str | list[JsonDict]) -> AsyncIterator[Message]:
        """Send ``prompt`` and yield the turn's messages through its ``result``."""
        await self.send(prompt)
        async for message in self.receive_turn():
            yield message

    async def request(self, subtype: str, **fields: Any) -> JsonDict:
        """Send a ``control_request`` and return its success payload (raises
        :class:`ControlError` on an error response, a timeout, or the CLI exiting)."""
        request_id = f"req_{next(_REQUEST_IDS)}_{uuid.uuid4().hex[:8]}"
        future: asyncio.Future[ControlResponse] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            try:
                await self._write(
                    {
                        "type": "control_request",
                        "request_id": request_id,
                        "request": {"subtype": subtype, **fields},
                    }
                )
            except TransportError as exc:
                raise ControlError(f"{subtype}: {exc}") from exc
            try:
                async with asyncio.timeout(self.options.control_timeout_s):
                    answer = await future
            except TimeoutError:
                raise ControlError(
                    f"{subtype}: no answer after {self.options.control_timeout_s:g} s"
                ) from None
        finally:
            self._pending.pop(request_id, None)
        if answer.subtype != "success":
            raise ControlError(f"{subtype} failed: {answer.error or 'unknown error'}")
        return answer.response or {}

    def _fail_pending(self, error: SDKError) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: no "never retrieved" warning if nobody waits

    async def interrupt(self) -> None:
        """End the running turn (its ``result`` is an error, "Operation cancelled.")."""
        await self.request("interrupt")

    async def set_model(self, model: str) -> JsonDict:
        """Use ``model`` from the next model call on."""
        return await self.request("set_model", model=model)

    async def set_permission_mode(self, mode: str) -> JsonDict:
        """Change the approval mode (``default``, ``plan``, ``auto-edit``, ``yolo``)."""
        return await self.request("set_permission_mode", mode=mode)

    async def supported_commands(self) -> JsonDict:
        """The CLI's slash commands."""
        return await self.request("supported_commands")

    async def mcp_server_status(self) -> JsonDict:
        """The MCP servers' connection status."""
        return await self.request("mcp_server_status")

    async def get_context_usage(self) -> JsonDict:
        """How much of the context the conversation uses."""
        return await self.request("get_context_usage")

    # -- answering the CLI -----------------------------------------------------------------------

    async def _answer(self, request: ControlRequest) -> None:
        try:
            if request.subtype == "can_use_tool":
                body = await self._permission(request.request)
            elif request.subtype == "mcp_message":
                raise SDKError("mcp_message is not supported by headwire.sdk")
            else:
                raise SDKError(f"Unknown control request subtype: {request.subtype}")
            response: JsonDict = {
                "subtype": "success",
                "request_id": request.request_id,
                "response": body,
            }
        except asyncio.CancelledError:
            raise  # cancelled by the CLI (control_cancel_request) or by close(): no answer
        except Exception as exc:
            response = {"subtype": "error", "request_id": request.request_id, "error": str(exc)}
        with contextlib.suppress(SDKError, TransportError):
            await self._write({"type": "control_response", "response": response})

    async def _permission(self, request: JsonDict) -> JsonDict:
        tool_name = str(request.get("tool_name", ""))
        tool_input = request.get("input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        callback = self.options.can_use_tool
        if callback is None:
            return {"behavior": "deny", "message": "No permission callback: denied."}
        suggestions = request.get("permission_suggestions")
        blocked = request.get("blocked_path")
        context = PermissionContext(
            tool_use_id=str(request.get("tool_use_id", "")),
            suggestions=[s for s in suggestions if isinstance(s, dict)]
            if isinstance(suggestions, list)
            else [],
            blocked_path=blocked if isinstance(blocked, str) else None,
            request=request,
        )
        try:
            async with asyncio.timeout(self.options.permission_timeout_s):
                result = await callback(tool_name, tool_input, context)
        except TimeoutError:
            return {"behavior": "deny", "message": "The permission callback timed out."}
        except Exception as exc:
            return {"behavior": "deny", "message": f"The permission callback failed: {exc}"}
        if isinstance(result, Allow):
            updated = result.updated_input if result.updated_input is not None else tool_input
            return {"behavior": "allow", "updatedInput": updated}
        if isinstance(result, Deny):
            body: JsonDict = {"behavior": "deny", "message": result.message}
            if result.interrupt:
                body["interrupt"] = True
            return body
        return {
            "behavior": "deny",
            "message": f"The permission callback returned {type(result).__name__}, "
            "not Allow or Deny.",
        }


async def query(
    prompt: str | list[JsonDict], options: Options | None = None
) -> AsyncIterator[Message]:
    """One turn: start a session, send ``prompt``, yield its messages through the ``result``,
    then let the CLI exit (it is reaped; on cancellation or early exit it is terminated)."""
    session = Session(options)
    finished = False
    try:
        await session.start()
        async for message in session.turn(prompt):
            yield message
        finished = True
    finally:
        await session.close(timeout_s=None if finished else 1.0)
    if finished and session.returncode not in (0, None):
        raise ProcessError(
            f"the CLI exited with code {session.returncode}", session.returncode, session.stderr
        )


__all__ = [
    "Allow",
    "ControlError",
    "Deny",
    "Options",
    "PermissionCallback",
    "PermissionContext",
    "ProcessError",
    "SDKError",
    "Session",
    "build_args",
    "query",
]
