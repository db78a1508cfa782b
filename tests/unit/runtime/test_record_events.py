"""The recorder as an event subscriber: what ``session/load`` and ``--resume`` read back."""

from __future__ import annotations

from pathlib import Path

from headwire import events as ev
from headwire.runtime.record_events import RecordingSubscriber
from headwire.runtime.recording import Recorder, conversation_of, read_records


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
