"""``--input-format stream-json --output-format stream-json``: a persistent session.

The client writes JSON lines on stdin and reads stream-JSON on stdout for as long as it likes:

* ``user`` messages are queued first-in first-out and run one turn at a time on one agent (one
  conversation, one tool-result boundary);
* ``control_request`` from the client (``initialize``, ``interrupt``, ``set_model``,
  ``set_permission_mode``, ``supported_commands``, ``mcp_server_status``,
  ``get_context_usage``) get a ``control_response``; an unknown subtype gets an error naming it;
* ``control_response`` answers the CLI's own requests (``can_use_tool``), which time out as a
  denial; ``control_cancel_request`` cancels them;
* the first message picks the mode: ``initialize`` selects SDK mode (permission requests go to
  the client), a ``user`` message selects direct mode (the approval mode decides alone).

A line that is not JSON, not an object or has no ``type`` gets an error ``result`` (or an error
``control_response`` when it carried a ``request_id``) and a stderr line naming its line number;
the session goes on.  Lines have no length limit.  At end of input the queued turns are drained
and the process exits 0; if the reader of stdout goes away, the session ends after the running
turn is recorded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import threading
import uuid
from pathlib import Path
from typing import Any

import orjson

from headwire import __version__
from headwire.cli.agent_cmd import UsageError, build_agent
from headwire.io.stdio import WireWriter, warn
from headwire.protocol import messages as m
from headwire.runtime.agent import Agent
from headwire.runtime.permissions import Decision
from headwire.runtime.tools.base import Tool
from headwire.transports import StreamJsonTransport

PERMISSION_TIMEOUT_S = 30.0
CONTROL_MODES = {
    "default": "default", "plan": "plan", "auto-edit": "auto-edit", "autoEdit": "auto-edit",
    "yolo": "yolo", "acceptEdits": "auto-edit", "bypassPermissions": "yolo",
}  # fmt: skip

_EOF = object()


def _stdin_lines(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[object]) -> None:
    """Read stdin lines in a thread (no length limit) and hand them to the event loop."""
    import sys

    stream = sys.stdin.buffer
    try:
        for line in stream:
            loop.call_soon_threadsafe(queue.put_nowait, line)
    except (OSError, ValueError) as exc:
        loop.call_soon_threadsafe(queue.put_nowait, exc)
    loop.call_soon_threadsafe(queue.put_nowait, _EOF)


class Session:
    """One persistent stream-JSON session."""

    def __init__(self, args: argparse.Namespace, agent: Agent, writer: WireWriter) -> None:
        self.args = args
        self.agent = agent
        self.writer = writer
        self.transport = StreamJsonTransport(args.include_partial_messages)
        self.mode: str | None = None  # "sdk" or "direct"
        self.turns: asyncio.Queue[str | None] = asyncio.Queue()
        self.current: asyncio.Task[m.JsonDict] | None = None
        self.pending: dict[str, asyncio.Future[m.JsonDict]] = {}
        self.lineno = 0
        agent.emit = self.send
        agent.ask = self.ask_permission

    # -- output -------------------------------------------------------------------------------

    def send(self, message: m.JsonDict) -> None:
        """Write one message (a no-op once the client stopped reading)."""
        self.writer.write(self.transport.feed(message).stdout)

    def _error_result(self, text: str) -> None:
        self.send(
            m.result_error(
                uuid=str(uuid.uuid4()), session_id=self.agent.config.session_id, duration_ms=0,
                duration_api_ms=0, num_turns=0, usage=m.usage_dict(0, 0),
                permission_denials=[], message=text,
            )
        )  # fmt: skip

    # -- CLI -> client requests -----------------------------------------------------------------

    async def ask_permission(self, tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
        """Ask the client (``can_use_tool``); deny on timeout, error or a direct-mode session."""
        if self.mode != "sdk" or self.writer.closed:
            return Decision(allow=False, message=f'Permission to use "{tool.name}" was not granted '
                            "(no client to ask in this session).")  # fmt: skip
        request_id = str(uuid.uuid4())
        future: asyncio.Future[m.JsonDict] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        blocked = args.get("file_path") or args.get("absolute_path") or args.get("path")
        self.send(m.control_request(request_id, {
            "subtype": "can_use_tool", "tool_name": tool.name, "tool_use_id": call_id,
            "input": args,
            "permission_suggestions": [
                {"type": "allow", "label": "Allow once"}, {"type": "deny", "label": "Deny"}],
            "blocked_path": blocked if isinstance(blocked, str) else None,
        }))  # fmt: skip
        try:
            body = await asyncio.wait_for(future, PERMISSION_TIMEOUT_S)
        except TimeoutError:
            return Decision(allow=False, message="Permission request timed out.")
        except (asyncio.CancelledError, ConnectionError) as exc:
            if isinstance(exc, asyncio.CancelledError) and self.current is not None and (
                self.current.cancelling()
            ):
                raise
            return Decision(allow=False, message=str(exc) or "Permission request cancelled.")
        finally:
            self.pending.pop(request_id, None)
        if body.get("subtype") != "success":
            error = body.get("error")
            text = error.get("message") if isinstance(error, dict) else error
            return Decision(allow=False, message=str(text or "Permission denied."))
        answer = body.get("response") or {}
        if answer.get("behavior") == "allow":
            updated = answer.get("updatedInput")
            return Decision(allow=True, updated_input=updated if isinstance(updated, dict) else None)
        return Decision(allow=False, message=answer.get("message") or None,
                        interrupt=bool(answer.get("interrupt")))  # fmt: skip

    # -- client -> CLI ------------------------------------------------------------------------

    def _control(self, request_id: str, request: m.JsonDict) -> None:
        subtype = request.get("subtype")
        config = self.agent.config
        response: m.JsonDict
        if subtype == "initialize":
            response = {
                "subtype": "initialize", "session_id": config.session_id,
                "capabilities": {
                    "can_handle_can_use_tool": True, "can_handle_hook_callback": False,
                    "can_set_permission_mode": True, "can_set_model": True,
                    "can_get_context_usage": True, "can_handle_mcp_message": False,
                },
            }  # fmt: skip
        elif subtype == "interrupt":
            if self.current is not None and not self.current.done():
                self.current.cancel()
            response = {"subtype": "interrupt"}
        elif subtype == "set_model":
            model = request.get("model")
            if not isinstance(model, str) or not model:
                self.send(m.control_error(request_id, "set_model requires a model name"))
                return
            self.agent.model.name = model
            if hasattr(self.agent.model, "model"):
                self.agent.model.model = model
            config.model_name = model
            response = {"subtype": "set_model", "model": model}
        elif subtype == "set_permission_mode":
            mode = CONTROL_MODES.get(str(request.get("mode")))
            if mode is None:
                self.send(m.control_error(request_id, f"Invalid permission mode: {request.get('mode')}"))
                return
            config.approval_mode = mode  # type: ignore[assignment]
            response = {"status": "updated", "mode": mode}
        elif subtype == "supported_commands":
            response = {"subtype": "supported_commands", "commands": []}
        elif subtype in ("mcp_server_status", "mcp_status"):
            response = {"subtype": subtype, "status": {}, "mcpServers": []}
        elif subtype == "get_context_usage":
            chars = sum(len(str(msg.get("content") or "")) for msg in self.agent.conversation)
            response = {"subtype": "get_context_usage", "total_tokens": chars // 4,
                        "messages": len(self.agent.conversation)}  # fmt: skip
        else:
            self.send(m.control_error(request_id, f"Unknown control request subtype: {subtype}"))
            return
        self.send(m.control_success(request_id, response))

    def _bad_line(self, reason: str, request_id: Any = None) -> None:
        warn(f"headwire: stdin line {self.lineno}: {reason}")
        if isinstance(request_id, str):
            self.send(m.control_error(request_id, f"line {self.lineno}: {reason}"))
        else:
            self._error_result(f"Failed to parse stream-json line {self.lineno}: {reason}")

    def handle_line(self, raw: bytes) -> None:
        """Route one input line."""
        self.lineno += 1
        if not raw.strip():
            return
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            self._bad_line(f"not valid JSON ({exc})")
            return
        if not isinstance(message, dict):
            self._bad_line("a message must be a JSON object")
            return
        kind = message.get("type")
        if not isinstance(kind, str):
            self._bad_line('missing required "type" field', message.get("request_id"))
            return
        if kind == "control_response":
            body = message.get("response")
            if isinstance(body, dict):
                future = self.pending.get(str(body.get("request_id")))
                if future is not None and not future.done():
                    future.set_result(body)
            return
        if kind == "control_cancel_request":
            target = message.get("request_id")
            for rid, future in list(self.pending.items()):
                if (target is None or rid == target) and not future.done():
                    future.set_exception(ConnectionError("Request cancelled"))
            return
        if kind == "control_request":
            request = message.get("request")
            request_id = message.get("request_id")
            if not isinstance(request, dict) or not isinstance(request_id, str):
                self._bad_line("control_request needs a request_id and a request object",
                               request_id)  # fmt: skip
                return
            if self.mode is None:
                self.mode = "sdk" if request.get("subtype") == "initialize" else "direct"
            if self.mode == "direct" and request.get("subtype") != "interrupt":
                warn(f"headwire: stdin line {self.lineno}: control request ignored in direct mode")
                self.send(m.control_error(request_id, "Control requests need an initialize first"))
                return
            self._control(request_id, request)
            return
        if kind == "user":
            if self.mode is None:
                self.mode = "direct"
            text = _prompt_text(message.get("message"))
            if text is None:
                self._bad_line("user message needs message.content (a string or blocks)")
                return
            if text.strip():
                self.turns.put_nowait(text)
            return
        warn(f"headwire: stdin line {self.lineno}: ignoring message of type {kind!r}")

    # -- the loops --------------------------------------------------------------------------

    async def run_turns(self) -> None:
        """Run queued prompts one at a time until the queue is closed with ``None``."""
        while True:
            prompt = await self.turns.get()
            if prompt is None or self.writer.closed:
                return
            self.current = asyncio.create_task(self.agent.run_turn(prompt))
            with contextlib.suppress(asyncio.CancelledError):
                await self.current
            self.current = None

    async def run(self) -> int:
        """Read stdin until EOF, then drain the queued turns."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[object] = asyncio.Queue()
        threading.Thread(target=_stdin_lines, args=(loop, lines), daemon=True).start()
        worker = asyncio.create_task(self.run_turns())
        while True:
            item = await lines.get()
            if item is _EOF or isinstance(item, Exception):
                break
            assert isinstance(item, bytes)
            self.handle_line(item)
            if self.writer.closed:
                break
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError("Input closed"))
        self.turns.put_nowait(None)
        await worker
        return 0


def _prompt_text(message: Any) -> str | None:
    """The prompt of an input ``user`` message: a string, or text blocks joined by newlines."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(orjson.dumps(block).decode())
        return "\n".join(parts)
    return None


def run_session(args: argparse.Namespace) -> int:
    """Run a persistent session; returns the exit code."""
    writer = WireWriter()

    async def main() -> int:
        agent, close = build_agent(args, Path.cwd(), emit=writer_emit_placeholder)
        try:
            return await Session(args, agent, writer).run()
        finally:
            await close()

    try:
        return asyncio.run(main())
    except UsageError as exc:
        warn(f"headwire: {exc}")
        return 2
    except KeyboardInterrupt:
        return 130


def writer_emit_placeholder(message: m.JsonDict) -> None:
    """Replaced by the session's own writer before anything is emitted."""
    raise RuntimeError("emit before the session was wired")


__all__ = ["Session", "__version__", "run_session"]
