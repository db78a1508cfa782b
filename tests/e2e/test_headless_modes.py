"""End to end: the real CLI in every one-shot mode, with the scripted model.

The session is the upstream capture's: ``run_shell_command`` prints 499,999 bytes, then the model
answers ``done``.  Each mode's stdout must have upstream's message sequence and key order, the
tool result must be exactly the projection of the display string, and the artifact and the
recording must keep everything.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from headwire.projection import HEADLESS_TRUNCATION_MARKER, project_tool_result_content
from headwire.wire import encode
from tests.e2e.helpers import BIG_SHA256, Proc, artifacts, recordings, run_cli
from tests.shapes import message_shapes, upstream_shapes

BASE = ["--model", "scripted:demo", "--yolo", "-p", "Run the big output tool once, then say done."]


def tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for msg in messages
        if msg.get("type") == "user"
        for block in msg["message"]["content"]
        if block.get("type") == "tool_result"
    ]


def check_bounded_result(proc: Proc, messages: list[dict[str, Any]]) -> None:
    """Content is exactly the projection of the display; artifact and recording are whole."""
    (block,) = tool_results(messages)
    (artifact,) = artifacts(proc.home)
    assert hashlib.sha256(artifact.read_bytes()).hexdigest() == BIG_SHA256
    assert artifact.stat().st_mode & 0o777 == 0o600
    (recording,) = recordings(proc.home)
    recorded = [json.loads(line) for line in recording.read_text().splitlines()]
    (tool_record,) = [r for r in recorded if r["type"] == "tool_result"]
    assert tool_record["display"].startswith("x" * 499_998)
    assert tool_record["display"].endswith(f"\nOutput too long and was saved to: {artifact}")
    assert block["content"] == project_tool_result_content(tool_record["display"])
    assert len(encode(block["content"])) == 65_536
    assert block["content"].count(HEADLESS_TRUNCATION_MARKER) == 1
    assert block["is_error"] is False


def test_text_mode_prints_only_the_answer(tmp_path: Path) -> None:
    proc = run_cli([*BASE, "-o", "text"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"
    (artifact,) = artifacts(proc.home)
    assert hashlib.sha256(artifact.read_bytes()).hexdigest() == BIG_SHA256


def test_json_mode_matches_upstream(tmp_path: Path) -> None:
    proc = run_cli([*BASE, "-o", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(b"]\n") and proc.stdout.count(b"\n") == 1
    messages = json.loads(proc.stdout)
    assert message_shapes(proc.stdout) == upstream_shapes()["shell-json"]
    check_bounded_result(proc, messages)
    assert messages[-1]["result"] == "done"


@pytest.mark.parametrize(
    ("flags", "sample"),
    [([], "shell-stream-json"), (["--include-partial-messages"], "shell-stream-json-partial")],
)
def test_stream_json_matches_upstream(tmp_path: Path, flags: list[str], sample: str) -> None:
    proc = run_cli([*BASE, "-o", "stream-json", *flags], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()[sample]
    messages = proc.lines()
    check_bounded_result(proc, messages)
    assert max(len(line) for line in proc.stdout.splitlines()) < 66_000


def test_positional_prompt_and_stdin(tmp_path: Path) -> None:
    proc = run_cli(
        ["--model", "scripted:demo", "--yolo", "-o", "stream-json", "say", "done"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()["shell-stream-json-positional"]
    proc = run_cli(["--model", "scripted:done", "-o", "text"], tmp_path, stdin=b"hello\n")
    assert proc.stdout == b"done\n"


def test_default_mode_denies_and_reports(tmp_path: Path) -> None:
    proc = run_cli(["--model", "scripted:demo", "-o", "json", "-p", "go"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(proc.stdout)
    (block,) = tool_results(messages)
    assert block["is_error"] is True
    assert "requires user approval" in block["content"]
    denials = messages[-1]["permission_denials"]
    assert denials == [
        {
            "tool_name": "run_shell_command",
            "tool_use_id": denials[0]["tool_use_id"],
            "tool_input": messages[1]["message"]["content"][0]["input"],
        }
    ]
    assert artifacts(proc.home) == []


def test_allowed_tools_runs_without_asking(tmp_path: Path) -> None:
    proc = run_cli(
        [
            "--model",
            "scripted:demo",
            "-o",
            "json",
            "--allowed-tools",
            "run_shell_command",
            "-p",
            "go",
        ],
        tmp_path,
    )
    messages = json.loads(proc.stdout)
    assert tool_results(messages)[0]["is_error"] is False
    assert messages[-1]["permission_denials"] == []


def test_resume_continues_the_recorded_conversation(tmp_path: Path) -> None:
    first = run_cli([*BASE, "-o", "json"], tmp_path)
    session = json.loads(first.stdout)[0]["session_id"]
    again = run_cli(
        [
            "--model",
            "scripted:demo",
            "--yolo",
            "-o",
            "json",
            "--resume",
            session,
            "-p",
            "and again",
        ],
        tmp_path,
    )
    assert again.returncode == 0, again.stderr
    messages = json.loads(again.stdout)
    assert messages[0]["session_id"] == session
    assert messages[-1]["result"] == "done"
    (recording,) = recordings(again.home)
    kinds = [json.loads(line)["type"] for line in recording.read_text().splitlines()]
    assert kinds.count("user") == 2
    cont = run_cli(["--model", "scripted:done", "-o", "json", "--continue", "-p", "more"], tmp_path)
    assert json.loads(cont.stdout)[0]["session_id"] == session
    missing = run_cli(["--model", "scripted:done", "--resume", "nope", "-p", "x"], tmp_path)
    assert missing.returncode == 2 and "No saved session" in missing.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--output-format", "yaml", "-p", "x"],
        ["--no-such-flag"],
        ["--approval-mode", "sometimes", "-p", "x"],
        ["--model", "scripted:done"],
        ["--script", "/nonexistent/script.jsonl", "-p", "x"],
        ["--input-format", "stream-json", "-p", "x"],
    ],
)
def test_bad_input_is_a_clear_error(tmp_path: Path, args: list[str]) -> None:
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip()
    assert proc.stdout == b""


def test_max_session_turns(tmp_path: Path) -> None:
    proc = run_cli([*BASE, "-o", "json", "--max-session-turns", "1"], tmp_path)
    assert proc.returncode == 53
    result = json.loads(proc.stdout)[-1]
    assert result["is_error"] is True and result["subtype"] == "error_max_turns"
    assert "max session turns" in result["error"]["message"]
