"""The recorder as a subscriber of the agent's events: one JSONL record per conversation step.

:class:`RecordingSubscriber` turns events into :class:`~headwire.runtime.recording.Recorder`
records, unprojected (the recording is the canonical history ``--resume`` and ``session/load``
read back):

* :class:`~headwire.events.UserPrompt` -> ``user`` (the prompt message);
* :class:`~headwire.events.ModelCallFinished` -> ``assistant`` (the message with its tool
  calls, and the call's usage);
* :class:`~headwire.events.ToolFinished` -> ``tool_result`` (the model-facing message, the call's
  name, arguments, error and full display, the artifact's path);
* :class:`~headwire.events.ToolAbandoned` -> ``tool_result`` of a call a cancellation cut off;
* :class:`~headwire.events.TurnFinished` -> ``result``.

A subagent's records carry its ``parent_tool_use_id``.  When a write fails, recording stops and
:class:`~headwire.events.RecordingDegraded` is published once, so the wires can say so.
"""

from __future__ import annotations

from typing import Any

from headwire import events as ev
from headwire.protocol.messages import usage_dict
from headwire.runtime.recording import RECORDING_FAILURE_MESSAGE, Recorder


class RecordingSubscriber:
    """Writes a session's events to its recording; announces a failure on ``publish``."""

    def __init__(self, recorder: Recorder, publish: ev.EventSink) -> None:
        self.recorder = recorder
        self.publish = publish

    def __call__(self, event: ev.Event) -> None:
        """Record one event (those that are not conversation steps are ignored)."""
        if isinstance(event, ev.UserPrompt):
            self._record(event.parent, "user", message=event.message)
        elif isinstance(event, ev.ModelCallFinished):
            u = event.usage
            usage = usage_dict(u.input_tokens, u.output_tokens, u.cached_tokens, u.total_tokens)
            self._record(event.parent, "assistant", message=event.message, usage=usage)
        elif isinstance(event, ev.ToolFinished):
            r = event.response
            message = {"role": "tool", "tool_call_id": r.call_id, "content": event.model_text}
            self._record(
                event.parent,
                "tool_result",
                message=message,
                call_id=r.call_id,
                name=r.name,
                args=r.args,
                is_error=r.error is not None,
                error=r.error,
                error_type=r.error_type,
                display=r.display,
                artifact=event.artifact,
            )
        elif isinstance(event, ev.ToolAbandoned):
            message = {"role": "tool", "tool_call_id": event.call_id, "content": event.message}
            self._record(
                event.parent,
                "tool_result",
                message=message,
                call_id=event.call_id,
                is_error=True,
                error=event.message,
            )
        elif isinstance(event, ev.TurnFinished):
            self._record(
                event.parent,
                "result",
                is_error=event.error is not None,
                result=event.text,
                error=event.error,
                num_turns=event.num_turns,
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


__all__ = ["RecordingSubscriber"]
