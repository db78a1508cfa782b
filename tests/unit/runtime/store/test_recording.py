"""The recording reader reads back every record the recorder wrote."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime.store.recording import Recorder, conversation_of, read_records
from tests.unit.wire.test_decode import any_text, as_read, exact_values


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(any_text(12), exact_values()), min_size=1, max_size=6))
def test_every_record_written_is_read_back(records: list[tuple[str, Any]]) -> None:
    """Invariant: ``read_records`` yields each record ``Recorder.record`` wrote, equal to it
    (strings of any code units, lone surrogates included), in order."""
    with tempfile.TemporaryDirectory() as tmp:
        recorder = Recorder(Path(tmp), Path(tmp), "s")
        for text, value in records:
            recorder.record("user", text=text, value=value)
        recorder.close()
        assert recorder.failed is None
        back = list(read_records(recorder.path))
    assert len(back) == len(records)
    for record, (text, value) in zip(back, records, strict=True):
        assert record["text"] == as_read(text)
        assert as_read(record["value"]) == as_read(value)


def test_a_tool_result_naming_a_latin1_file_is_resumed_not_replaced(tmp_path: Path) -> None:
    """Before the fix the reader skipped the line, and resume said "Tool call interrupted"."""
    recorder = Recorder(tmp_path, tmp_path, "s")
    call = {"id": "c1", "type": "function", "function": {"name": "glob", "arguments": "{}"}}
    recorder.record("assistant", message={"role": "assistant", "tool_calls": [call]})
    result = {"role": "tool", "tool_call_id": "c1", "content": "/p/caf\udce9.txt"}
    recorder.record("tool_result", message=result)
    recorder.close()
    assert conversation_of(recorder.path)[-1] == result


def test_resume_goes_on_from_the_last_checkpoint(tmp_path: Path) -> None:
    """The records before a ``compaction`` stay in the file; the conversation read back is the
    last checkpoint plus what came after it (a subagent's checkpoint does not count)."""
    import pytest

    from headwire.runtime.store.recording import RecordingError

    recorder = Recorder(tmp_path, tmp_path, "s")
    first = {"role": "user", "content": "the task"}
    recorder.record("user", message=first)
    recorder.record("assistant", message={"role": "assistant", "content": "old"})
    checkpoint = [first, {"role": "user", "content": "summary"}]
    recorder.record("compaction", checkpoint=checkpoint, trigger="auto")
    recorder.record("compaction", checkpoint=[], parent_tool_use_id="call_1")
    after = {"role": "assistant", "content": "new"}
    recorder.record("assistant", message=after)
    recorder.close()
    assert conversation_of(recorder.path) == [*checkpoint, after]
    assert sum(1 for _ in read_records(recorder.path)) == 5
    damaged = Recorder(tmp_path, tmp_path, "d")
    damaged.record("compaction", checkpoint=[{"role": "nobody"}])
    damaged.close()
    with pytest.raises(RecordingError, match="checkpoint"):
        conversation_of(damaged.path)
