"""Records to a :class:`~headwire.transcript.model.Transcript` (pure).

:class:`TranscriptBuilder` takes the records of ``runtime/store/recording.py`` one at a time, in
file order, and keeps only bounded excerpts, so a recording of gigabytes builds a transcript of a
few megabytes.  Reading the artifact of a tool result is I/O: the caller passes a function for it.

The wire view is rebuilt from the recording the way the emitter builds it
(:func:`headwire.boundary.select_display`, then
:func:`headwire.projection.project_tool_result_content`); a long string read by its ends
(:class:`~headwire.transcript.long_lines.LongText`) projects exactly as the whole would.
Records whose ``parent_tool_use_id`` names a known call nest under that call.

Invariants (hypothesis properties in ``tests/unit/transcript/test_builder.py``): building never
raises on any sequence of JSON objects; every excerpt shows at most the builder's byte budget;
every ``tool_result`` record with a known call id lands on that call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from headwire.boundary import select_display
from headwire.events import ToolResponse
from headwire.projection import json_string_json_bytes, project_tool_result_content
from headwire.transcript.excerpt import Excerpt, excerpt_of, shrink, utf8
from headwire.transcript.long_lines import LongText
from headwire.transcript.model import (
    EXCERPT_BYTES,
    Outcome,
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Turn,
)
from headwire.wire import encode

__all__ = [
    "ArtifactReader",
    "TranscriptBuilder",
    "build_transcript",
]

ArtifactReader = Callable[[str, int], Excerpt | None]
"""``read(path, budget)``: an excerpt of the artifact at ``path``, ``None`` when it is gone."""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


TextLike = str | LongText
"""A recorded string: whole, or known by its ends when it was too long to decode."""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: Any) -> TextLike:
    return value if isinstance(value, str | LongText) else ""


def _opt_text(value: Any) -> TextLike | None:
    return value if isinstance(value, str | LongText) else None


def _short(value: TextLike | None) -> str | None:
    """A text short enough to keep whole (a long one is cut to its head, marked)."""
    if isinstance(value, LongText):
        return value.head[:4096] + " …"
    return value


def _plain(value: Any) -> Any:
    """``value`` with every :class:`LongText` as its cut head (for re-encoding)."""
    if isinstance(value, LongText):
        return _short(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _content_text(content: Any) -> TextLike:
    """A message's ``content``: a string, or the text of a list of parts."""
    if isinstance(content, str | LongText):
        return content
    if isinstance(content, list):
        return "".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


class TranscriptBuilder:
    """Folds records into a :class:`Transcript`; feed with :meth:`add`, end with :meth:`finish`."""

    def __init__(
        self,
        session_id: str,
        read_artifact: ArtifactReader | None = None,
        budget: int = EXCERPT_BYTES,
    ) -> None:
        self.transcript = Transcript(session_id)
        self._read_artifact = read_artifact
        self._budget = budget
        self._calls: dict[str, ToolCall] = {}

    def _excerpt(self, text: TextLike, head_share: float = 0.2) -> Excerpt:
        if isinstance(text, LongText):
            shown = len(utf8(text.head)) + len(utf8(text.tail))
            total = max(text.utf8_bytes, shown)
            whole = Excerpt(text.head, text.tail, total, total - shown)
            return shrink(whole, self._budget, head_share)
        return excerpt_of(text, self._budget, head_share)

    def _turn(self, timestamp: str) -> Turn:
        turns = self.transcript.turns
        if not turns:  # records before any prompt (a hand-made or damaged file)
            turns.append(Turn(1, self._excerpt(""), timestamp))
        return turns[-1]

    def _target(self, record: dict[str, Any], timestamp: str) -> list[Text | ToolCall]:
        parent = record.get("parent_tool_use_id")
        if isinstance(parent, str) and parent in self._calls:
            return self._calls[parent].children
        return self._turn(timestamp).entries

    def add(self, record: dict[str, Any]) -> None:
        """Fold one record in (records of unknown shape are counted and skipped)."""
        kind = record.get("type")
        timestamp = _str(record.get("timestamp"))
        t = self.transcript
        if not t.started:
            t.started = timestamp
        t.ended = timestamp or t.ended
        if t.cwd is None and isinstance(record.get("cwd"), str):
            t.cwd = record["cwd"]
        message = record.get("message")
        message = message if isinstance(message, dict) else {}
        if kind == "user":
            self._user(record, message, timestamp)
        elif kind == "assistant":
            self._assistant(record, message, timestamp)
        elif kind == "tool_result":
            self._tool_result(record, message, timestamp)
        elif kind == "result":
            self._turn(timestamp).outcome = Outcome(
                bool(record.get("is_error")),
                _short(_opt_text(record.get("error"))),
                _int(record.get("num_turns")),
                timestamp,
            )
        else:
            t.unknown_records += 1

    def _user(self, record: dict[str, Any], message: dict[str, Any], timestamp: str) -> None:
        text = _content_text(message.get("content"))
        parent = record.get("parent_tool_use_id")
        if isinstance(parent, str) and parent:
            self._target(record, timestamp).append(
                Text("user", self._excerpt(text, 0.8), None, timestamp)
            )
            return
        turns = self.transcript.turns
        turns.append(Turn(len(turns) + 1, self._excerpt(text, 0.8), timestamp))

    def _assistant(self, record: dict[str, Any], message: dict[str, Any], timestamp: str) -> None:
        turn = self._turn(timestamp)
        turn.usage.add(record.get("usage"))
        self.transcript.usage.add(record.get("usage"))
        target = self._target(record, timestamp)
        text = _content_text(message.get("content"))
        thinking = _text(message.get("reasoning_content"))
        if text or thinking:
            target.append(
                Text(
                    "assistant",
                    self._excerpt(text, 0.8),
                    self._excerpt(thinking, 0.8) if thinking else None,
                    timestamp,
                )
            )
        calls = message.get("tool_calls")
        for raw in calls if isinstance(calls, list) else []:
            if not isinstance(raw, dict):
                continue
            function = raw.get("function")
            function = function if isinstance(function, dict) else {}
            call = ToolCall(
                _str(raw.get("id")),
                _str(function.get("name")),
                self._excerpt(_text(function.get("arguments")), 0.8),
                timestamp,
            )
            target.append(call)
            self.transcript.tool_calls += 1
            if call.call_id:
                self._calls[call.call_id] = call

    def _tool_result(self, record: dict[str, Any], message: dict[str, Any], timestamp: str) -> None:
        call_id = _str(record.get("call_id")) or _str(message.get("tool_call_id"))
        call = self._calls.get(call_id)
        if call is None:  # a result whose call was not recorded
            args = record.get("args")
            call = ToolCall(
                call_id,
                _str(record.get("name")),
                self._excerpt(encode(_plain(args)).decode() if isinstance(args, dict) else "", 0.8),
                timestamp,
            )
            self._target(record, timestamp).append(call)
            self.transcript.tool_calls += 1
            if call_id:
                self._calls[call_id] = call
        call.result = self._result(record, message, call, timestamp)

    def _result(
        self, record: dict[str, Any], message: dict[str, Any], call: ToolCall, timestamp: str
    ) -> ToolResult:
        is_error = bool(record.get("is_error"))
        content = _content_text(message.get("content"))
        error = _short(_opt_text(record.get("error")))
        display = _opt_text(record.get("display"))

        def proxy(value: TextLike | None) -> str | None:
            return value.proxy() if isinstance(value, LongText) else value

        response = ToolResponse(
            call_id=call.call_id,
            name=call.name,
            args={},
            output=None if is_error else proxy(content),
            part_error=proxy(content) if is_error and content else None,
            error=error,
            error_type=_opt_str(record.get("error_type")),
            display=proxy(display),
        )
        selected = select_display(response)
        source = next(
            (
                v
                for v in (display, content)
                if isinstance(v, LongText) and selected is not None and v.proxy() == selected
            ),
            None,
        )
        wire: Excerpt | None = None
        wire_bytes = display_bytes = 0
        bounded = False
        if selected is not None:
            # a LongText's proxy projects exactly as the whole value would (see long_lines)
            projected = project_tool_result_content(selected)
            bounded = projected is not selected
            wire_bytes = json_string_json_bytes(projected)
            if source is not None:
                display_bytes = source.json_bytes
            else:
                display_bytes = json_string_json_bytes(selected) if bounded else wire_bytes
            wire = self._excerpt(projected)
        artifact = _opt_str(record.get("artifact"))
        output: Excerpt | None = None
        origin = ""
        missing = False
        if artifact and self._read_artifact is not None:
            output = self._read_artifact(artifact, self._budget)
            missing = output is None
            origin = "artifact" if output is not None else ""
        if output is None:
            full: TextLike | None = display
            if full is None or (isinstance(full, str) and not full.strip()):
                full = content or error
            if full:
                output = self._excerpt(full)
                origin = "recording"
        return ToolResult(
            is_error=is_error,
            error=error,
            error_type=response.error_type,
            wire=wire,
            wire_json_bytes=wire_bytes,
            display_json_bytes=display_bytes,
            bounded=bounded,
            output=output,
            output_source=origin,
            artifact=artifact,
            artifact_missing=missing,
            timestamp=timestamp,
        )

    def finish(self) -> Transcript:
        """The transcript built so far."""
        return self.transcript


def build_transcript(
    session_id: str,
    records: Iterable[dict[str, Any]],
    read_artifact: ArtifactReader | None = None,
    budget: int = EXCERPT_BYTES,
) -> Transcript:
    """The transcript of ``records`` (see :class:`TranscriptBuilder`)."""
    builder = TranscriptBuilder(session_id, read_artifact, budget)
    for record in records:
        builder.add(record)
    return builder.finish()
