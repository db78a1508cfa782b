"""``headwire sessions`` as a real process on sessions recorded by real runs."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli
from tests.e2e.sessions_fixture import HOSTILE, make_session


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("sessions")
    _, sid = make_session(tmp)
    return tmp, sid


def test_list_shows_the_session_newest_first_with_its_facts(recorded: tuple[Path, str]) -> None:
    tmp, sid = recorded
    done = run_cli(["sessions", "list"], tmp)
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.decode().splitlines()[:2]
    assert header.split() == ["ID", "STARTED", "TURNS", "SIZE", "DIRECTORY", "FIRST", "PROMPT"]
    assert row.startswith(sid) and "Why does the build fail?" in row
    assert str((tmp / "proj").resolve()) in row and " 2 " in row
    rows = [
        json.loads(line)
        for line in run_cli(["sessions", "list", "--json"], tmp).stdout.splitlines()
    ]
    assert rows[0]["session_id"] == sid and rows[0]["turns"] == 2
    assert rows[0]["size"] == os.path.getsize(rows[0]["path"])


def test_show_is_a_readable_transcript_with_no_control_characters(
    recorded: tuple[Path, str],
) -> None:
    tmp, sid = recorded
    done = run_cli(["sessions", "show", sid[:8]], tmp)
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "── Turn 1" in text and "── Turn 2" in text
    assert re.search(r"440,001 bytes · bounded on the wire \(440,\d{3} → 65,536 JSON bytes\)", text)
    assert "subagent:" in text and "│ ● run_shell_command" in text
    assert "error (execution_denied)" in text
    assert HOSTILE[0] in text and "\x1b" not in text


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_export_writes_a_private_file_in_each_format(recorded: tuple[Path, str], fmt: str) -> None:
    tmp, sid = recorded
    out = tmp / f"export.{fmt}"
    done = run_cli(["sessions", "export", sid, "--format", fmt, "-o", str(out)], tmp)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_mode & 0o777 == 0o600
    data = out.read_text()
    if fmt == "json":
        doc = json.loads(data)
        assert doc["format"] == "headwire.transcript/1" and len(doc["transcript"]["turns"]) == 2
    elif fmt == "html":
        assert data.startswith("<!DOCTYPE html>") and "<script" not in data
        assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in data
    else:
        assert "## Turn 2" in data and "- Tool call `write_file` (error)" in data


def test_an_unknown_session_is_one_line_and_exit_2(recorded: tuple[Path, str]) -> None:
    tmp, _ = recorded
    done = run_cli(["sessions", "show", "no-such-session"], tmp)
    assert done.returncode == 2
    assert done.stderr == "headwire sessions: No saved session found with ID no-such-session\n"


def test_prune_dry_run_lists_and_prune_deletes_old_recordings_and_artifacts(tmp_path: Path) -> None:
    home, _ = make_session(tmp_path)
    old = time.time() - 40 * 86400
    files = list((home / "projects").rglob("*.jsonl")) + list((home / "tmp").rglob("*.output"))
    assert len(files) == 2
    for path in files:
        os.utime(path, (old, old))
    dry = run_cli(["sessions", "prune", "--older-than", "30d", "--dry-run"], tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.decode().count("would delete ") == 3  # 2 files and the summary
    assert all(p.exists() for p in files)
    assert (
        run_cli(["sessions", "prune", "--older-than", "90d"], tmp_path)
        .stdout.decode()
        .startswith("deleted 0 recordings")
    )
    done = run_cli(["sessions", "prune", "--older-than", "30d"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "deleted 1 recordings and 1 artifacts" in done.stdout.decode()
    assert not any(p.exists() for p in files)
    assert (
        run_cli(["sessions", "list"], tmp_path).stdout.decode().startswith("No recorded sessions")
    )
