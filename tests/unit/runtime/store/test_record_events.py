"""The recorder as an event subscriber: what ``session/load`` and ``--resume`` read back."""

from __future__ import annotations

from pathlib import Path

from headwire import events as ev
from headwire.runtime.store.record_events import RecordingSubscriber
from headwire.runtime.store.recording import Recorder, conversation_of, read_records


def _recorder(tmp_path: Path) -> tuple[Recorder, RecordingSubscriber]:
    recorder = Recorder(tmp_path / "home", tmp_path, "s1")
    published: list[ev.Event] = []
    return recorder, RecordingSubscriber(recorder, published.append)


def _finished(parent: str | None = None) -> ev.TurnFinished:
    return ev.TurnFinished(
        text="",
        error=None,
        subtype="success",
        num_turns=1,
        duration_ms=0,
        stats=ev.TurnStats(model="m"),
        parent=parent,
    )


def test_a_lone_surrogate_is_read_back(tmp_path: Path) -> None:
    """A model may send ``\\ud800`` (JSON allows it); the record holding it must not vanish."""
    recorder, record = _recorder(tmp_path)
    message = {"role": "assistant", "content": "half \ud800 a pair"}
    record(ev.TextDelta(text="half \ud800 a pair"))
    record(ev.ModelCallFinished(usage=ev.Usage(), message=message))
    recorder.close()
    [assistant] = list(read_records(recorder.path))
    assert assistant["message"] == message
    assert conversation_of(recorder.path) == [message]


def _records(recorder: Recorder) -> list[dict[str, object]]:
    recorder.close()
    keep = ("type", "call_id", "name", "chunks", "content", "reasoning_content", "abandoned")
    keep += ("parent_tool_use_id",)
    return [{k: r[k] for k in keep if k in r} for r in read_records(recorder.path)]


def test_what_session_load_needs_is_recorded(tmp_path: Path) -> None:
    recorder, record = _recorder(tmp_path)
    call = {"id": "c1", "type": "function", "function": {"name": "glob", "arguments": "{}"}}
    message = {
        "role": "assistant",
        "content": "ab",
        "reasoning_content": "xyz",
        "tool_calls": [call],
    }
    for event in (
        ev.UserPrompt(text="go", message={"role": "user", "content": "go"}),
        ev.ThinkingDelta(text="xy"),
        ev.ThinkingDelta(text=""),
        ev.TextDelta(text="a"),
        ev.ThinkingDelta(text="z"),
        ev.TextDelta(text="b"),
        ev.ModelCallFinished(usage=ev.Usage(), message=message),
        ev.ToolCallPending(call_id="c1", name="glob", args={}),
        ev.ToolStarted(call_id="c1", name="glob", args={}),
        ev.SubagentStarted(
            task_id="t", call_id="c1", description="d", subagent_type="gp", prompt="p"
        ),
        ev.TextDelta(text="half", parent="c1"),  # the subagent is cancelled mid-answer
        ev.SubagentFinished(
            task_id="t", call_id="c1", status="cancelled", duration_ms=0, tool_uses=0
        ),
        ev.ToolAbandoned(call_id="c1", message="Operation cancelled."),
        ev.ThinkingDelta(text="never finished"),  # a model error mid-stream ends the turn
        _finished(),
    ):
        record(event)
    assert _records(recorder) == [
        {"type": "user"},
        {
            "type": "assistant",
            "chunks": [["thinking", [2, 0]], ["text", [1]], ["thinking", [1]], ["text", [1]]],
        },
        {"type": "tool_pending", "call_id": "c1", "name": "glob"},
        {"type": "tool_started", "call_id": "c1", "name": "glob"},
        {"type": "task_started", "call_id": "c1"},
        {
            "type": "partial_assistant",
            "content": "half",
            "reasoning_content": "",
            "chunks": [["text", [4]]],
            "parent_tool_use_id": "c1",
        },
        {"type": "tool_result", "call_id": "c1", "abandoned": True},
        {
            "type": "partial_assistant",
            "content": "",
            "reasoning_content": "never finished",
            "chunks": [["thinking", [14]]],
        },
        {"type": "result"},
    ]
    # --resume reads the conversation only: the new records are invisible to the model
    assert [m["role"] for m in conversation_of(recorder.path)] == ["user", "assistant", "tool"]


def test_a_call_without_deltas_records_no_chunks(tmp_path: Path) -> None:
    recorder, record = _recorder(tmp_path)
    record(ev.ModelCallFinished(usage=ev.Usage(), message={"role": "assistant", "content": None}))
    record(_finished())
    assert _records(recorder) == [{"type": "assistant", "chunks": []}, {"type": "result"}]
