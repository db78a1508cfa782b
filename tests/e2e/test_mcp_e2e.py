"""End to end: the real CLI with a real stdio MCP server (``tests/fakes/mcp_server.py``).

The session is the upstream capture's: the model calls ``mcp__bigout__big_output`` (499,999
ASCII bytes), then answers ``done``.  Each mode's stdout must have upstream's message sequence
and key order; the tool result is exactly the projection of the display (the full text); the
producer artifact holds all the bytes.  A server that fails to start shows as ``failed`` and the
session still answers.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from headwire.projection import project_tool_result_content
from tests.e2e.helpers import Proc, artifacts, recordings, run_cli, write_script
from tests.shapes import message_shapes, upstream_shapes

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
BIG = b"x" * 499_999
PROMPT = "Run the big output tool once, then say done."


def server_entry(*mode: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), *mode]}


def base_args(tmp: Path) -> list[str]:
    script = write_script(
        tmp / "script.jsonl", [{"tool": "mcp__bigout__big_output", "args": {}}, {"text": "done"}]
    )
    return ["--script", str(script), "--yolo", "-p", PROMPT]


def check_result(proc: Proc, messages: list[dict[str, Any]]) -> None:
    """The wire shows the projected display; artifact and recording keep everything."""
    (block,) = [b for m in messages if m.get("type") == "user" for b in m["message"]["content"]]
    assert block["is_error"] is False
    assert block["content"] == project_tool_result_content(BIG.decode())
    (artifact,) = artifacts(proc.home)
    data = artifact.read_bytes()
    assert len(data) == 499_999
    assert hashlib.sha256(data).hexdigest() == hashlib.sha256(BIG).hexdigest()
    assert artifact.stat().st_mode & 0o777 == 0o600
    (recording,) = recordings(proc.home)
    records = [json.loads(line) for line in recording.read_text().splitlines()]
    (tool_record,) = [r for r in records if r["type"] == "tool_result"]
    assert tool_record["display"] == BIG.decode()
    assert tool_record["artifact"] == str(artifact)
    init = messages[0]
    assert init["type"] == "system" and "mcp__bigout__big_output" in init["tools"]
    assert messages[-1]["result"] == "done"


def test_json_mode_with_mcp_config_matches_upstream(tmp_path: Path) -> None:
    config = json.dumps({"mcpServers": {"bigout": server_entry()}})
    proc = run_cli([*base_args(tmp_path), "-o", "json", "--mcp-config", config], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()["mcp-json"]
    messages = json.loads(proc.stdout)
    assert messages[0]["mcp_servers"] == [{"name": "bigout", "status": "connected"}]
    check_result(proc, messages)
    assert "not supported by headwire" not in proc.stderr


def test_stream_json_with_settings_file_and_a_failing_server(tmp_path: Path) -> None:
    settings = tmp_path / "home" / ".headwire" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        json.dumps(
            {"mcpServers": {"bigout": server_entry(), "broken": server_entry("fail-startup")}}
        )
    )
    proc = run_cli([*base_args(tmp_path), "-o", "stream-json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()["mcp-stream-json"]
    messages = proc.lines()
    assert messages[0]["mcp_servers"] == [
        {"name": "bigout", "status": "connected"},
        {"name": "broken", "status": "failed"},
    ]
    assert not any(t.startswith("mcp__broken__") for t in messages[0]["tools"])
    check_result(proc, messages)
    assert "MCP server 'broken' failed to start" in proc.stderr
    assert "refusing to start" in proc.stderr


def test_progress_notifications_become_tool_progress_events(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "p.jsonl", [{"tool": "mcp__bigout__progress", "args": {}}, {"text": "done"}]
    )
    config = json.dumps({"mcpServers": {"bigout": server_entry()}})
    proc = run_cli(
        [
            "--script",
            str(script),
            "--yolo",
            "-o",
            "stream-json",
            "--include-partial-messages",
            "--mcp-config",
            config,
            "-p",
            "go",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    progress = [
        m
        for m in proc.lines()
        if m["type"] == "stream_event" and m["event"]["type"] == "tool_progress"
    ]
    assert progress, proc.stdout[:2000]
    event = progress[0]["event"]
    assert progress[0]["parent_tool_use_id"] is None
    assert event["content"]["type"] == "mcp_tool_progress" and "progress" in event["content"]
    assert list(event) == ["type", "tool_use_id", "content"]


INIT = {
    "type": "control_request",
    "request_id": "req-init-1",
    "request": {"subtype": "initialize", "hooks": None},
}
USER = {
    "type": "user",
    "session_id": "",
    "message": {"role": "user", "content": PROMPT},
    "parent_tool_use_id": None,
}


@pytest.mark.parametrize(
    ("flags", "stdin_lines", "sample"),
    [
        (
            ["--output-format", "stream-json", "--include-partial-messages"],
            [],
            "mcp-stream-json-partial",
        ),
        (
            ["--input-format", "stream-json", "--output-format", "stream-json"],
            [USER],
            "mcp-persistent",
        ),
        (
            ["--input-format", "stream-json", "--output-format", "stream-json"],
            [INIT, USER],
            "mcp-persistent-sdk",
        ),
    ],
)
def test_every_streaming_mode_matches_upstream(
    tmp_path: Path, flags: list[str], stdin_lines: list[dict[str, Any]], sample: str
) -> None:
    config = json.dumps({"mcpServers": {"bigout": server_entry()}})
    args = base_args(tmp_path)
    if stdin_lines:
        args = args[:-2]  # the prompt comes on stdin
    stdin = "".join(json.dumps(line) + "\n" for line in stdin_lines).encode()
    proc = run_cli([*args, *flags, "--mcp-config", config], tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()[sample]
    check_result(proc, [m for m in proc.lines() if m["type"] != "control_response"])


def test_text_mode_prints_only_the_answer(tmp_path: Path) -> None:
    config = json.dumps({"mcpServers": {"bigout": server_entry()}})
    proc = run_cli([*base_args(tmp_path), "-o", "text", "--mcp-config", config], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"
    (artifact,) = artifacts(proc.home)
    assert hashlib.sha256(artifact.read_bytes()).hexdigest() == hashlib.sha256(BIG).hexdigest()
