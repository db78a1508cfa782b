"""Reading transcripts and pruning (``runtime/store/sessions.py``), on real files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from headwire.runtime.store.recording import Recorder
from headwire.runtime.store.sessions import ArtifactFiles, apply_prune, load_transcript, plan_prune
from headwire.runtime.store.storage import ArtifactStore
from headwire.transcript.model import ToolCall


def record_call(rec: Recorder, display: str, artifact: str | None) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    rec.record("user", message={"role": "user", "content": "go"})
    rec.record("assistant", message={"role": "assistant", "content": None, "tool_calls": [call]})
    rec.record(
        "tool_result",
        message={"role": "tool", "tool_call_id": "c", "content": display[:10]},
        call_id="c",
        name="run",
        is_error=False,
        display=display,
        artifact=artifact,
    )
    rec.record("result", is_error=False, result="", error=None, num_turns=1)


def only_call(home: Path, path: Path) -> ToolCall:
    call = load_transcript(home, path).turns[0].entries[0]
    assert isinstance(call, ToolCall)
    return call


def test_the_artifact_is_read_by_its_ends_and_a_file_outside_the_artifacts_never(
    tmp_path: Path,
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    data = b"H" * 100_000 + "é".encode() * 10 + b"T" * 100_000
    artifact = ArtifactStore(home, cwd).save("run", data)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    link = artifact.parent / "link.output"
    link.symlink_to(secret)
    rec = Recorder(home, cwd, "s")
    record_call(rec, "display of the big output", str(artifact))
    rec.close()
    call = only_call(home, rec.path)
    assert call.result is not None and call.result.output is not None
    out = call.result.output
    assert call.result.output_source == "artifact" and out.total_bytes == len(data)
    assert out.head.startswith("HHH") and out.tail.endswith("TTT") and not out.whole
    for hostile in (
        str(secret),
        str(link),
        str(artifact.parent / ".." / ".." / ".." / "secret.txt"),
    ):
        rec = Recorder(home, cwd, f"s-{len(hostile)}")
        record_call(rec, "shown instead", hostile)
        rec.close()
        result = only_call(home, rec.path).result
        assert result is not None and result.artifact_missing
        assert result.output is not None and "SECRET" not in result.output.head
    assert ArtifactFiles(home)(str(secret), 100) is None


def test_a_long_recording_line_and_a_lone_surrogate_line_are_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rec = Recorder(home, tmp_path, "s")
    record_call(rec, "x" * 1_000_000 + "\ud800", None)
    rec.close()
    with rec.path.open("ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"lone \\udc00 one"}}\n{torn')
    t = load_transcript(home, rec.path)
    assert len(t.turns) == 2 and t.turns[1].prompt.head.startswith("lone ")
    call = t.turns[0].entries[0]
    assert isinstance(call, ToolCall) and call.result is not None and call.result.bounded


def age(path: Path, days: float) -> None:
    when = time.time() - days * 86400
    os.utime(path, (when, when))


def test_prune_deletes_what_is_old_and_keeps_the_artifacts_of_kept_recordings(
    tmp_path: Path,
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    store = ArtifactStore(home, cwd)
    kept_old_artifact = store.save("run", b"1")
    old_artifact = store.save("run", b"22")
    new_artifact = store.save("run", b"333")
    orphan = store.save("run", b"4444")
    old = Recorder(home, cwd, "old")
    record_call(old, "x", str(old_artifact))
    old.close()
    new = Recorder(home, cwd, "new")
    record_call(new, "y", str(kept_old_artifact))
    new.close()
    for path in (old.path, kept_old_artifact, old_artifact, orphan):
        age(path, 40)
    plan = plan_prune(home, time.time() - 30 * 86400)
    assert [p for p, _ in plan.recordings] == [old.path]
    assert sorted(p for p, _ in plan.artifacts) == sorted([old_artifact, orphan])
    assert plan.kept_referenced == 1
    assert plan.total_bytes == old.path.stat().st_size + 2 + 4
    assert apply_prune(home, plan) == []
    assert not old.path.exists() and not old_artifact.exists() and not orphan.exists()
    assert new.path.exists() and kept_old_artifact.exists() and new_artifact.exists()
    assert plan_prune(home, time.time() - 30 * 86400).total_bytes == 0
