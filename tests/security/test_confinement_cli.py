"""Confinement through the real CLI: a scripted model asks for paths outside the workspace.

Even in ``--yolo`` mode (nothing asks for approval) each call comes back on the wire as an
``is_error`` tool result saying the path is outside the workspace; nothing outside is read
into stdout or the recording, and nothing outside is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import recordings, run_cli, write_script
from tests.security.helpers import SECRET, snapshot

CORE = "read_file,write_file,edit,list_directory,glob,grep_search,run_shell_command"
"""Every file tool (``list_directory`` is registered only when named)."""


def _setup(tmp: Path) -> tuple[Path, Path, Path]:
    proj, outside, extra = tmp / "proj", tmp / "outside", tmp / "extra"
    for directory in (proj, outside, extra):
        directory.mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (proj / "leak.txt").symlink_to(outside / "secret.txt")
    (proj / "linkdir").symlink_to(outside)
    (proj / "dangling").symlink_to(outside / "created.txt")
    (extra / "added.txt").write_text("hello added\n")
    (extra / "escape.txt").symlink_to(outside / "secret.txt")
    return proj, outside, extra


def _calls(proj: Path, outside: Path, extra: Path) -> list[dict[str, Any]]:
    secret = str(outside / "secret.txt")
    return [
        {"name": "read_file", "args": {"file_path": "/etc/passwd"}},
        {"name": "read_file", "args": {"file_path": secret}},
        {"name": "read_file", "args": {"file_path": f"{proj}/../outside/secret.txt"}},
        {"name": "read_file", "args": {"file_path": str(proj / "leak.txt")}},
        {"name": "read_file", "args": {"file_path": str(proj / "linkdir" / "secret.txt")}},
        {"name": "read_file", "args": {"file_path": str(extra / "escape.txt")}},
        {"name": "write_file", "args": {"file_path": str(outside / "pwned.txt"), "content": "x"}},
        {"name": "write_file", "args": {"file_path": str(proj / "dangling"), "content": "x"}},
        {
            "name": "write_file",
            "args": {"file_path": str(proj / "linkdir" / "new.txt"), "content": "x"},
        },
        {"name": "write_file", "args": {"file_path": "/tmp/../etc/headwire-pwned", "content": "x"}},
        {"name": "edit", "args": {"file_path": secret, "old_string": "top", "new_string": "pwned"}},
        {
            "name": "edit",
            "args": {
                "file_path": str(proj / "leak.txt"),
                "old_string": "top",
                "new_string": "pwned",
            },
        },
        {"name": "list_directory", "args": {"path": str(outside)}},
        {"name": "list_directory", "args": {"path": str(proj / "linkdir")}},
        {"name": "glob", "args": {"pattern": "*", "path": str(outside)}},
        {"name": "glob", "args": {"pattern": "../outside/*"}},
        {"name": "grep_search", "args": {"pattern": "crown", "path": str(outside)}},
        {"name": "grep_search", "args": {"pattern": "crown", "path": str(proj / "leak.txt")}},
        {
            "name": "run_shell_command",
            "args": {"command": "cat secret.txt", "directory": str(outside)},
        },
    ]


def _tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for m in messages
        if m.get("type") == "user"
        for block in m["message"]["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("fmt", ["stream-json", "json"])
def test_outside_paths_are_tool_errors_on_the_wire(tmp_path: Path, fmt: str) -> None:
    proj, outside, extra = _setup(tmp_path)
    calls = _calls(proj, outside, extra)
    script = write_script(tmp_path / "script.jsonl", [{"tools": calls}, {"text": "done"}])
    before = snapshot(outside)
    proc = run_cli(
        [
            "--script",
            str(script),
            "--yolo",
            "-o",
            fmt,
            "--include-directories",
            str(extra),
            "--core-tools",
            CORE,
            "-p",
            "try to escape",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(proc.stdout) if fmt == "json" else proc.lines()
    results = _tool_results(messages)
    assert len(results) == len(calls)
    for call, block in zip(calls, results, strict=True):
        assert block["is_error"] is True, (call, block)
        content = block["content"]
        assert (
            "outside the workspace" in content
            or "not within any of the registered workspace directories" in content
        ), (call, content)
    wire = proc.stdout.decode() + proc.stderr
    assert "crown jewels" not in wire and "root:x:0:0" not in wire
    assert snapshot(outside) == before
    assert not Path("/etc/headwire-pwned").exists()
    (recording,) = recordings(proc.home)
    assert "crown jewels" not in recording.read_text()
    assert messages[-1]["type"] == "result" and messages[-1]["result"] == "done"


def test_added_directory_is_inside_and_confined(tmp_path: Path) -> None:
    """``--include-directories`` (and Claude's ``--add-dir``) admit exactly the added tree."""
    _, _, extra = _setup(tmp_path)
    calls = [
        {"name": "read_file", "args": {"file_path": str(extra / "added.txt")}},
        {"name": "write_file", "args": {"file_path": str(extra / "made.txt"), "content": "made"}},
        {"name": "read_file", "args": {"file_path": str(extra / "escape.txt")}},
        {"name": "read_file", "args": {"file_path": f"{extra}/../outside/secret.txt"}},
    ]
    script = write_script(tmp_path / "script.jsonl", [{"tools": calls}, {"text": "done"}])
    for flag in ("--include-directories", "--add-dir"):
        (extra / "made.txt").unlink(missing_ok=True)  # a new session would need to read it
        proc = run_cli(
            [
                "--script",
                str(script),
                "--yolo",
                "-o",
                "stream-json",
                flag,
                str(extra),
                "-p",
                "use the added dir",
            ],
            tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        flags = [block["is_error"] for block in _tool_results(proc.lines())]
        assert flags == [False, False, True, True], flag
        assert (extra / "made.txt").read_text() == "made"
        assert "crown jewels" not in proc.stdout.decode()
    without = run_cli(["--script", str(script), "--yolo", "-o", "stream-json", "-p", "x"], tmp_path)
    assert [b["is_error"] for b in _tool_results(without.lines())] == [True, True, True, True]
