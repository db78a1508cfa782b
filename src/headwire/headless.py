"""The headless emitter: agent events in, headless wire messages out (pure).

:class:`HeadlessEmitter` subscribes to the agent's event stream (:mod:`headwire.events`) and
hands each wire message it builds to ``out`` (a transport, the Dual Output sidecar):

* :class:`~headwire.events.TurnStarted` -> ``system/init`` and the ``goal_state`` event;
* the deltas and tool uses of a model call -> ``stream_event`` partial messages (``message_start``
  … ``message_stop``; a subagent's have no ``message_start``/``message_stop``) and the
  ``assistant`` messages, one per run of blocks of one kind, as Qwen Code splits them (a text run,
  a thinking run, a run of tool uses), the last carrying the call's usage (an empty answer that
  reported usage is one empty text block), so the main agent's assistant messages of a turn add
  up to its result's ``usage``;
* :class:`~headwire.events.ToolFinished` -> the ``user``/``tool_result`` message, through the
  one headless boundary (:func:`headwire.boundary.headless_tool_result`); refused calls join the
  turn's ``permission_denials`` (a subagent's too);
* :class:`~headwire.events.ToolProgress` -> a ``tool_progress`` stream event;
* the subagent events -> ``task_started``, the echo of the task prompt, ``task_notification``
  and upstream's interim error ``result``;
* :class:`~headwire.events.TurnFinished` -> the terminal ``result`` (``stats`` in JSON mode).

:class:`BoundRecords` (``--include-bound-records``), subscribed after the emitter, follows each
``tool_result`` the 65,536-byte bound cut with a ``system``/``tool_result_bound`` record
(:func:`headwire.boundary.bound_record`); what it says of the artifact comes from the
``artifact_info`` it is given (the one place that reads the file).

Every message is built here once, whichever transport writes it.  Partial messages (every
``stream_event`` but ``goal_state``) are built only when some consumer carries them
(``partials``: ``--include-partial-messages`` or a Dual Output sidecar); the transports still
decide for themselves what they write.  Ids come from ``new_uuid``: this module draws no
randomness and does no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from headwire import events as ev
from headwire.boundary import bound_record, headless_tool_result, permission_denial
from headwire.protocol import messages as m
from headwire.protocol.messages import JsonDict
from headwire.records import dataclass, field
from headwire.wire import encode

Out = Callable[[JsonDict], None]


def usage_of(usage: ev.Usage, *, total_if_reported: bool = False) -> JsonDict:
    """``usage`` on the wire (a result leaves ``total_tokens`` out when nothing reported it)."""
    total = usage.total_tokens if not total_if_reported or usage.total_tokens > 0 else None
    return m.usage_dict(usage.input_tokens, usage.output_tokens, usage.cached_tokens, total)


def model_usage_of(cost: ev.RunCost) -> JsonDict:
    """``modelUsage``: Claude Code's per-model totals (``costUSD`` ``null`` when unpriced)."""
    return {
        name: {
            "inputTokens": c.usage.input_tokens,
            "outputTokens": c.usage.output_tokens,
            "cacheReadInputTokens": c.usage.cached_tokens,
            "cacheCreationInputTokens": c.usage.cache_write_tokens,
            "webSearchRequests": 0,
            "costUSD": c.cost_usd,
            "contextWindow": c.context_window,
            "maxOutputTokens": c.max_output_tokens,
        }
        for name, c in cost.by_model
    }


def json_stats(stats: ev.TurnStats) -> JsonDict:
    """JSON mode's ``result.stats``: per model and per tool (Qwen Code's layout)."""
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
            "count": t.count,
            "success": t.success,
            "fail": t.fail,
            "durationMs": t.duration_ms,
            "decisions": {"accept": 0, "reject": 0, "modify": 0, "auto_accept": t.count},
        }
        for name, t in stats.by_tool
    }
    return {
        "models": {
            stats.model: {
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


@dataclass(slots=True)
class _Message:
    """The assistant message being assembled for one agent (main or a subagent)."""

    message_id: str
    model: str
    blocks: list[JsonDict] = field(default_factory=list)
    kind: str | None = None
    """The kind of the open run of blocks: ``text``, ``thinking``, ``tool_use`` or none."""
    pending: list[str] = field(default_factory=list)


def turn_exit_code(e: ev.TurnFinished, cancelled: int = 130) -> int:
    """The exit code of a one-shot run that ends with ``e`` (the README's exit-code matrix):
    ``cancelled`` (130 or 143) when it was cancelled, 0 on success, 55 for ``--max-tool-calls``,
    53 for another run limit, else 1."""
    if e.cancelled:
        return cancelled
    if e.error is None:
        return 0
    if e.limit is None:
        return 1
    return 55 if e.limit == "tool_calls" else 53  # ExitCode.RUN_BUDGET, ExitCode.TURN_LIMIT


class HeadlessEmitter:
    """Builds the headless wire messages of one session from its events."""

    def __init__(
        self,
        session_id: str,
        new_uuid: Callable[[], str],
        out: Out,
        *,
        json_stats: bool = True,
        partials: bool = True,
        cancelled_code: Callable[[], int] = lambda: 130,
    ) -> None:
        self.session_id = session_id
        self.cancelled_code = cancelled_code
        """The exit code of a cancelled turn (130, or 143 after SIGTERM), asked when it ends."""
        self.partials = partials
        """Whether partial ``stream_event`` messages are built at all (``goal_state`` always
        is: the stream-JSON wire carries it either way)."""
        self.new_uuid = new_uuid
        self.out = out
        self.json_stats = json_stats
        self.permission_denials: list[JsonDict] = []
        """The running turn's ``permission_denials`` (reset when a turn starts)."""
        self._messages: dict[str | None, _Message] = {}
        self.result_extra: JsonDict = {}
        """headwire's fields appended to every ``result`` of the session (``sandbox`` when a
        sandbox is configured, ``trace_id`` when telemetry is on); empty otherwise."""

    def __call__(self, event: ev.Event) -> None:
        """Handle one event (an :data:`~headwire.events.EventSink`)."""
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    # -- helpers ----------------------------------------------------------------------------

    def _stream(self, parent: str | None, event: JsonDict) -> None:
        if not self.partials and event["type"] != "goal_state":
            return
        if parent is not None and event["type"] in ("message_start", "message_stop"):
            return  # subagents have no message_start / message_stop
        self.out(
            m.stream_event(
                uuid=self.new_uuid(),
                session_id=self.session_id,
                parent_tool_use_id=parent,
                event=event,
            )
        )

    def _close_run(self, parent: str | None, msg: _Message) -> None:
        if msg.kind is None:
            return
        if msg.kind == "text":
            msg.blocks.append(m.text_block("".join(msg.pending)))
        elif msg.kind == "thinking":
            msg.blocks.append(m.thinking_block("".join(msg.pending)))
        msg.pending = []
        self._stream(parent, {"type": "content_block_stop", "index": len(msg.blocks) - 1})

    def _flush(self, parent: str | None, msg: _Message, usage: ev.Usage) -> None:
        if not msg.blocks:
            return
        self.out(
            m.assistant_message(
                uuid=msg.message_id,
                session_id=self.session_id,
                parent_tool_use_id=parent,
                model=msg.model,
                content=msg.blocks,
                usage=usage_of(usage),
            )
        )
        msg.blocks = []
        msg.message_id = self.new_uuid()

    def _open_run(self, parent: str | None, msg: _Message, kind: str, start: JsonDict) -> None:
        if msg.kind is not None and msg.kind != kind:
            self._close_run(parent, msg)
            self._flush(parent, msg, ev.Usage())
        elif msg.kind == kind and kind != "tool_use":
            return
        msg.kind = kind
        self._stream(
            parent,
            {"type": "content_block_start", "index": len(msg.blocks), "content_block": start},
        )

    # -- handlers ---------------------------------------------------------------------------

    def _turn_started(self, e: ev.TurnStarted) -> None:
        self.permission_denials = []
        info = e.info
        self.out(
            m.system_init(
                session_id=info.session_id,
                cwd=info.cwd,
                tools=list(info.tools),
                mcp_servers=[dict(s) for s in info.mcp_servers],
                model=info.model,
                permission_mode=info.permission_mode,
                slash_commands=list(info.skills),
                version=info.version,
                agents=list(info.agents),
                sandbox=info.sandbox,
            )
        )
        if info.sandbox is not None:
            self.result_extra["sandbox"] = info.sandbox
        self._stream(
            None,
            {"type": "goal_state", "goal_state": {"v": 2, "goal": None, "activity": "idle"}},
        )

    def _model_call_started(self, e: ev.ModelCallStarted) -> None:
        self._messages[e.parent] = _Message(e.message_id, e.model)
        self._stream(
            e.parent,
            {
                "type": "message_start",
                "message": {
                    "id": e.message_id,
                    "role": "assistant",
                    "model": e.model,
                    "content": [],
                },
            },
        )

    def _delta(self, e: ev.TextDelta | ev.ThinkingDelta) -> None:
        msg = self._messages[e.parent]
        if isinstance(e, ev.TextDelta):
            self._open_run(e.parent, msg, "text", {"type": "text", "text": ""})
            delta: JsonDict = {"type": "text_delta", "text": e.text}
        else:
            self._open_run(e.parent, msg, "thinking", {"type": "thinking", "thinking": ""})
            delta = {"type": "thinking_delta", "thinking": e.text}
        msg.pending.append(e.text)
        self._stream(
            e.parent, {"type": "content_block_delta", "index": len(msg.blocks), "delta": delta}
        )

    def _tool_use(self, e: ev.ToolUse) -> None:
        msg = self._messages[e.parent]
        if msg.kind != "tool_use":
            self._close_run(e.parent, msg)
            if msg.kind is not None:
                self._flush(e.parent, msg, ev.Usage())
        msg.kind = "tool_use"
        index = len(msg.blocks)
        start = {"type": "tool_use", "id": e.call_id, "name": e.name, "input": {}}
        if self.partials:
            self._stream(
                e.parent, {"type": "content_block_start", "index": index, "content_block": start}
            )
            partial = {"type": "input_json_delta", "partial_json": encode(e.args).decode()}
            self._stream(
                e.parent, {"type": "content_block_delta", "index": index, "delta": partial}
            )
            self._stream(e.parent, {"type": "content_block_stop", "index": index})
        msg.blocks.append(m.tool_use_block(e.call_id, e.name, e.args))

    def _model_call_finished(self, e: ev.ModelCallFinished) -> None:
        msg = self._messages.pop(e.parent)
        if msg.kind in ("text", "thinking"):
            self._close_run(e.parent, msg)
        elif msg.kind is None and e.usage != ev.Usage():
            # an empty answer that cost tokens: one empty text block carries its usage, so the
            # assistant messages' usage always adds up to the result's
            msg.blocks.append(m.text_block(""))
        self._flush(e.parent, msg, e.usage)
        self._stream(e.parent, {"type": "message_stop"})

    def _tool_progress(self, e: ev.ToolProgress) -> None:
        # never tagged with a parent, as upstream does
        self._stream(
            None, {"type": "tool_progress", "tool_use_id": e.call_id, "content": e.content}
        )

    def _tool_finished(self, e: ev.ToolFinished) -> None:
        denial = permission_denial(e.response)
        if denial is not None:
            self.permission_denials.append(denial)
        self.out(
            headless_tool_result(
                e.response,
                uuid=self.new_uuid(),
                session_id=self.session_id,
                parent_tool_use_id=e.parent,
            )
        )

    def _subagent_started(self, e: ev.SubagentStarted) -> None:
        data = {
            "task_id": e.task_id,
            "tool_use_id": e.call_id,
            "description": e.description,
            "subagent_type": e.subagent_type,
        }
        self.out(
            m.system_event(
                uuid=self.new_uuid(), session_id=self.session_id, subtype="task_started", data=data
            )
        )
        self.out(
            m.user_message(
                uuid=self.new_uuid(),
                session_id=self.session_id,
                parent_tool_use_id=e.call_id,
                content=[m.text_block(e.prompt)],
            )
        )

    def _subagent_finished(self, e: ev.SubagentFinished) -> None:
        usage = {"total_tokens": 0, "tool_uses": e.tool_uses, "duration_ms": e.duration_ms}
        data = {"task_id": e.task_id, "tool_use_id": e.call_id, "status": e.status, "usage": usage}
        self.out(
            m.system_event(
                uuid=self.new_uuid(),
                session_id=self.session_id,
                subtype="task_notification",
                data=data,
            )
        )

    def _subagent_failed(self, e: ev.SubagentFailed) -> None:
        result = m.subagent_error_result(
            uuid=self.new_uuid(), session_id=self.session_id, message=e.message
        )
        result["parent_tool_use_id"] = e.call_id  # interim: not the end of the turn
        self.out(result)

    def _recording_degraded(self, e: ev.RecordingDegraded) -> None:
        self.out(
            m.system_event(
                uuid=self.new_uuid(),
                session_id=e.session_id,
                subtype="session_recording_degraded",
                data={"session_id": e.session_id, "reason": "write_failed", "message": e.message},
            )
        )

    def _compaction_started(self, e: ev.CompactionStarted) -> None:
        self.out(
            m.compaction_status(
                uuid=self.new_uuid(),
                session_id=self.session_id,
                parent_tool_use_id=e.parent,
                trigger=e.trigger,
                pre_tokens=e.pre_tokens,
            )
        )

    def _compaction_finished(self, e: ev.CompactionFinished) -> None:
        self.out(
            m.compact_boundary(
                uuid=self.new_uuid(),
                session_id=self.session_id,
                parent_tool_use_id=e.parent,
                trigger=e.trigger,
                pre_tokens=e.pre_tokens,
                post_tokens=e.post_tokens,
                duration_ms=e.duration_ms,
            )
        )

    def _hook_ran(self, e: ev.HookRan) -> None:
        """``system``/``hook_response`` (Claude Code's subtype): one hook run, its output
        bounded like any tool text."""
        from headwire.projection.headless import project_tool_result_content

        message = m.system_event(
            uuid=self.new_uuid(), session_id=self.session_id, subtype="hook_response"
        )
        message["parent_tool_use_id"] = e.parent
        message.update(
            hook_id=message["uuid"],
            hook_name=e.hook_name,
            hook_event=e.event,
            outcome=e.outcome,
            exit_code=e.exit_code,
            duration_ms=e.duration_ms,
            stdout=project_tool_result_content(e.stdout),
            stderr=project_tool_result_content(e.stderr),
            output=project_tool_result_content(e.stdout or e.stderr),
        )
        self.out(message)

    def _turn_finished(self, e: ev.TurnFinished) -> None:
        self.out(self.result(e))

    def result(self, e: ev.TurnFinished) -> JsonDict:
        """The terminal ``result`` message of a turn: ``usage`` is the main agent's in this
        turn; ``stats`` as JSON mode has it (in every mode); the session's running cost."""
        usage = usage_of(e.stats.usage, total_if_reported=True)
        stats = json_stats(e.stats) if self.json_stats else None
        run = m.run_fields(
            stop_reason=e.stop_reason,
            total_cost_usd=e.cost.total_usd,
            model_usage=model_usage_of(e.cost),
            structured=e.structured,
            structured_output=e.structured_output,
            exit_code=turn_exit_code(e, self.cancelled_code() if e.cancelled else 130),
            retryable=e.retryable,
        )
        run.update(self.result_extra)
        if e.error is None:
            return m.result_success(
                uuid=self.new_uuid(),
                session_id=self.session_id,
                duration_ms=e.duration_ms,
                duration_api_ms=e.stats.api_ms,
                num_turns=e.num_turns,
                result=e.text,
                usage=usage,
                permission_denials=self.permission_denials,
                stats=stats,
                run=run,
            )
        return m.result_error(
            uuid=self.new_uuid(),
            session_id=self.session_id,
            duration_ms=e.duration_ms,
            duration_api_ms=e.stats.api_ms,
            num_turns=e.num_turns,
            usage=usage,
            permission_denials=self.permission_denials,
            message=e.error,
            subtype=e.subtype,
            stats=stats,
            partial=e.text,
            run=run,
        )

    def error_result(self, message: str, model: str, cost: ev.RunCost) -> JsonDict:
        """An error ``result`` that ends a turn which never ran (a rejected input line): zero
        stats (for ``model``), the session's running cost."""
        return self.result(
            ev.TurnFinished(
                text="",
                error=message,
                subtype="error_during_execution",
                num_turns=0,
                duration_ms=0,
                stats=ev.TurnStats(model=model),
                cost=cost,
            )
        )


class BoundRecords:
    """Writes a ``tool_result_bound`` record to ``out`` after each cut ``tool_result``.

    Subscribe it after the :class:`HeadlessEmitter` sharing its ``out``, so each record comes
    right after the ``user`` message it describes.  ``artifact_info(path)`` gives ``{"path",
    "sha256", "bytes"}`` of a saved artifact (``None`` when it cannot be read)."""

    def __init__(
        self, session_id: str, out: Out, artifact_info: Callable[[str], JsonDict | None]
    ) -> None:
        self.session_id = session_id
        self.out = out
        self.artifact_info = artifact_info

    def __call__(self, event: ev.Event) -> None:
        if type(event) is not ev.ToolFinished:
            return
        path = event.artifact
        record = bound_record(
            event.response,
            session_id=self.session_id,
            parent_tool_use_id=event.parent,
            artifact=lambda: None if path is None else self.artifact_info(path),
        )
        if record is not None:
            self.out(record)


_HANDLERS: dict[type, Callable[[HeadlessEmitter, ev.Event], None]] = {
    ev.TurnStarted: HeadlessEmitter._turn_started,  # type: ignore[dict-item]
    ev.ModelCallStarted: HeadlessEmitter._model_call_started,  # type: ignore[dict-item]
    ev.TextDelta: HeadlessEmitter._delta,  # type: ignore[dict-item]
    ev.ThinkingDelta: HeadlessEmitter._delta,  # type: ignore[dict-item]
    ev.ToolUse: HeadlessEmitter._tool_use,  # type: ignore[dict-item]
    ev.ModelCallFinished: HeadlessEmitter._model_call_finished,  # type: ignore[dict-item]
    ev.ToolProgress: HeadlessEmitter._tool_progress,  # type: ignore[dict-item]
    ev.ToolFinished: HeadlessEmitter._tool_finished,  # type: ignore[dict-item]
    ev.SubagentStarted: HeadlessEmitter._subagent_started,  # type: ignore[dict-item]
    ev.SubagentFinished: HeadlessEmitter._subagent_finished,  # type: ignore[dict-item]
    ev.SubagentFailed: HeadlessEmitter._subagent_failed,  # type: ignore[dict-item]
    ev.RecordingDegraded: HeadlessEmitter._recording_degraded,  # type: ignore[dict-item]
    ev.CompactionStarted: HeadlessEmitter._compaction_started,  # type: ignore[dict-item]
    ev.CompactionFinished: HeadlessEmitter._compaction_finished,  # type: ignore[dict-item]
    ev.TurnFinished: HeadlessEmitter._turn_finished,  # type: ignore[dict-item]
    ev.HookRan: HeadlessEmitter._hook_ran,  # type: ignore[dict-item]
}
"""Which events reach the wire, and how; the others (prompts, pending and started calls,
abandoned calls) have no headless message of their own."""


__all__ = [
    "BoundRecords",
    "HeadlessEmitter",
    "json_stats",
    "model_usage_of",
    "turn_exit_code",
    "usage_of",
]
