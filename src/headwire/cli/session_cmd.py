"""``--input-format stream-json --output-format stream-json``: a persistent session.

The client writes JSON lines on stdin and reads stream-JSON on stdout for as long as it likes
(Qwen Code's ``session.ts`` protocol, which the Qwen and Claude SDKs speak):

* ``user`` messages are queued first-in first-out and run one turn at a time on one agent (one
  conversation, one tool-result boundary); each turn writes ``system/init`` ... ``result``;
* ``control_request`` from the client (``initialize``, ``interrupt``, ``set_model``,
  ``set_permission_mode``, ``supported_commands``, ``mcp_server_status``,
  ``get_context_usage``, ``get_available_models``, ``get_usage_info``) gets a
  ``control_response``; an unknown subtype gets an error naming it;
* ``control_response`` answers the CLI's own ``can_use_tool`` requests, which time out as a
  denial; ``control_cancel_request`` cancels them;
* the first ``initialize`` or ``user`` message picks the mode: ``initialize`` selects SDK mode
  (permission requests go to the client), a ``user`` message selects direct mode (the approval
  mode decides alone, and control requests other than ``interrupt`` are refused).

A line that is not JSON, not an object or has no ``type`` gets an error ``control_response``
when it carried a ``request_id``, else an error ``result`` in its place in the turn queue (so
results stay one per submitted line, in order), and a stderr line naming its line number; the
session goes on.  Lines have no length limit.  At end of input the running turn finishes, queued
turns are drained, and the process exits 0.  If the reader of stdout goes away (``EPIPE``) the
running turn still finishes and is recorded, queued turns are dropped, and the process exits 0.
SIGINT or SIGTERM cancels the running turn (its error ``result`` is written and recorded),
drops queued turns, stops tools and MCP servers, and exits 130 or 143.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import reprlib
import sys
import threading
import time
import traceback
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import orjson

from headwire.cli.agent_cmd import build_agent_with_mcp
from headwire.cli.flags import CLAUDE_MODES
from headwire.errors import ExitCode, ProtocolError, UsageError
from headwire.io.signals import run_cancellable
from headwire.io.stdio import WireWriter, warn
from headwire.protocol import messages as m
from headwire.runtime.agent import Agent
from headwire.runtime.models.base import Model, ModelEvent, ModelRequest
from headwire.runtime.permissions import Decision, denial_message
from headwire.runtime.tools.base import ApprovalMode, Tool
from headwire.transports import StreamJsonTransport
from headwire.wire import dumps, loads

PERMISSION_TIMEOUT_S = 30.0
"""How long a ``can_use_tool`` request waits for the client before it counts as a denial."""

READ_CHUNK = 1 << 20
"""Bytes per ``read`` of stdin; lines are split by hand, so a line may be any length."""

PERMISSION_MODES: dict[str, ApprovalMode] = {
    "default": "default",
    "plan": "plan",
    "auto-edit": "auto-edit",
    "autoEdit": "auto-edit",
    "yolo": "yolo",
    **cast(dict[str, ApprovalMode], CLAUDE_MODES),
}
"""``set_permission_mode`` values: Qwen Code's approval modes and Claude Code's names."""


class RequestAborted(ProtocolError):
    """A CLI -> client request ended without an answer (input closed, cancelled by the client)."""


@dataclass(frozen=True, slots=True)
class _Rejected:
    """A queued stand-in for a bad input line: its turn is an error ``result``."""

    message: str


_EOF = object()
_CLOSED = object()


def _read_stdin(fd: int, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[object]) -> None:
    """Thread body: read ``fd`` in chunks, split lines on ``\\n``, hand them to the loop.

    Reads the raw descriptor (no Python buffer, so no lock is held if the process exits while
    this thread is blocked) and never limits a line's length.
    """

    def push(item: object) -> bool:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: the session ended
            return False
        return True

    pending: list[bytes] = []
    try:
        while True:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                break
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                piece = chunk[start:end]
                if pending:
                    pending.append(piece)
                    piece = b"".join(pending)
                    pending = []
                if not push(piece):
                    return
                start = end + 1
            if start < len(chunk):
                pending.append(chunk[start:])
    except OSError as exc:
        push(exc)
    if pending:
        push(b"".join(pending))
    push(_EOF)


class _InterruptPoint:
    """The session's model: the agent's model plus one suspension point before each call.

    A turn interrupted from inside itself (a ``can_use_tool`` denial with ``interrupt``) is
    cancelled at its next suspension; this makes sure the next model call is one, even for a
    model that answers without waiting (the scripted model).
    """

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        """The model name (``system/init``'s and ``assistant``'s ``model``)."""
        return self.inner.name

    @name.setter
    def name(self, value: str) -> None:
        self.inner.name = value

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Yield to the event loop once, then stream the inner model's events."""
        await asyncio.sleep(0)
        async for event in self.inner.stream(request):
            yield event


def _claude_compatible(message: m.JsonDict) -> m.JsonDict:
    """Add what Claude's SDK parser requires and Qwen Code omits: ``thinking.signature``."""
    if message.get("type") != "assistant":
        return message
    blocks = message["message"]["content"]
    if any(b.get("type") == "thinking" and "signature" not in b for b in blocks):
        message["message"]["content"] = [
            {**b, "signature": ""} if b.get("type") == "thinking" and "signature" not in b else b
            for b in blocks
        ]
    return message


class Session:
    """One persistent stream-JSON session: routes input lines, runs turns, answers control."""

    def __init__(
        self,
        args: argparse.Namespace,
        agent: Agent,
        writer: WireWriter,
        *,
        claude_compat: bool = False,
    ) -> None:
        self.args = args
        self.agent = agent
        self.writer = writer
        self.claude_compat = claude_compat
        self.transport = StreamJsonTransport(bool(args.include_partial_messages))
        self.mode: str | None = None  # "sdk" or "direct", fixed by the first initialize/user
        self.turns: asyncio.Queue[str | _Rejected | None] = asyncio.Queue()
        self.lines: asyncio.Queue[object] = asyncio.Queue()
        self.current: asyncio.Task[m.JsonDict] | None = None
        self.pending: dict[str, asyncio.Future[m.JsonDict]] = {}
        self.permission_timeout_s = PERMISSION_TIMEOUT_S
        self.input_closed = False
        self.lineno = 0
        self.usage_totals = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        self._degraded_reported = False
        agent.model = _InterruptPoint(agent.model)
        agent.emit = self.send
        agent.ask = self.ask_permission

    # -- output -------------------------------------------------------------------------------

    def send(self, message: m.JsonDict) -> None:
        """Write one message (a no-op once the client stopped reading)."""
        if self.writer.closed:
            return
        if self.claude_compat:
            message = _claude_compatible(message)
        if message.get("type") == "result":
            usage = message.get("usage") or {}
            for key in self.usage_totals:
                self.usage_totals[key] += int(usage.get(key) or 0)
        self.writer.write(self.transport.feed(message).stdout)
        if self.writer.closed:
            warn("headwire: stdout closed by the client; finishing the running turn")
            self.lines.put_nowait(_CLOSED)
        failed = self.agent.recorder.failed if self.agent.recorder else None
        if failed and not self._degraded_reported:
            self._degraded_reported = True
            warn(f"headwire: session recording disabled: {failed}")

    def _error_result(self, text: str) -> None:
        self.send(
            m.result_error(
                uuid=str(uuid.uuid4()),
                session_id=self.agent.config.session_id,
                duration_ms=0,
                duration_api_ms=0,
                num_turns=0,
                usage=m.usage_dict(0, 0),
                permission_denials=[],
                message=text,
            )
        )

    # -- CLI -> client requests -----------------------------------------------------------------

    def _send_cancel(self, request_id: str) -> None:
        self.send({"type": "control_cancel_request", "request_id": request_id})

    def _interrupt_current(self) -> None:
        task = self.current
        if task is not None and not task.done():
            # One step later, after the task's first step (already scheduled): a turn
            # interrupted before it started still writes its error result.
            asyncio.get_running_loop().call_soon(task.cancel)

    async def ask_permission(self, tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
        """Ask the client with ``can_use_tool``; no answer in time, or no client, is a denial."""
        if self.mode != "sdk":
            return Decision(
                allow=False, message=denial_message(tool, self.agent.config.approval_mode)
            )
        if self.input_closed or self.writer.closed:
            return Decision(
                allow=False,
                message=f'Permission to use "{tool.name}" was not granted: '
                "the client closed the session.",
            )
        request_id = str(uuid.uuid4())
        future: asyncio.Future[m.JsonDict] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        self.send(
            m.control_request(
                request_id,
                {
                    "subtype": "can_use_tool",
                    "tool_name": tool.name,
                    "tool_use_id": call_id,
                    "input": args,
                    "permission_suggestions": [
                        {
                            "type": "allow",
                            "label": "Allow once",
                            "description": f"Run {tool.name} with this input",
                        },
                        {"type": "deny", "label": "Deny", "description": f"Do not run {tool.name}"},
                    ],
                    "blocked_path": self._blocked_path(args),
                },
            )
        )
        try:  # asyncio.timeout, not wait_for: an interrupt must never be lost to a late answer
            async with asyncio.timeout(self.permission_timeout_s):
                body = await future
        except TimeoutError:
            self._send_cancel(request_id)
            return Decision(
                allow=False,
                message=f'Permission request for "{tool.name}" timed '
                f"out after {self.permission_timeout_s:g} s.",
            )
        except asyncio.CancelledError:
            self._send_cancel(request_id)
            raise
        except RequestAborted as exc:
            return Decision(allow=False, message=f'Permission request for "{tool.name}" {exc}.')
        finally:
            self.pending.pop(request_id, None)
        return self._decision(tool, body)

    def _decision(self, tool: Tool, body: m.JsonDict) -> Decision:
        if body.get("subtype") != "success":
            error = body.get("error")
            text = error.get("message") if isinstance(error, dict) else error
            return Decision(
                allow=False, message=_text(text or f'Permission to use "{tool.name}" was denied.')
            )
        answer = body.get("response")
        answer = answer if isinstance(answer, dict) else {}
        if answer.get("behavior") == "allow":
            updated = answer.get("updatedInput")
            return Decision(
                allow=True, updated_input=updated if isinstance(updated, dict) else None
            )
        interrupt = bool(answer.get("interrupt"))
        if interrupt:
            self._interrupt_current()
        message = answer.get("message")
        return Decision(
            allow=False, message=_text(message) if message else None, interrupt=interrupt
        )

    def _blocked_path(self, args: dict[str, Any]) -> str | None:
        """The path argument when it lies outside the workspace (Claude's meaning), else null."""
        raw = args.get("file_path") or args.get("absolute_path") or args.get("path")
        if not isinstance(raw, str) or not raw:
            return None
        config = self.agent.config
        expanded = os.path.expanduser(raw)
        real = Path(os.path.realpath(os.path.join(str(config.cwd), expanded)))
        for root in (config.cwd, *config.workspace_dirs):
            resolved = Path(os.path.realpath(str(root)))
            if real == resolved or real.is_relative_to(resolved):
                return None
        return str(real)

    def _fail_pending(self, reason: str) -> None:
        for future in self.pending.values():
            if not future.done():
                future.set_exception(RequestAborted(reason))

    # -- client -> CLI ------------------------------------------------------------------------

    def _control(self, request_id: str, request: m.JsonDict) -> None:
        subtype = request.get("subtype")
        config = self.agent.config
        response: m.JsonDict
        if subtype == "initialize":
            self._initialize(request)
            response = {
                "subtype": "initialize",
                "session_id": config.session_id,
                "capabilities": {
                    "can_handle_can_use_tool": True,
                    "can_handle_hook_callback": False,
                    "can_set_permission_mode": True,
                    "can_set_model": True,
                    "can_set_effort": False,
                    "can_get_context_usage": True,
                    "can_get_available_models": True,
                    "can_get_usage_info": True,
                    "can_handle_mcp_message": False,
                },
            }
        elif subtype == "interrupt":
            self._interrupt_current()
            response = {"subtype": "interrupt"}
        elif subtype == "set_model":
            model = request.get("model")
            if not isinstance(model, str) or not model:
                self.send(m.control_error(request_id, "set_model requires a model name"))
                return
            self.agent.model.name = model
            config.model_name = model
            response = {"subtype": "set_model", "model": model}
        elif subtype == "set_permission_mode":
            mode = PERMISSION_MODES.get(str(request.get("mode")))
            if mode is None:
                self.send(
                    m.control_error(request_id, f"Invalid permission mode: {request.get('mode')}")
                )
                return
            config.approval_mode = mode
            response = {"status": "updated", "mode": mode}
        elif subtype == "supported_commands":
            response = {"subtype": "supported_commands", "commands": []}
        elif subtype in ("mcp_server_status", "mcp_status"):
            servers = [dict(s) for s in config.mcp_servers]
            response = {
                "subtype": subtype,
                "status": {str(s.get("name")): s.get("status") for s in servers},
                "mcpServers": servers,
            }
        elif subtype == "get_context_usage":
            response = self._context_usage()
        elif subtype == "get_available_models":
            name = self.agent.model.name
            response = {"subtype": subtype, "models": [{"id": name, "name": name}]}
        elif subtype == "get_usage_info":
            response = {"subtype": subtype, "usage": dict(self.usage_totals)}
        else:
            self.send(m.control_error(request_id, f"Unknown control request subtype: {subtype}"))
            return
        self.send(m.control_success(request_id, response))

    def _initialize(self, request: m.JsonDict) -> None:
        """Apply what ``initialize`` carries that headwire honours; note what it ignores."""
        timeout = request.get("timeout")
        if isinstance(timeout, dict):
            ms = timeout.get("canUseTool")
            if isinstance(ms, int | float) and not isinstance(ms, bool) and ms > 0:
                self.permission_timeout_s = ms / 1000.0
        ignored = [
            key for key in ("hooks", "sdkMcpServers", "mcpServers", "agents") if request.get(key)
        ]
        if ignored:
            warn(
                "headwire: note: initialize fields not supported here, ignored: "
                f"{', '.join(ignored)}"
            )

    def _context_usage(self) -> m.JsonDict:
        """An estimate of the context size: characters / 4 over the conversation."""
        chars = 0
        for msg in self.agent.conversation:
            chars += len(str(msg.get("content") or ""))
            for call in msg.get("tool_calls") or []:
                chars += len(str(call.get("function", {}).get("arguments", "")))
        tokens = chars // 4
        return {
            "subtype": "get_context_usage",
            "categories": [{"name": "Messages", "tokens": tokens, "color": "default"}],
            "totalTokens": tokens,
            "messages": len(self.agent.conversation),
        }

    def _bad_line(self, reason: str, request_id: Any = None) -> None:
        warn(f"headwire: stdin line {self.lineno}: {reason}")
        if isinstance(request_id, str):
            self.send(m.control_error(request_id, f"stdin line {self.lineno}: {reason}"))
        else:
            self.turns.put_nowait(
                _Rejected(f"Failed to parse stream-json line {self.lineno}: {reason}")
            )

    def handle_line(self, raw: bytes) -> None:
        """Route one input line (``raw`` without its newline)."""
        self.lineno += 1
        if not raw.strip():
            return
        try:
            message = loads(raw)
        except orjson.JSONDecodeError as exc:
            self._bad_line(f"not valid JSON ({exc})")
            return
        if not isinstance(message, dict):
            self._bad_line(f"a message must be a JSON object, not {type(message).__name__}")
            return
        kind = message.get("type")
        try:
            if not isinstance(kind, str):
                self._bad_line('missing required "type" field', message.get("request_id"))
            elif kind == "control_response":
                self._on_control_response(message)
            elif kind == "control_cancel_request":
                self._on_cancel(message)
            elif kind == "control_request":
                self._on_control_request(message)
            elif kind == "user":
                self._on_user(message)
            else:
                warn(f"headwire: stdin line {self.lineno}: ignoring message of type {kind!r}")
        except RecursionError:  # str() of a member nested ~1,000 deep (orjson reads 1,024)
            self._bad_line("a value is nested too deeply", message.get("request_id"))

    def _on_control_response(self, message: m.JsonDict) -> None:
        body = message.get("response")
        if not isinstance(body, dict):
            warn(f"headwire: stdin line {self.lineno}: control_response without a response object")
            return
        request_id = body.get("request_id")  # never str() it: it may be nested ~1,000 deep
        future = self.pending.get(request_id) if isinstance(request_id, str) else None
        if future is None:
            warn(
                f"headwire: stdin line {self.lineno}: control_response for a request that is no "
                "longer pending, ignored"
            )
        elif not future.done():
            future.set_result(body)

    def _on_cancel(self, message: m.JsonDict) -> None:
        everything = "request_id" not in message or message.get("request_id") is None
        target = message.get("request_id")
        for request_id, future in list(self.pending.items()):
            if (everything or request_id == target) and not future.done():
                future.set_exception(RequestAborted("was cancelled by the client"))

    def _on_control_request(self, message: m.JsonDict) -> None:
        request = message.get("request")
        request_id = message.get("request_id")
        if not isinstance(request_id, str) or not request_id:
            self._bad_line("control_request needs a string request_id")
            return
        if not isinstance(request, dict):
            self._bad_line("control_request needs a request object", request_id)
            return
        subtype = request.get("subtype")
        if self.mode is None and subtype == "initialize":
            self.mode = "sdk"
        if self.mode == "direct" and subtype != "interrupt":
            warn(
                f"headwire: stdin line {self.lineno}: control request {subtype!r} refused in "
                "direct mode"
            )
            self.send(
                m.control_error(
                    request_id,
                    f"Control request {subtype} refused: this "
                    "session started without initialize (direct mode)",
                )
            )
            return
        self._control(request_id, request)

    def _on_user(self, message: m.JsonDict) -> None:
        if self.mode is None:
            self.mode = "direct"
        text = _prompt_text(message.get("message"))
        if text is None:
            self._bad_line("user message needs message.content (a string or a list of blocks)")
        elif not text.strip():
            warn(f"headwire: stdin line {self.lineno}: empty prompt ignored")
        else:
            self.turns.put_nowait(text)

    # -- the loops --------------------------------------------------------------------------

    async def run_turns(self) -> None:
        """Run queued prompts one at a time until the queue is closed with ``None``."""
        while True:
            item = await self.turns.get()
            if item is None:
                return
            if self.writer.closed:
                continue
            if isinstance(item, _Rejected):
                self._error_result(item.message)
                continue
            await self._run_turn(item)

    async def _run_turn(self, prompt: str) -> None:
        self.current = asyncio.create_task(self.agent.run_turn(prompt))
        try:
            await self.current
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
        except Exception as exc:  # a bug in a turn must not end the session silently
            warn("headwire: the turn failed:\n" + "".join(traceback.format_exception(exc)))
            self._error_result(f"Internal error: {type(exc).__name__}: {exc}")
        finally:
            self.current = None

    async def run(self, fd: int = 0) -> int:
        """Read ``fd`` until EOF (or until stdout closes), then drain the queued turns."""
        loop = asyncio.get_running_loop()
        threading.Thread(
            target=_read_stdin, args=(fd, loop, self.lines), daemon=True, name="headwire-stdin"
        ).start()
        worker = asyncio.create_task(self.run_turns())
        try:
            while True:
                item = await self.lines.get()
                if item is _EOF or item is _CLOSED:
                    break
                if isinstance(item, OSError):
                    warn(f"headwire: reading stdin failed: {item}")
                    break
                assert isinstance(item, bytes)
                self.handle_line(item)
        finally:
            self.input_closed = True
            self._fail_pending("got no answer: input closed")
            self.turns.put_nowait(None)
            if not worker.done() and (task := asyncio.current_task()) and task.cancelling():
                # SIGINT/SIGTERM: the running turn ends with its error result, queued ones go
                worker.cancel()
                await asyncio.wait({worker})
        await worker
        return 0


def _text(value: Any) -> str:
    """A client's value as text: a string as is, anything else by :func:`reprlib.repr`
    (bounded: ``str()`` of a value nested ~1,000 deep overflows the stack)."""
    return value if isinstance(value, str) else reprlib.repr(value)


def _prompt_text(message: Any) -> str | None:
    """The prompt of an input ``user`` message: a string, or blocks joined by newlines."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if (
                isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ):
                parts.append(block["text"])
            else:
                try:
                    parts.append(dumps(block).decode())
                except orjson.JSONEncodeError:  # nested deeper than orjson writes (255 levels)
                    return None
        return "\n".join(parts)
    return None


def _claude_client(args: argparse.Namespace) -> bool:
    """Whether Claude's SDK launched us (it sets the entry point and always passes --verbose)."""
    return bool(args.verbose) or os.environ.get("CLAUDE_CODE_ENTRYPOINT", "").startswith("sdk")


def _stdin_fd() -> int:
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return 0


def run_session(args: argparse.Namespace) -> int:
    """Run a persistent session; returns the exit code."""
    writer = WireWriter()

    def not_wired(message: m.JsonDict) -> None:
        raise RuntimeError("emit before the session was wired")

    async def main() -> int:
        agent, close = await build_agent_with_mcp(args, Path.cwd(), emit=not_wired)
        try:
            session = Session(args, agent, writer, claude_compat=_claude_client(args))
            return await session.run(_stdin_fd())
        finally:
            await close()

    started = time.monotonic()
    try:
        return run_cancellable(main())
    except UsageError as exc:
        warn(f"headwire: {exc}")
        return ExitCode.USAGE
    except KeyboardInterrupt:
        warn(f"headwire: interrupted after {time.monotonic() - started:.1f} s")
        return ExitCode.INTERRUPTED


__all__ = ["PERMISSION_TIMEOUT_S", "RequestAborted", "Session", "run_session"]
