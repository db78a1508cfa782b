"""``--input-format stream-json --output-format stream-json``: a persistent session.

The client writes JSON lines on stdin and reads stream-JSON on stdout for as long as it likes
(Qwen Code's ``session.ts`` protocol, which the Qwen and Claude SDKs speak).  The protocol's
state (SDK or direct mode, pending requests, bad lines) is the sans-IO
:class:`~headwire.protocol.session_control.SessionControl`; this module performs what it
decides:

* ``user`` messages are queued first-in first-out and run one turn at a time on one agent (one
  conversation, one tool-result boundary); each turn writes ``system/init`` ... ``result``;
* ``control_request`` from the client (``initialize``, ``interrupt``, ``set_model``,
  ``set_permission_mode``, ``supported_commands``, ``mcp_server_status``,
  ``get_context_usage``, ``get_available_models``, ``get_usage_info``) gets a
  ``control_response``; an unknown subtype gets an error naming it;
* ``control_response`` answers the CLI's own ``can_use_tool`` requests, which time out as a
  denial; ``control_cancel_request`` cancels them.

A bad line gets an error ``control_response`` (when it carried a ``request_id``) or an error
``result`` in its place in the turn queue, and a stderr line naming its line number; the session
goes on.  Lines have no length limit.  At end of input the running turn finishes, queued turns
are drained, and the process exits 0.  If the reader of stdout goes away (``EPIPE``) the running
turn still finishes and is recorded, queued turns are dropped, and the process exits 0.  SIGINT
or SIGTERM cancels the running turn (its error ``result`` is written and recorded), drops queued
turns, stops tools and MCP servers, and exits 130 or 143.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import time
import traceback
from pathlib import Path
from typing import Any, cast

from headwire.cli.build import Runtime, build_runtime, plan_session
from headwire.cli.flags.agent import CLAUDE_MODES
from headwire.cli.run.result_guard import ResultGuard
from headwire.errors import ConfigError, ExitCode, ProtocolError, UsageError
from headwire.events import Event, RecordingDegraded
from headwire.headless import HeadlessEmitter
from headwire.io.lines import ReadError, fd_lines, stdin_fd
from headwire.io.signals import cancelled_exit_code, run_cancellable
from headwire.io.stdio import warn
from headwire.io.writer import WireWriter
from headwire.protocol import messages as m
from headwire.protocol import session_control as sc
from headwire.records import dataclass
from headwire.runtime.ids import new_uuid
from headwire.runtime.policy.answers import permission_answer
from headwire.runtime.policy.permissions import Decision, denial_message
from headwire.runtime.tools.base import ApprovalMode, Tool
from headwire.transports import StreamJsonTransport

PERMISSION_TIMEOUT_S = 30.0
"""How long a ``can_use_tool`` request waits for the client before it counts as a denial."""

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


@dataclass(frozen=True, slots=True)
class _Compact:
    """A queued ``compact`` control request: it runs between turns, then is answered."""

    request_id: str


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
    """One persistent stream-JSON session: performs the control protocol, runs the turns.

    Build it with :meth:`open`, which also builds the session's runtime (with this session as
    the agent's permission asker) and subscribes the headless emitter to its events.
    """

    def __init__(
        self,
        args: argparse.Namespace,
        writer: WireWriter,
        session_id: str,
        *,
        claude_compat: bool = False,
    ) -> None:
        self.args = args
        self.writer = writer
        self.claude_compat = claude_compat
        self.control = sc.SessionControl(session_id)
        self.transport = StreamJsonTransport(bool(args.include_partial_messages))
        self.turns: asyncio.Queue[str | _Rejected | _Compact | None] = asyncio.Queue()
        self.current: asyncio.Task[Any] | None = None
        self.waiting: dict[str, asyncio.Future[m.JsonDict]] = {}
        self.permission_timeout_s = PERMISSION_TIMEOUT_S
        self.input_closed = False
        self.usage_totals = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        self._runtime: Runtime | None = None
        self.emitter: HeadlessEmitter | None = None

    @classmethod
    async def open(
        cls, args: argparse.Namespace, writer: WireWriter, cwd: Path, *, claude_compat: bool = False
    ) -> Session:
        """A session with its runtime built from the flags (raises UsageError)."""
        plan = plan_session(args, cwd)
        session = cls(args, writer, plan.session_id, claude_compat=claude_compat)
        runtime = await build_runtime(args, cwd, plan, ask=session.ask_permission)
        session._runtime = runtime
        session.emitter = HeadlessEmitter(
            plan.session_id,
            new_uuid,
            session.send,
            partials=session.transport.include_partial_messages,
            cancelled_code=cancelled_exit_code,
        )
        runtime.events.subscribe(session.emitter)
        from headwire.cli.run.outputs import subscribe_bound_records

        subscribe_bound_records(args, runtime, plan.session_id, session.send)
        runtime.events.subscribe(session._on_event)
        return session

    @property
    def runtime(self) -> Runtime:
        """The session's object graph."""
        assert self._runtime is not None, "use Session.open()"
        return self._runtime

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

    def _on_event(self, event: Event) -> None:
        if isinstance(event, RecordingDegraded):
            warn(f"headwire: session recording disabled: {event.reason}")

    def _error_result(self, text: str) -> None:
        """The error ``result`` of a turn that never ran (the session's running cost on it)."""
        if self.emitter is None or self._runtime is None:
            from headwire.cli.run.result_guard import failure_result

            self.send(failure_result(text, self.control.session_id))
            return
        agent = self.runtime.agent
        self.send(self.emitter.error_result(text, agent.model.name, agent.config.meter.snapshot()))

    def perform(self, actions: list[sc.Action]) -> None:
        """Carry out what the control protocol decided."""
        for action in actions:
            if isinstance(action, sc.Send):
                self.send(action.message)
            elif isinstance(action, sc.Warn):
                warn(f"headwire: {action.text}")
            elif isinstance(action, sc.QueuePrompt):
                self.turns.put_nowait(action.text)
            elif isinstance(action, sc.QueueRejection):
                self.turns.put_nowait(_Rejected(action.message))
            elif isinstance(action, sc.Interrupt):
                self._interrupt_current()
            elif isinstance(action, sc.Resolve):
                future = self.waiting.get(action.request_id)
                if future is not None and not future.done():
                    future.set_result(action.body)
            elif isinstance(action, sc.Abort):
                targets = (
                    list(self.waiting.values())
                    if action.request_id is None
                    else [f for k, f in self.waiting.items() if k == action.request_id]
                )
                for future in targets:
                    if not future.done():
                        future.set_exception(RequestAborted(action.reason))
            elif isinstance(action, sc.Control):
                self._control(action)

    # -- CLI -> client requests -----------------------------------------------------------------

    def _interrupt_current(self) -> None:
        task = self.current
        if task is not None and not task.done():
            # One step later, after the task's first step (already scheduled): a turn
            # interrupted before it started still writes its error result.
            asyncio.get_running_loop().call_soon(task.cancel)

    async def ask_permission(self, tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
        """Ask the client with ``can_use_tool``; no answer in time, or no client, is a denial."""
        if self.control.mode is not sc.Mode.SDK:
            mode = self.runtime.agent.config.approval_mode
            return Decision(allow=False, message=denial_message(tool, mode, args))
        if self.input_closed or self.writer.closed:
            return Decision(
                allow=False,
                message=f'Permission to use "{tool.name}" was not granted: '
                "the client closed the session.",
            )
        request_id = new_uuid()
        future: asyncio.Future[m.JsonDict] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        request = {
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
        }
        self.perform([self.control.request_permission(request_id, request)])
        try:  # asyncio.timeout, not wait_for: an interrupt must never be lost to a late answer
            async with asyncio.timeout(self.permission_timeout_s):
                body = await future
        except TimeoutError:
            self._give_up(request_id)
            return Decision(
                allow=False,
                message=f'Permission request for "{tool.name}" timed out after '
                f"{self.permission_timeout_s:g} s.",
            )
        except asyncio.CancelledError:
            self._give_up(request_id)
            raise
        except RequestAborted as exc:
            return Decision(allow=False, message=f'Permission request for "{tool.name}" {exc}.')
        finally:
            self.waiting.pop(request_id, None)
        return self._decision(tool, body)

    def _give_up(self, request_id: str) -> None:
        cancel = self.control.give_up(request_id)
        if cancel is not None:
            self.perform([cancel])

    def _decision(self, tool: Tool, body: m.JsonDict) -> Decision:
        """The client's answer, checked where it enters (:mod:`headwire.runtime.policy.answers`)."""
        decision, problem = permission_answer(tool.name, body)
        if problem is not None:
            warn(f"headwire: can_use_tool answer for {tool.name} refused: {problem}")
        if decision.interrupt:
            self._interrupt_current()
        return decision

    def _blocked_path(self, args: dict[str, Any]) -> str | None:
        """The path argument when it lies outside the workspace (Claude's meaning), else null."""
        raw = args.get("file_path") or args.get("absolute_path") or args.get("path")
        if not isinstance(raw, str) or not raw:
            return None
        config = self.runtime.agent.config
        expanded = os.path.expanduser(raw)
        real = Path(os.path.realpath(os.path.join(str(config.cwd), expanded)))
        for root in (config.cwd, *config.workspace_dirs):
            resolved = Path(os.path.realpath(str(root)))
            if real == resolved or real.is_relative_to(resolved):
                return None
        return str(real)

    # -- client -> CLI ------------------------------------------------------------------------

    def _control(self, action: sc.Control) -> None:
        request_id, subtype, request = action.request_id, action.subtype, action.request
        agent = self.runtime.agent
        config = agent.config
        response: m.JsonDict
        if subtype == "initialize":
            self._initialize(request)
            response = self.control.initialize_response()
        elif subtype == "set_model":
            model = str(request["model"])
            try:
                agent.switch_model(model)
            except ConfigError as exc:
                self.perform([self.control.refuse(request_id, str(exc))])
                return
            response = {"subtype": "set_model", "model": model}
        elif subtype == "set_permission_mode":
            mode = PERMISSION_MODES.get(sc.as_text(request.get("mode")))
            if mode is None:
                self.perform(
                    [
                        self.control.refuse(
                            request_id,
                            f"Invalid permission mode: {sc.as_text(request.get('mode'))}",
                        )
                    ]
                )
                return
            config.approval_mode = mode
            response = {"status": "updated", "mode": mode}
        elif subtype == "supported_commands":
            response = {"subtype": "supported_commands", "commands": []}
        elif subtype in ("mcp_server_status", "mcp_status"):
            servers = [dict(s) for s in config.mcp_statuses()]
            response = {
                "subtype": subtype,
                "status": {str(s.get("name")): s.get("status") for s in servers},
                "mcpServers": servers,
            }
        elif subtype == "get_context_usage":
            response = self._context_usage()
        elif subtype == "compact":
            self.turns.put_nowait(_Compact(request_id))  # after the running turn, in order
            return
        elif subtype == "get_available_models":
            models = [{"id": i, "name": label} for i, label in agent.model_choices()]
            response = {"subtype": subtype, "models": models}
        else:  # get_usage_info
            response = {"subtype": subtype, "usage": dict(self.usage_totals)}
        self.perform([self.control.answer(request_id, response)])

    def _initialize(self, request: m.JsonDict) -> None:
        """Apply what ``initialize`` carries that headwire honours; note what it ignores."""
        timeout = request.get("timeout")
        if isinstance(timeout, dict):
            ms = timeout.get("canUseTool")
            if isinstance(ms, int | float) and not isinstance(ms, bool) and ms > 0:
                self.permission_timeout_s = ms / 1000.0
        hooks = request.get("hooks")
        if isinstance(hooks, dict) and hooks:
            self._register_sdk_hooks(hooks)
        ignored = [key for key in ("sdkMcpServers", "mcpServers", "agents") if request.get(key)]
        if ignored:
            warn(
                "headwire: note: initialize fields not supported here, ignored: "
                f"{', '.join(ignored)}"
            )

    def _register_sdk_hooks(self, hooks: m.JsonDict) -> None:
        """The client's hook callbacks join the session's hooks (built now when the settings
        have none); each run is a ``hook_callback`` request (:meth:`call_hook`)."""
        from headwire.runtime.hooks.runner import HookRunner

        config = self.runtime.agent.config
        if config.hooks is None:
            config.hooks = HookRunner({}, cwd=config.cwd)
            config.hooks.transcript_path = str(self.runtime.recorder.path)
            self.runtime.closers.append(self.runtime.agent.end_session)
        config.hooks.add_sdk_hooks(hooks, self.call_hook)

    async def call_hook(
        self, callback_id: str, data: dict[str, Any], tool_use_id: str | None, timeout_s: float
    ) -> m.JsonDict:
        """Run a client's hook callback; its JSON answer (raises when the client answers with
        an error, closed the session or does not answer within ``timeout_s``)."""
        if self.input_closed or self.writer.closed:
            raise RequestAborted("the client closed the session")
        request_id = new_uuid()
        future: asyncio.Future[m.JsonDict] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        request = {"callback_id": callback_id, "input": data, "tool_use_id": tool_use_id}
        self.perform([self.control.request_hook_callback(request_id, request)])
        try:
            async with asyncio.timeout(timeout_s):
                body = await future
        except BaseException:
            self._give_up(request_id)
            raise
        finally:
            self.waiting.pop(request_id, None)
        if body.get("subtype") == "error":
            raise RequestAborted(str(body.get("error") or "the hook callback failed"))
        answer = body.get("response")
        return answer if isinstance(answer, dict) else {}

    def _context_usage(self) -> m.JsonDict:
        """An estimate of the context size: characters / 4 over the conversation."""
        conversation = self.runtime.agent.conversation
        chars = 0
        for msg in conversation:
            chars += len(str(msg.get("content") or ""))
            for call in msg.get("tool_calls") or []:
                chars += len(str(call.get("function", {}).get("arguments", "")))
        tokens = chars // 4
        return {
            "subtype": "get_context_usage",
            "categories": [{"name": "Messages", "tokens": tokens, "color": "default"}],
            "totalTokens": tokens,
            "messages": len(conversation),
        }

    def handle_line(self, raw: bytes) -> None:
        """Route one input line (``raw`` without its newline)."""
        self.perform(self.control.receive_line(raw))

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
            if isinstance(item, _Compact):
                await self._compact(item.request_id)
                continue
            await self._run_turn(item)

    async def _compact(self, request_id: str) -> None:
        """Compact the conversation now (a ``compact`` control request) and answer it."""
        agent = self.runtime.agent
        fixed = agent.fixed_request_parts()
        before = agent.context.estimate(fixed, agent.conversation)
        try:
            compacted = await agent.compact()
        except Exception as exc:  # a failing compaction is this request's error
            self.perform([self.control.refuse(request_id, f"Compaction failed: {exc}")])
            return
        after = agent.context.estimate(fixed, agent.conversation)
        response = {
            "subtype": "compact",
            "compacted": compacted,
            "pre_tokens": before,
            "post_tokens": after,
        }
        self.perform([self.control.answer(request_id, response)])

    async def _run_turn(self, prompt: str) -> None:
        self.current = asyncio.create_task(self.runtime.agent.run_turn(prompt))
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

    async def _read(self, fd: int) -> None:
        try:
            async for line in fd_lines(fd):
                self.handle_line(line)
                if self.writer.closed:
                    return
        except ReadError as exc:
            warn(f"headwire: reading stdin failed: {exc}")

    async def run(self, fd: int = 0) -> int:
        """Read ``fd`` until EOF (or until stdout closes), then drain the queued turns."""
        loop = asyncio.get_running_loop()
        stdout_closed = loop.create_future()

        def closed() -> None:
            error = self.writer.error
            if error is None or error.errno == errno.EPIPE:  # else the writer said what failed
                warn("headwire: stdout closed by the client; finishing the running turn")
            if not stdout_closed.done():
                stdout_closed.set_result(None)

        self.writer.on_closed = closed
        worker = asyncio.create_task(self.run_turns())
        reader = asyncio.create_task(self._read(fd))
        try:
            await asyncio.wait({reader, stdout_closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stdout_closed.cancel()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self.input_closed = True
            self.perform(self.control.end_of_input())
            self.turns.put_nowait(None)
            if not worker.done() and (task := asyncio.current_task()) and task.cancelling():
                # SIGINT/SIGTERM: the running turn ends with its error result, queued ones go
                worker.cancel()
                await asyncio.wait({worker})
        await worker
        await self.writer.drain()
        return 0

    async def aclose(self) -> None:
        """Take the runtime down."""
        if self._runtime is not None:
            await self._runtime.aclose()
            from headwire.cli.run.outputs import save_trajectory

            save_trajectory(self.args, self._runtime)


def _claude_client(args: argparse.Namespace) -> bool:
    """Whether Claude's SDK launched us (it sets the entry point and always passes --verbose)."""
    return bool(args.verbose) or os.environ.get("CLAUDE_CODE_ENTRYPOINT", "").startswith("sdk")


def run_session(args: argparse.Namespace, guard: ResultGuard | None = None) -> int:
    """Run a persistent session; returns the exit code.  A session that cannot start ends with
    one error ``result`` (``guard``)."""
    writer = WireWriter()
    guard = guard if guard is not None else ResultGuard("stream-json")

    async def main() -> int:
        try:
            session = await Session.open(
                args, writer, Path.cwd(), claude_compat=_claude_client(args)
            )
        except asyncio.CancelledError:
            guard.fail("Operation cancelled.", writer.write, cancelled_exit_code())
            raise
        guard.done = True  # from here on every turn (and bad line) ends with its own result
        try:
            return await session.run(stdin_fd())
        finally:
            await session.aclose()

    started = time.monotonic()
    try:
        return run_cancellable(main())
    except UsageError as exc:
        warn(f"headwire: {exc}")
        code = int(getattr(exc, "exit_code", ExitCode.USAGE))  # a sandbox that cannot hold: 1
        guard.fail(str(exc), writer.write, code)
        return code
    except KeyboardInterrupt:
        warn(f"headwire: interrupted after {time.monotonic() - started:.1f} s")
        return ExitCode.INTERRUPTED
    finally:
        writer.close()


__all__ = ["PERMISSION_TIMEOUT_S", "RequestAborted", "Session", "run_session"]
