"""The agent loop: prompt -> model -> tool calls -> tool results -> model, until an answer.

One :class:`Agent` owns a session's conversation.  ``run_turn`` emits every wire message of one
run through ``emit`` (a callback the CLI connects to a transport): ``system/init``, partial
``stream_event``s, ``assistant`` messages, ``user`` tool results (built only by the one
:class:`~headwire.emitter.ToolResultEmitter`) and the terminal ``result``.

Each tool result exists three times and they are never confused: the *model-facing* text (bounded
under :data:`MODEL_TEXT_BUDGET`, pointing at the artifact), the *producer artifact* (the tool's
full output, 0600), and the *canonical recording* (full display and model text).  The wire gets
the display, projected at the emitter and nowhere else.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from headwire.emitter import EXECUTION_DENIED, ToolResponse, ToolResultEmitter
from headwire.errors import RunLimitError
from headwire.io.stdio import warn
from headwire.protocol import messages as m
from headwire.runtime.models.base import (
    Finished,
    Model,
    ModelError,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from headwire.runtime.permissions import Decision, denial_message, verdict
from headwire.runtime.recording import RECORDING_FAILURE_MESSAGE, Recorder
from headwire.runtime.redact import redact_outcome
from headwire.runtime.tools.base import ApprovalMode, ArtifactSink, Tool, ToolContext, ToolOutcome
from headwire.wire import encode

MODEL_TEXT_BUDGET = 25_000
"""Characters of one tool result the model sees; longer outputs are cut and point at the file."""

MAX_TURNS_MESSAGE = (
    "Reached max session turns for this session. Increase the number of turns by specifying "
    "maxSessionTurns in settings.json."
)

Emit = Callable[[m.JsonDict], None]
AskPermission = Callable[[Tool, str, dict[str, Any]], Awaitable[Decision]]


class AgentObserver:
    """Hooks for front ends that are not headless wires (ACP): every method is optional.

    ``tool_result`` receives the unprojected outcome; a front end that puts it on a wire must
    project it there (ACP: :func:`headwire.projection.project_acp_tool_call_update`).
    """

    def text_delta(self, text: str) -> None:
        """A piece of assistant text."""

    def thinking_delta(self, text: str) -> None:
        """A piece of reasoning."""

    def tool_call(self, call: ToolCall, tool: Tool | None) -> None:
        """The model asked for a tool call (before permission and execution)."""

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        """The call was allowed and starts running."""

    def tool_result(
        self, call: ToolCall, tool: Tool | None, outcome: ToolOutcome, model_text: str
    ) -> None:
        """The call finished (or was denied or failed); ``outcome`` is unprojected."""


class TurnLimitExceeded(RunLimitError):
    """``--max-session-turns`` was reached."""


@dataclass(slots=True)
class AgentConfig:
    """Settings of one session."""

    session_id: str
    cwd: Path
    model_name: str
    approval_mode: ApprovalMode = "default"
    allowed_tools: tuple[str, ...] = ()
    max_session_turns: int = -1
    include_partial_messages: bool = False
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    version: str = "0.0.0"
    json_stats: bool = False
    tool_timeout_s: float | None = None
    workspace_dirs: tuple[Path, ...] = ()
    parent_tool_use_id: str | None = None
    """Set on a subagent: every message it emits carries the agent call's id."""
    depth: int = 0
    max_subagent_depth: int = 1
    agent_names: tuple[str, ...] = ()
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)
    """``system/init``'s ``mcp_servers``: ``[{"name", "status"}]`` of the configured servers."""


DEFAULT_SYSTEM_PROMPT = (
    "You are headwire, a headless coding agent. Use the tools to inspect and change the "
    "workspace, then answer concisely."
)


@dataclass(slots=True)
class _Stats:
    api_ms: int = 0
    requests: int = 0
    errors: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    tool_success: int = 0
    tool_fail: int = 0
    tool_ms: int = 0
    by_tool: dict[str, list[int]] = field(default_factory=dict)


class Agent:
    """A session's model loop."""

    def __init__(
        self,
        config: AgentConfig,
        model: Model,
        tools: list[Tool],
        emit: Emit,
        artifacts: ArtifactSink,
        recorder: Recorder | None = None,
        ask: AskPermission | None = None,
        conversation: list[dict[str, Any]] | None = None,
        observer: AgentObserver | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.tools = {t.name: t for t in tools}
        self.emit = emit
        self.artifacts = artifacts
        self.recorder = recorder
        self.ask = ask
        self.conversation: list[dict[str, Any]] = list(conversation or [])
        self.session_turns = 0
        self.cancelled = asyncio.Event()
        self.observer = observer or AgentObserver()
        self.permission_denials: list[m.JsonDict] = []
        """The current run's ``permission_denials``; a subagent shares its parent's list, so
        the calls it was refused show in the final ``result`` too."""

    @staticmethod
    def new_uuid() -> str:
        """A fresh random id for a wire message."""
        return str(uuid.uuid4())

    # -- wire helpers -----------------------------------------------------------------------

    def _stream(self, event: m.JsonDict) -> None:
        if not self.config.include_partial_messages:
            return
        parent = self.config.parent_tool_use_id
        if parent is not None and event["type"] in ("message_start", "message_stop"):
            return  # subagents have no message_start / message_stop
        self.emit(
            m.stream_event(
                uuid=self.new_uuid(),
                session_id=self.config.session_id,
                parent_tool_use_id=parent,
                event=event,
            )
        )

    def _progress(self, call_id: str, content: m.JsonDict) -> None:
        """A ``tool_progress`` stream event (partial messages only; never tagged with a parent)."""
        if self.config.include_partial_messages:
            self.emit(
                m.stream_event(
                    uuid=self.new_uuid(),
                    session_id=self.config.session_id,
                    parent_tool_use_id=None,
                    event={"type": "tool_progress", "tool_use_id": call_id, "content": content},
                )
            )

    def init_message(self) -> m.JsonDict:
        """``system/init`` for this session."""
        return m.system_init(
            session_id=self.config.session_id,
            cwd=str(self.config.cwd),
            tools=list(self.tools),
            mcp_servers=[dict(server) for server in self.config.mcp_servers],
            model=self.model.name,
            permission_mode=self.config.approval_mode,
            slash_commands=[],
            version=self.config.version,
            agents=list(self.config.agent_names),
        )

    def _record(self, kind: str, **fields: Any) -> None:
        recorder = self.recorder
        if recorder is not None:
            parent = self.config.parent_tool_use_id
            if parent is not None:
                fields["parent_tool_use_id"] = parent
            recorder.record(kind, **fields)
            if recorder.failed is not None and not recorder.failure_reported:
                # Upstream's notice, once per recorder: the run goes on unrecorded.
                recorder.failure_reported = True
                sid = recorder.session_id
                self.emit(
                    m.system_event(
                        uuid=self.new_uuid(),
                        session_id=sid,
                        subtype="session_recording_degraded",
                        data={
                            "session_id": sid,
                            "reason": "write_failed",
                            "message": RECORDING_FAILURE_MESSAGE,
                        },
                    )
                )

    # -- one run ----------------------------------------------------------------------------

    async def run_turn(self, prompt: str) -> m.JsonDict:
        """Run one user prompt to its ``result`` message (which is also emitted)."""
        started = time.monotonic()
        stats = _Stats()
        emitter = ToolResultEmitter(self.config.session_id, self.new_uuid)
        self.permission_denials = emitter.permission_denials
        self.cancelled.clear()
        self.emit(self.init_message())
        self.emit(
            m.stream_event(
                uuid=self.new_uuid(),
                session_id=self.config.session_id,
                parent_tool_use_id=None,
                event={
                    "type": "goal_state",
                    "goal_state": {"v": 2, "goal": None, "activity": "idle"},
                },
            )
        )
        user_msg = {"role": "user", "content": prompt}
        self.conversation.append(user_msg)
        self._record("user", message=user_msg)
        num_turns = 0
        last_text = ""
        error: str | None = None
        subtype = "error_during_execution"
        try:
            while True:
                if 0 <= self.config.max_session_turns <= self.session_turns:
                    subtype = "error_max_turns"
                    raise TurnLimitExceeded(MAX_TURNS_MESSAGE)
                self.session_turns += 1
                num_turns += 1
                calls, last_text = await self._model_call(stats)
                if not calls:
                    break
                for call in calls:
                    await self._run_tool(call, emitter, stats)
        except TurnLimitExceeded as exc:
            error = str(exc)
        except ModelError as exc:
            error = exc.message
            stats.errors += 1
        except asyncio.CancelledError:
            error = "Operation cancelled."
            subtype = "error_during_execution"
            self._close_dangling_calls()
            result = self._result(started, stats, num_turns, emitter, last_text, error, subtype)
            self.emit(result)
            raise
        result = self._result(started, stats, num_turns, emitter, last_text, error, subtype)
        self.emit(result)
        return result

    async def run_subtask(self, prompt: str) -> tuple[str, int]:
        """Run a subagent's task to its final text; returns ``(text, tool_uses)``.

        Emits the subagent's assistant messages and tool results (with this agent's
        ``parent_tool_use_id``) but no ``system/init`` and no ``result``; errors propagate.
        Refused calls join :attr:`permission_denials` (the parent's list).
        """
        stats = _Stats()
        emitter = ToolResultEmitter(self.config.session_id, self.new_uuid, self.permission_denials)
        user_msg = {"role": "user", "content": prompt}
        self.conversation.append(user_msg)
        self._record("user", message=user_msg)
        text = ""
        while True:
            if 0 <= self.config.max_session_turns <= self.session_turns:
                raise TurnLimitExceeded(MAX_TURNS_MESSAGE)
            self.session_turns += 1
            calls, text = await self._model_call(stats)
            if not calls:
                return text, stats.tool_calls
            for call in calls:
                await self._run_tool(call, emitter, stats)

    def _close_dangling_calls(self) -> None:
        """After a cancellation, answer the tool calls of the last assistant message that never
        got a result, so the conversation stays valid for the next model call."""
        answered: set[str] = set()
        for message in reversed(self.conversation):
            if message.get("role") == "tool":
                answered.add(str(message.get("tool_call_id")))
                continue
            if message.get("role") != "assistant":
                return
            for call in message.get("tool_calls") or []:
                if call["id"] in answered:
                    continue
                msg = {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": "Operation cancelled.",
                }
                self.conversation.append(msg)
                self._record(
                    "tool_result",
                    message=msg,
                    call_id=call["id"],
                    is_error=True,
                    error="Operation cancelled.",
                )
            return

    def _result(
        self,
        started: float,
        stats: _Stats,
        num_turns: int,
        emitter: ToolResultEmitter,
        last_text: str,
        error: str | None,
        subtype: str,
    ) -> m.JsonDict:
        u = stats.usage
        usage = m.usage_dict(
            u.input_tokens,
            u.output_tokens,
            u.cached_tokens,
            u.total_tokens if u.total_tokens > 0 else None,
        )
        duration = int((time.monotonic() - started) * 1000)
        json_stats = self._json_stats(stats) if self.config.json_stats else None
        if error is None:
            result = m.result_success(
                uuid=self.new_uuid(),
                session_id=self.config.session_id,
                duration_ms=duration,
                duration_api_ms=stats.api_ms,
                num_turns=num_turns,
                result=last_text,
                usage=usage,
                permission_denials=emitter.permission_denials,
                stats=json_stats,
            )
        else:
            result = m.result_error(
                uuid=self.new_uuid(),
                session_id=self.config.session_id,
                duration_ms=duration,
                duration_api_ms=stats.api_ms,
                num_turns=num_turns,
                usage=usage,
                permission_denials=emitter.permission_denials,
                message=error,
                subtype=subtype,
                stats=json_stats,
            )
        self._record(
            "result", is_error=error is not None, result=last_text, error=error, num_turns=num_turns
        )
        return result

    def _json_stats(self, stats: _Stats) -> m.JsonDict:
        u = stats.usage
        api = {
            "totalRequests": stats.requests,
            "totalErrors": stats.errors,
            "totalLatencyMs": stats.api_ms,
        }
        tokens = {
            "prompt": u.input_tokens,
            "candidates": u.output_tokens,
            "total": u.total_tokens,
            "cached": u.cached_tokens,
            "thoughts": 0,
        }
        by_name = {
            name: {
                "count": c,
                "success": s,
                "fail": f,
                "durationMs": d,
                "decisions": {"accept": 0, "reject": 0, "modify": 0, "auto_accept": c},
            }
            for name, (c, s, f, d) in stats.by_tool.items()
        }
        return {
            "models": {
                self.model.name: {
                    "api": api,
                    "tokens": tokens,
                    "bySource": {"main": {"api": api, "tokens": tokens}},
                }
            },
            "tools": {
                "totalCalls": stats.tool_calls,
                "totalSuccess": stats.tool_success,
                "totalFail": stats.tool_fail,
                "totalDurationMs": stats.tool_ms,
                "totalDecisions": {
                    "accept": 0,
                    "reject": 0,
                    "modify": 0,
                    "auto_accept": stats.tool_calls,
                },
                "byName": by_name,
            },
            "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0},
        }

    # -- the model call ---------------------------------------------------------------------

    def _system_prompt(self) -> str:
        base = self.config.system_prompt
        if base is None:
            base = DEFAULT_SYSTEM_PROMPT
        if self.config.append_system_prompt:
            base = (
                f"{base}\n\n{self.config.append_system_prompt}"
                if base
                else self.config.append_system_prompt
            )
        return base

    def _tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in self.tools.values()
        ]

    async def _model_call(self, stats: _Stats) -> tuple[list[ToolCall], str]:
        """One model call; emits its assistant messages and returns its tool calls and text."""
        sid = self.config.session_id
        model_name = self.model.name
        system = self._system_prompt()
        messages = ([{"role": "system", "content": system}] if system else []) + self.conversation
        request = ModelRequest(model=model_name, messages=messages, tools=self._tool_schemas())
        message_id = self.new_uuid()
        self._stream(
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "role": "assistant",
                    "model": model_name,
                    "content": [],
                },
            }
        )
        blocks: list[m.JsonDict] = []
        block_type: str | None = None
        pending_text: list[str] = []
        calls: list[ToolCall] = []
        text_parts: list[str] = []
        thinking_parts: list[str] = []
        usage = Usage()
        current_id = message_id

        def close_block() -> None:
            nonlocal pending_text
            if block_type is None:
                return
            if block_type == "text":
                blocks.append(m.text_block("".join(pending_text)))
            elif block_type == "thinking":
                blocks.append(m.thinking_block("".join(pending_text)))
            pending_text = []
            self._stream({"type": "content_block_stop", "index": len(blocks) - 1})

        def flush_message(final_usage: Usage) -> None:
            nonlocal blocks, current_id
            if not blocks:
                return
            u = final_usage
            self.emit(
                m.assistant_message(
                    uuid=current_id,
                    session_id=sid,
                    parent_tool_use_id=self.config.parent_tool_use_id,
                    model=model_name,
                    content=blocks,
                    usage=m.usage_dict(
                        u.input_tokens, u.output_tokens, u.cached_tokens, u.total_tokens
                    ),
                )
            )
            blocks = []
            current_id = self.new_uuid()

        def start_block(kind: str, start: m.JsonDict) -> None:
            nonlocal block_type
            if block_type is not None and block_type != kind:
                close_block()
                flush_message(Usage())
            elif block_type == kind and kind != "tool_use":
                return
            block_type = kind
            self._stream(
                {"type": "content_block_start", "index": len(blocks), "content_block": start}
            )

        call_started = time.monotonic()
        stats.requests += 1
        try:
            async for event in self.model.stream(request):
                if isinstance(event, TextDelta):
                    if not event.text:
                        continue
                    start_block("text", {"type": "text", "text": ""})
                    self.observer.text_delta(event.text)
                    pending_text.append(event.text)
                    text_parts.append(event.text)
                    self._stream(
                        {
                            "type": "content_block_delta",
                            "index": len(blocks),
                            "delta": {"type": "text_delta", "text": event.text},
                        }
                    )
                elif isinstance(event, ThinkingDelta):
                    start_block("thinking", {"type": "thinking", "thinking": ""})
                    self.observer.thinking_delta(event.text)
                    pending_text.append(event.text)
                    thinking_parts.append(event.text)
                    self._stream(
                        {
                            "type": "content_block_delta",
                            "index": len(blocks),
                            "delta": {"type": "thinking_delta", "thinking": event.text},
                        }
                    )
                elif isinstance(event, ToolCall):
                    if block_type != "tool_use":
                        close_block()
                        if block_type is not None:
                            flush_message(Usage())
                    block_type = "tool_use"
                    index = len(blocks)
                    self._stream(
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {
                                "type": "tool_use",
                                "id": event.call_id,
                                "name": event.name,
                                "input": {},
                            },
                        }
                    )
                    self._stream(
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": encode(event.args).decode(),
                            },
                        }
                    )
                    self._stream({"type": "content_block_stop", "index": index})
                    blocks.append(m.tool_use_block(event.call_id, event.name, event.args))
                    calls.append(event)
                elif isinstance(event, Finished):
                    usage = event.usage or Usage()
        finally:
            stats.api_ms += int((time.monotonic() - call_started) * 1000)
        if block_type in ("text", "thinking"):
            close_block()
        stats.usage = stats.usage + usage
        flush_message(usage)
        self._stream({"type": "message_stop"})
        text = "".join(text_parts)
        assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
        if thinking_parts:
            assistant["reasoning_content"] = "".join(thinking_parts)
        if calls:
            assistant["tool_calls"] = [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": encode(c.args).decode()},
                }
                for c in calls
            ]
        self.conversation.append(assistant)
        self._record(
            "assistant",
            message=assistant,
            usage=m.usage_dict(
                usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.total_tokens
            ),
        )
        return calls, text

    # -- tools ------------------------------------------------------------------------------

    async def _run_tool(self, call: ToolCall, emitter: ToolResultEmitter, stats: _Stats) -> None:
        started = time.monotonic()
        self.observer.tool_call(call, self.tools.get(call.name))
        outcome = redact_outcome(await self._execute(call))  # no registered secret leaves
        elapsed = int((time.monotonic() - started) * 1000)
        stats.tool_calls += 1
        stats.tool_ms += elapsed
        failed = outcome.error is not None
        stats.tool_fail += failed
        stats.tool_success += not failed
        entry = stats.by_tool.setdefault(call.name, [0, 0, 0, 0])
        entry[0] += 1
        entry[1] += not failed
        entry[2] += failed
        entry[3] += elapsed
        model_text = self._model_text(call.name, outcome)
        self.observer.tool_result(call, self.tools.get(call.name), outcome, model_text)
        tool_msg = {"role": "tool", "tool_call_id": call.call_id, "content": model_text}
        self.conversation.append(tool_msg)
        self._record(
            "tool_result",
            message=tool_msg,
            call_id=call.call_id,
            name=call.name,
            args=call.args,
            is_error=failed,
            error=outcome.error,
            error_type=outcome.error_type,
            display=outcome.display,
            artifact=str(outcome.artifact) if outcome.artifact else None,
        )
        response = ToolResponse(
            call_id=call.call_id,
            name=call.name,
            args=call.args,
            output=None if failed else outcome.llm_text,
            part_error=outcome.llm_text if failed and outcome.llm_text else None,
            error=outcome.error,
            error_type=outcome.error_type,
            display=outcome.display,
        )
        self.emit(emitter.tool_result(response, self.config.parent_tool_use_id))

    def _model_text(self, tool_name: str, outcome: ToolOutcome) -> str:
        """The model-facing text: whole when small, else head and tail plus the artifact path."""
        text = outcome.llm_text
        if len(text) <= MODEL_TEXT_BUDGET:
            return text
        path = outcome.artifact
        where = ""
        if path is None:
            try:
                path = self.artifacts.save(tool_name, text.encode("utf-8", "surrogatepass"))
            except OSError as exc:  # disk full, unwritable data directory: the result goes on
                reason = f"{type(exc).__name__}: {exc}"
                warn(f"headwire: could not save the full output of {tool_name}: {reason}")
                where = f"The full output could not be saved ({reason}).\n"
            else:
                outcome.artifact = path
        if not where:
            where = (
                f"The full output has been saved to: {path}\n"
                f"To read the complete output, use the read_file tool with the absolute "
                f"file path above.\n"
            )
        head = MODEL_TEXT_BUDGET // 5
        tail = MODEL_TEXT_BUDGET - head
        return (
            f"Tool output was too large and has been truncated.\n{where}"
            f"Truncated part of the output:\n"
            f"{text[:head]}\n... [{len(text) - head - tail} characters omitted] ...\n{text[-tail:]}"
        )

    async def _execute(self, call: ToolCall) -> ToolOutcome:
        tool = self.tools.get(call.name)
        if tool is None:
            msg = f'Tool "{call.name}" not found in registry.'
            return ToolOutcome(llm_text=msg, error=msg, error_type="tool_not_registered")
        problem = tool.validate(call.args)
        if problem is not None:
            return ToolOutcome(llm_text=problem, error=problem, error_type="invalid_tool_params")
        args = call.args
        decision = verdict(tool, args, self.config.approval_mode, self.config.allowed_tools)
        if decision == "ask" and self.ask is not None:
            answer = await self.ask(tool, call.call_id, args)
            if answer.interrupt:
                self.cancelled.set()
            if not answer.allow:
                msg = answer.message or f'Permission to use "{tool.name}" was denied by the user.'
                return ToolOutcome(llm_text=msg, error=msg, error_type=EXECUTION_DENIED)
            if answer.updated_input is not None:
                args = answer.updated_input
        elif decision != "allow":
            msg = denial_message(tool, self.config.approval_mode)
            return ToolOutcome(llm_text=msg, error=msg, error_type=EXECUTION_DENIED)
        ctx = ToolContext(
            cwd=self.config.cwd,
            artifacts=self.artifacts,
            cancelled=self.cancelled,
            timeout_s=self.config.tool_timeout_s,
            workspace_dirs=self.config.workspace_dirs,
        )
        ctx.call_id = call.call_id
        ctx.owner = self
        ctx.progress = lambda content: self._progress(call.call_id, content)
        self.observer.tool_started(call, tool)
        try:
            return await tool.run(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a crashing tool is a tool error, never a crashed session
            msg = f"Tool {tool.name} failed: {type(exc).__name__}: {exc}"
            return ToolOutcome(llm_text=msg, error=msg, error_type="execution_failed")
