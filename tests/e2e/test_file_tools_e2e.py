"""What the model relies on from the file tools, through the real CLI and the scripted model:
read before write (as upstream 0.24.4) and a read-then-write round trip keeping the final
newline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.helpers import run_cli, write_script


def _tool_results(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for line in lines
        if line["type"] == "user" and line.get("parent_tool_use_id") is None
        for block in line["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def test_write_and_edit_need_a_read_first(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    target = proj / "config.ini"
    target.write_text("[core]\nname = old\n")
    path = str(target)
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "write_file", "args": {"file_path": path, "content": "blind\n"}},
            {"tool": "edit", "args": {"file_path": path, "old_string": "old", "new_string": "x"}},
            {"tool": "read_file", "args": {"file_path": path}},
            {"tool": "edit", "args": {"file_path": path, "old_string": "old", "new_string": "new"}},
            {"text": "done"},
        ],
    )
    proc = run_cli(["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    blind, blind_edit, read, edit = _tool_results(proc.lines())
    for refused in (blind, blind_edit):
        assert refused["is_error"] is True
        assert "has not been read in this session" in refused["content"]
    assert read["is_error"] is False and edit["is_error"] is False
    assert target.read_text() == "[core]\nname = new\n"


def test_read_then_write_keeps_the_final_newline(tmp_path: Path) -> None:
    """Before: read_file dropped the final newline, so writing back what was read lost it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    target = proj / "notes.md"
    target.write_text("# Notes\n\n- one\n")
    script = write_script(
        tmp_path / "s.jsonl", [{"tool": "read_file", "args": {"file_path": str(target)}}]
    )
    proc = run_cli(["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"], tmp_path)
    (read,) = _tool_results(proc.lines())
    assert read["content"] == "# Notes\n\n- one\n"
    script = write_script(
        tmp_path / "s2.jsonl",
        [
            {"tool": "read_file", "args": {"file_path": str(target)}},
            {"tool": "write_file", "args": {"file_path": str(target), "content": read["content"]}},
        ],
    )
    proc = run_cli(["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"], tmp_path)
    assert [r["is_error"] for r in _tool_results(proc.lines())] == [False, False]
    assert target.read_bytes() == b"# Notes\n\n- one\n"


def test_unknown_tool_names_the_nearest(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"tool": "Bash", "args": {"command": "true"}}])
    proc = run_cli(["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"], tmp_path)
    (result,) = _tool_results(proc.lines())
    assert result["is_error"] is True
    assert 'did you mean "run_shell_command"?' in result["content"]
