"""Summaries of recordings without parsing them, and their cache
(``runtime/store/session_index.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime.store import session_index
from headwire.runtime.store.recording import Recorder
from headwire.runtime.store.session_index import (
    HEAD_BYTES,
    SessionNotFound,
    list_sessions,
    locate_session,
    scan_recording,
)
from headwire.runtime.store.storage import sessions_index_path


def turn(
    rec: Recorder,
    prompt: str,
    display: str = "ok",
    artifact: str | None = None,
    *,
    finish: bool = True,
) -> None:
    rec.record("user", message={"role": "user", "content": prompt})
    rec.record(
        "tool_result",
        message={"role": "tool", "content": "x"},
        call_id="c",
        display=display,
        artifact=artifact,
    )
    if finish:
        rec.record("result", is_error=False, result="done", error=None, num_turns=1)


def test_a_recording_is_summarized_from_its_head_size_and_key_counts(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "home", Path("/work/proj"), "s1")
    turn(rec, "fix  the\ntests", artifact="/a/b.output")
    turn(rec, "again", display="y" * 300_000, artifact='/a/"odd".output')
    turn(rec, "stopped", finish=False)
    rec.close()
    info = scan_recording(str(rec.path))
    assert info is not None
    assert (info.session_id, info.cwd, info.first_prompt, info.turns) == (
        "s1",
        "/work/proj",
        "fix the tests",
        3,
    )
    assert info.artifacts == ['/a/"odd".output', "/a/b.output"]
    assert info.size == rec.path.stat().st_size and info.started


def test_a_first_prompt_longer_than_the_head_is_read_from_its_start(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "home", Path("/p"), "s2")
    turn(rec, "Summarize: " + "é" * HEAD_BYTES)
    rec.close()
    info = scan_recording(str(rec.path))
    assert info is not None and info.first_prompt.startswith("Summarize: éé") and info.cwd == "/p"
    assert info.turns == 1


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.booleans(), st.integers(0, 40_000)), min_size=1, max_size=6
    )
)
def test_scanning_a_grown_file_from_where_it_stopped_equals_a_full_scan(
    steps: list[tuple[int, bool, int]],
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        rec = Recorder(Path(tmp), Path("/p"), "s")
        previous = None
        for turns, finish, size in steps:
            for i in range(turns):
                turn(rec, f"p{i}", display="z" * size, artifact=f"/art/{size}-{i}", finish=finish)
            rec.close()
            if not rec.path.exists():
                continue
            previous = scan_recording(str(rec.path), previous)
            fresh = scan_recording(str(rec.path))
            assert previous is not None and fresh is not None
            assert (previous.turns, previous.artifacts, previous.first_prompt) == (
                fresh.turns,
                fresh.artifacts,
                fresh.first_prompt,
            )


def test_artifacts_are_found_in_the_edges_of_a_huge_line_and_a_partial_line_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_index, "WHOLE_LINE_BYTES", 1000)
    monkeypatch.setattr(session_index, "EDGE_BYTES", 200)
    rec = Recorder(tmp_path, Path("/p"), "s")
    for i in range(3):
        turn(rec, f"p{i}", display="d" * 5000, artifact=f"/art/{i}")
    rec.close()
    with rec.path.open("ab") as f:
        f.write(b'{"type":"result","is_error":false')  # being written: no newline yet
    info = scan_recording(str(rec.path))
    assert info is not None and len(info.artifacts) == 3
    assert info.turns == 4 and info.results == 3 and info.scanned < info.size
    with rec.path.open("ab") as f:
        f.write(b',"num_turns":1}\n')
    grown = scan_recording(str(rec.path), info)
    assert grown is not None and grown.results == 4 and grown.turns == 4
    assert grown.scanned == grown.size


def test_the_index_is_reused_and_refreshed_and_a_broken_one_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    for i in range(3):
        rec = Recorder(home, Path(f"/p{i % 2}"), f"s{i}")
        turn(rec, f"prompt {i}")
        rec.close()
    assert [i.session_id for i in list_sessions(home)][0:3] != []
    index = sessions_index_path(home)
    assert index.stat().st_mode & 0o777 == 0o600
    calls: list[str] = []
    real = session_index._scan
    monkeypatch.setattr(
        session_index, "_scan", lambda fd, a, b, art: calls.append("scan") or real(fd, a, b, art)
    )
    list_sessions(home)
    assert calls == []  # nothing changed: nothing scanned
    rec = Recorder(home, Path("/p0"), "s0")
    turn(rec, "more")
    rec.close()
    infos = {i.session_id: i for i in list_sessions(home)}
    assert calls == ["scan"] and infos["s0"].turns == 2
    index.write_bytes(b"{not json")
    assert len(list_sessions(home)) == 3
    os.unlink(Recorder(home, Path("/p1"), "s1").path)
    assert sorted(i.session_id for i in list_sessions(home)) == ["s0", "s2"]


def test_sessions_are_found_by_id_or_unique_prefix_in_any_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for cwd, sid in [("/a", "abc-1"), ("/b", "abd-2"), ("/b", "x")]:
        rec = Recorder(home, Path(cwd), sid)
        turn(rec, "p")
        rec.close()
    assert locate_session(home, "abc-1").name == "abc-1.jsonl"
    assert locate_session(home, "abd").name == "abd-2.jsonl"
    with pytest.raises(SessionNotFound, match="ambiguous"):
        locate_session(home, "ab")
    for bad in ["", "../x", ".hidden", "a/b", "nope"]:
        with pytest.raises(SessionNotFound):
            locate_session(home, bad)
