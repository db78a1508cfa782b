"""ACP with MCP servers sent by the client: their tools run, and A2UI results arrive whole."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from headwire.projection import ACP_TRUNCATION_MARKER
from headwire.wire import encode
from tests.e2e.helpers import env_for, write_script
from tests.wire_schema import check_line

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"


def run_acp_session(tmp: Path, server_name: str, tool: str, size: int) -> list[dict[str, Any]]:
    """One prompt calling an MCP tool over ACP; returns every frame the agent wrote."""
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True)
    proj.mkdir(parents=True)
    script = write_script(
        tmp / "script.jsonl",
        [
            {"tool": f"mcp__{server_name}__{tool}", "args": {"n": size}},
            {"text": "done"},
        ],
    )
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {
                "cwd": str(proj),
                "mcpServers": [
                    {
                        "name": server_name,
                        "command": sys.executable,
                        "args": [str(SERVER)],
                        "env": [],
                    }
                ],
            },
        },
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--acp", "--yolo", "--script", str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=proj,
        env=env_for(home),
    )
    assert proc.stdin is not None and proc.stdout is not None
    frames: list[dict[str, Any]] = []

    def until(msg_id: int) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            assert line, "stdout closed early"
            check_line("acp", "output", line, f"stdout line {len(frames) + 1}")
            frame: dict[str, Any] = json.loads(line)
            frames.append(frame)
            if frame.get("id") == msg_id and "method" not in frame:
                return frame

    for request in requests:
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        assert "result" in until(request["id"]), frames[-1]
    session_id = frames[-1]["result"]["sessionId"]
    proc.stdin.write(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
            }
        ).encode()
        + b"\n"
    )
    proc.stdin.flush()
    assert until(3)["result"]["stopReason"] == "end_turn"
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    return frames


def completed_update(frames: list[dict[str, Any]]) -> dict[str, Any]:
    updates = [
        f["params"]["update"]
        for f in frames
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "tool_call_update"
        and f["params"]["update"].get("status") == "completed"
    ]
    assert len(updates) == 1, updates
    return updates[0]


def test_client_mcp_server_tools_run_and_are_bounded(tmp_path: Path) -> None:
    update = completed_update(run_acp_session(tmp_path, "bigout", "big_output", 499_999))
    assert update["_meta"]["serverId"] == "bigout"
    assert len(encode(update["content"])) <= 65_536
    assert len(encode(update["rawOutput"])) <= 65_536
    assert ACP_TRUNCATION_MARKER in update["rawOutput"]


def test_a2ui_server_result_arrives_whole(tmp_path: Path) -> None:
    update = completed_update(run_acp_session(tmp_path, "my-a2ui", "big_output", 200_000))
    assert update["_meta"]["serverId"] == "my-a2ui"
    assert update["rawOutput"] == "x" * 200_000  # the display, whole
