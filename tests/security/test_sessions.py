"""Sessions stay apart: ids checked where they are created, one process per recording, one
folder per project, and flag values checked up front (issue 11 item 4, issue 12 items 7 and 9).

Every test runs the real CLI as a subprocess; each failed before its fix.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from headwire.runtime.store.recording import Recorder, SessionInUseError, find_session
from headwire.runtime.store.storage import chats_dir, legacy_chats_dir
from tests.e2e.helpers import Proc, env_for, run_cli, write_script
from tests.fakes.fake_openai import FakeOpenAI
from tests.faults.util import no_traceback, start, wait_until


def _run_in(cwd: Path, home: Path, args: list[str], **env: str) -> Proc:
    cwd.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "headwire", *args],
        cwd=cwd,
        env=env_for(home, **env),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    return Proc(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"), home)


def _jsonl_files(top: Path) -> list[Path]:
    return sorted(top.rglob("*.jsonl"))


@pytest.mark.parametrize("bad", ["../../escaped", "/ABS/escaped", "a/b", ".hidden", "-x", ""])
def test_a_session_id_that_is_not_a_file_name_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    """Before: ``../../escaped`` and ``/ABS/escaped`` wrote the recording outside the data
    directory, and ``a/b`` was accepted but could never be resumed."""
    bad = bad.replace("/ABS", str(tmp_path))
    proc = run_cli(
        ["--model", "scripted:done", "-o", "json", f"--session-id={bad}", "-p", "hi"], tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert "Invalid session ID" in proc.stderr
    no_traceback(proc.stderr)
    assert _jsonl_files(tmp_path) == []


def test_an_existing_session_id_without_resume_is_refused(tmp_path: Path) -> None:
    """Before: the second run appended a second conversation to the first one's file."""
    base = ["--model", "scripted:done", "-o", "json", "--session-id", "mine"]
    first = run_cli([*base, "-p", "one"], tmp_path)
    assert first.returncode == 0, first.stderr
    (recording,) = _jsonl_files(tmp_path)
    before = recording.read_bytes()
    second = run_cli([*base, "-p", "two"], tmp_path)
    assert second.returncode == 2
    assert "session mine already exists" in second.stderr and "--resume mine" in second.stderr
    assert recording.read_bytes() == before
    resumed = run_cli(
        ["--model", "scripted:done", "-o", "json", "--resume", "mine", "-p", "3"], tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr


def test_a_second_process_on_a_running_session_gets_a_clear_error(tmp_path: Path) -> None:
    """Before: ``--resume`` of a session another process was running interleaved both
    processes' turns in one recording."""
    script = write_script(
        tmp_path / "slow.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "sleep 20"}},
            {"text": "first done"},
            {"text": "second done"},
        ],
    )
    first = start(
        ["--script", str(script), "--yolo", "-o", "stream-json", "--session-id", "busy", "-p", "1"],
        tmp_path,
    )
    try:
        wait_until(lambda: '"tool_use"' in first.out.decode(errors="replace"), "the tool call")
        second = run_cli(
            ["--script", str(script), "--yolo", "-o", "json", "--resume", "busy", "-p", "2"],
            tmp_path,
        )
        assert second.returncode == 2, second.stderr
        assert "Session busy is in use by another headwire process" in second.stderr
        no_traceback(second.stderr)
    finally:
        first.proc.terminate()
        first.wait()
    (recording,) = _jsonl_files(tmp_path / "home")
    prompts = [
        r["message"]["content"]
        for r in map(json.loads, recording.read_text().splitlines())
        if r.get("type") == "user" and isinstance(r["message"].get("content"), str)
    ]
    assert prompts == ["1"]


def test_two_recorders_of_one_session_exclude_each_other(tmp_path: Path) -> None:
    """The race of two new sessions with one id: the second recorder stops with the reason."""
    first = Recorder(tmp_path, tmp_path, "s")
    first.record("user", n=1)
    second = Recorder.__new__(Recorder)  # as a second process that checked before the first
    second.__init__(tmp_path / "elsewhere", tmp_path, "s")  # type: ignore[misc]
    second.path = first.path
    second.record("user", n=2)
    assert second.failed is not None and "in use by another headwire process" in second.failed
    with pytest.raises(SessionInUseError):
        Recorder(tmp_path, tmp_path, "s")  # exists now: refused up front
    first.close()
    third = Recorder(tmp_path, tmp_path, "s")  # the lock went with the first one
    third.record("user", n=3)
    third.close()
    assert [r["n"] for r in map(json.loads, first.path.read_text().splitlines())] == [1, 3]


def test_projects_whose_paths_read_alike_keep_their_sessions_apart(tmp_path: Path) -> None:
    """Before: ``/p/proj.a`` and ``/p/proj/a`` shared one chats folder, so ``-c`` in one
    resumed the other's conversation."""
    home = tmp_path / "home"
    with FakeOpenAI([{"text": "a"}, {"text": "b"}]) as fake:
        model = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_MODEL": "m"}
        one = _run_in(tmp_path / "p" / "proj.a", home, ["-o", "json", "-p", "dot secret"], **model)
        two = _run_in(
            tmp_path / "p" / "proj" / "a", home, ["-c", "-o", "json", "-p", "hi"], **model
        )
        second_request = fake.requests[1]
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    assert "dot secret" not in json.dumps(second_request)
    folders = {p.parent.parent.name for p in _jsonl_files(home)}
    assert len(folders) == 2
    # the readable part may be cut to its last 80 characters (a long temporary folder)
    assert all(re.fullmatch(r".*-p-proj-a-[0-9a-f]{16}", name) for name in folders), folders


def test_recordings_of_the_earlier_layout_are_still_found(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root, proj = home / ".headwire", tmp_path / "proj"
    proj.mkdir(parents=True)
    legacy = legacy_chats_dir(root, proj)
    legacy.mkdir(parents=True)
    message = {"role": "user", "content": "from the old layout"}
    record: dict[str, Any] = {"type": "user", "session_id": "old", "message": message}
    (legacy / "old.jsonl").write_text(json.dumps(record) + "\n")
    with FakeOpenAI([{"text": "resumed"}]) as fake:
        proc = run_cli(
            ["-m", "m", "--openai-base-url", fake.base_url, "-o", "json", "--resume", "old"],
            tmp_path,
            stdin=b"go on",
        )
        sent = fake.requests[0]["messages"]
    assert proc.returncode == 0, proc.stderr
    assert {"role": "user", "content": "from the old layout"} in sent
    moved = chats_dir(root, proj) / "old.jsonl"
    assert find_session(root, proj, "old") == moved and not (legacy / "old.jsonl").exists()
    lines = moved.read_text().splitlines()
    assert json.loads(lines[0]) == record and len(lines) > 2  # the session went on in one file


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--tool-timeout", "inf"),  # before: every shell call failed with OverflowError
        ("--tool-timeout", "nan"),
        ("--tool-timeout", "-5"),
        ("--tool-timeout", "0"),
        ("--tool-timeout", "1e300"),
        ("--json-fd", "99999999999"),  # before: a traceback
        ("--json-fd", "-1"),
    ],
)
def test_flag_values_are_checked_up_front(tmp_path: Path, flag: str, value: str) -> None:
    proc = run_cli(
        ["--model", "scripted:demo", "--yolo", "-o", "json", f"{flag}={value}", "-p", "hi"],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"headwire: {flag}: " in proc.stderr  # one line naming the flag (cli.parsing)
    no_traceback(proc.stderr)
    (result,) = json.loads(proc.stdout)  # -o json: the run's one result says what was wrong
    assert result["subtype"] == "error_during_execution" and flag in result["errors"][0]
