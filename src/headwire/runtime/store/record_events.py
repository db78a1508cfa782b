"""The recorder as a subscriber of the agent's events: one JSONL record per conversation step.

:class:`RecordingSubscriber` turns events into :class:`~headwire.runtime.store.recording.Recorder`
records, unprojected (the recording is the canonical history ``--resume`` and ``session/load``
read back):

* :class:`~headwire.events.UserPrompt` -> ``user`` (the prompt message);
* :class:`~headwire.events.ModelCallFinished` -> ``assistant`` (the message with its tool
  calls, the call's usage, and ``chunks``: how its text and reasoning streamed, see below);
* :class:`~headwire.events.ToolCallPending` -> ``tool_pending`` and
  :class:`~headwire.events.ToolStarted` -> ``tool_started`` (``call_id``, ``name``; the
  arguments are the announcing ``assistant`` record's);
* :class:`~headwire.events.ToolFinished` -> ``tool_result`` (the model-facing message, the call's
  name, arguments, error and full display, the artifact's path);
* :class:`~headwire.events.ToolAbandoned` -> ``tool_result`` with ``abandoned: true``, a call a
  cancellation cut off;
* :class:`~headwire.events.SubagentStarted` -> ``task_started`` (``call_id``, ``task_id``,
  ``subagent_type``, ``description``);
* deltas of a model call that never finished (cancelled or failed mid-stream) ->
  ``partial_assistant`` (``content``, ``reasoning_content``, ``chunks``; no ``message``: the
  conversation never kept them), written when the turn or the subagent ends;
* :class:`~headwire.events.TurnFinished` -> ``result`` (its ``subtype``, the turn's ``usage``,
  and the session's running ``total_cost_usd`` and ``model_usage`` per model, from which a
  resumed session's totals go on, :func:`headwire.runtime.agent.meter.recorded_usage`).

``chunks`` is ``[[kind, [size, ...]], ...]``: runs of deltas of one ``kind`` (``"thinking"``
or ``"text"``) in stream order, each ``size`` the number of characters of one delta, so
``session/load`` re-sends exactly the chunks the live session sent.  An ``assistant`` record
with ``chunks`` is followed by ``tool_pending``/``tool_started`` records for its calls; readers
of older recordings (no ``chunks``) announce every call of the message instead.  Only
``message`` feeds the conversation (``--resume``), so the other records and fields are
invisible to the model.

A subagent's records carry its ``parent_tool_use_id``.  When a write fails, recording stops and
:class:`~headwire.events.RecordingDegraded` is published once, so the wires can say so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from headwire import events as ev
from headwire.protocol.messages import usage_dict
from headwire.runtime.store.recording import RECORDING_FAILURE_MESSAGE, Recorder

Chunks = list[list[Any]]


def _usage_record(usage: ev.Usage) -> dict[str, int]:
    """A usage as ``model_usage`` keeps it (read back by ``usage_from_record``)."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "total_tokens": usage.total_tokens,
    }


class _Stream:
    """The deltas of one model call so far: their runs of sizes, and the text (kept only until
    the call ends, for a call that never does)."""

    __slots__ = ("chunks", "text", "thinking")

    def __init__(self) -> None:
        self.chunks: Chunks = []
        self.text: list[str] = []
        self.thinking: list[str] = []

    def add(self, kind: str, text: str) -> None:
        if self.chunks and self.chunks[-1][0] == kind:
            self.chunks[-1][1].append(len(text))
        else:
            self.chunks.append([kind, [len(text)]])
        (self.text if kind == "text" else self.thinking).append(text)


class RecordingSubscriber:
    """Writes a session's events to its recording; announces a failure on ``publish``."""

    def __init__(self, recorder: Recorder, publish: ev.EventSink) -> None:
        self.recorder = recorder
        self.publish = publish
        self._streams: dict[str | None, _Stream] = {}
        """The model call streaming now, per agent (``parent``)."""

    def __call__(self, event: ev.Event) -> None:
        """Record one event (those that are not conversation steps are ignored)."""
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _delta(self, event: ev.TextDelta | ev.ThinkingDelta) -> None:
        kind = "text" if type(event) is ev.TextDelta else "thinking"
        stream = self._streams.get(event.parent)
        if stream is None:
            stream = self._streams[event.parent] = _Stream()
        stream.add(kind, event.text)

    def _user(self, event: ev.UserPrompt) -> None:
        self._record(event.parent, "user", message=event.message)

    def _assistant(self, event: ev.ModelCallFinished) -> None:
        u = event.usage
        usage = usage_dict(u.input_tokens, u.output_tokens, u.cached_tokens, u.total_tokens)
        stream = self._streams.pop(event.parent, None)
        chunks = stream.chunks if stream is not None else []
        self._record(event.parent, "assistant", message=event.message, usage=usage, chunks=chunks)

    def _tool_step(self, event: ev.ToolCallPending | ev.ToolStarted) -> None:
        kind = "tool_pending" if type(event) is ev.ToolCallPending else "tool_started"
        self._record(event.parent, kind, call_id=event.call_id, name=event.name)

    def _subagent_started(self, event: ev.SubagentStarted) -> None:
        self._record(
            event.parent,
            "task_started",
            call_id=event.call_id,
            task_id=event.task_id,
            subagent_type=event.subagent_type,
            description=event.description,
        )

    def _subagent_finished(self, event: ev.SubagentFinished) -> None:
        self._flush_partial(event.call_id)

    def _tool_finished(self, event: ev.ToolFinished) -> None:
        r = event.response
        self._tool_result(
            event.parent,
            r.call_id,
            event.model_text,
            name=r.name,
            args=r.args,
            is_error=r.error is not None,
            error=r.error,
            error_type=r.error_type,
            display=r.display,
            artifact=event.artifact,
        )

    def _tool_abandoned(self, event: ev.ToolAbandoned) -> None:
        self._tool_result(
            event.parent,
            event.call_id,
            event.message,
            is_error=True,
            error=event.message,
            abandoned=True,
        )

    def _tool_result(self, parent: str | None, call_id: str, content: str, **fields: Any) -> None:
        """A ``tool_result`` record: the model-facing ``tool`` message, then ``fields``."""
        message = {"role": "tool", "tool_call_id": call_id, "content": content}
        self._record(parent, "tool_result", message=message, call_id=call_id, **fields)

    def _compaction(self, event: ev.CompactionFinished) -> None:
        """A ``compaction`` record: the checkpoint (the compacted history) a resumed session
        continues from; every record before it stays."""
        self._record(
            event.parent,
            "compaction",
            checkpoint=list(event.messages),
            trigger=event.trigger,
            pre_tokens=event.pre_tokens,
            post_tokens=event.post_tokens,
            duration_ms=event.duration_ms,
            usage=_usage_record(event.usage),
        )

    def _turn_finished(self, event: ev.TurnFinished) -> None:
        for parent in list(self._streams):
            self._flush_partial(parent)
        u = event.stats.usage
        self._record(
            event.parent,
            "result",
            is_error=event.error is not None,
            result=event.text,
            error=event.error,
            num_turns=event.num_turns,
            subtype=event.subtype,
            usage=usage_dict(u.input_tokens, u.output_tokens, u.cached_tokens, u.total_tokens),
            total_cost_usd=event.cost.total_usd,
            model_usage={name: _usage_record(c.usage) for name, c in event.cost.by_model},
        )

    def _flush_partial(self, parent: str | None) -> None:
        """Record the deltas of ``parent``'s model call that ended without a message."""
        stream = self._streams.pop(parent, None)
        if stream is None:
            return
        self._record(
            parent,
            "partial_assistant",
            content="".join(stream.text),
            reasoning_content="".join(stream.thinking),
            chunks=stream.chunks,
        )

    def _record(self, parent: str | None, kind: str, **fields: Any) -> None:
        recorder = self.recorder
        if parent is not None:
            fields["parent_tool_use_id"] = parent
        recorder.record(kind, **fields)
        if recorder.failed is not None and not recorder.failure_reported:
            recorder.failure_reported = True  # upstream's notice, once: the run goes on
            self.publish(
                ev.RecordingDegraded(
                    session_id=recorder.session_id,
                    message=RECORDING_FAILURE_MESSAGE,
                    reason=recorder.failed,
                )
            )


_HANDLERS: dict[type, Callable[[RecordingSubscriber, Any], None]] = {
    ev.TextDelta: RecordingSubscriber._delta,
    ev.ThinkingDelta: RecordingSubscriber._delta,
    ev.UserPrompt: RecordingSubscriber._user,
    ev.ModelCallFinished: RecordingSubscriber._assistant,
    ev.ToolCallPending: RecordingSubscriber._tool_step,
    ev.ToolStarted: RecordingSubscriber._tool_step,
    ev.SubagentStarted: RecordingSubscriber._subagent_started,
    ev.SubagentFinished: RecordingSubscriber._subagent_finished,
    ev.ToolFinished: RecordingSubscriber._tool_finished,
    ev.ToolAbandoned: RecordingSubscriber._tool_abandoned,
    ev.CompactionFinished: RecordingSubscriber._compaction,
    ev.TurnFinished: RecordingSubscriber._turn_finished,
}
"""Which events are conversation steps, and how each is recorded (one lookup per event)."""

__all__ = ["RecordingSubscriber"]
