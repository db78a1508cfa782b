"""What the consumer of a resumed session sees: stream-JSON ``--resume`` writes only the new turn
(the history goes to the model, as in Qwen Code); the whole history is what ACP ``session/load``
replays, for sessions recorded by any front end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from headwire.wire import encode
from tests.e2e.helpers import run_cli, write_script


def _acp_load(tmp: Path, session_id: str) -> list[dict[str, Any]]:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/load",
            "params": {"sessionId": session_id, "cwd": str(tmp / "proj"), "mcpServers": []},
        },
    ]
    proc = run_cli(
        ["--acp", "--script", "done"], tmp, stdin=b"".join(encode(m) + b"\n" for m in lines)
    )
    assert proc.returncode == 0, proc.stderr
    frames = proc.lines()
    assert any(f.get("id") == 2 and "result" in f for f in frames), frames
    return [f["params"]["update"] for f in frames if f.get("method") == "session/update"]


def test_resumed_stream_json_shows_the_new_turn_and_acp_loads_all(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "echo first"}},
            {"text": "first done"},
            {"text": "second done"},
        ],
    )
    base = ["--script", str(script), "--yolo", "-o", "stream-json"]
    first = run_cli([*base, "-p", "first prompt"], tmp_path)
    assert first.returncode == 0, first.stderr
    session = first.lines()[0]["session_id"]
    again = run_cli([*base, "--resume", session, "-p", "second prompt"], tmp_path)
    assert again.returncode == 0, again.stderr
    messages = again.lines()
    assert messages[0]["type"] == "system" and messages[0]["session_id"] == session
    wire = again.stdout.decode()
    assert "first prompt" not in wire and "echo first" not in wire and "first done" not in wire
    assert messages[-1]["result"] == "second done"

    updates = _acp_load(tmp_path, session)
    users = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"]
    assert users == ["first prompt", "second prompt"]
    statuses = [u.get("status") for u in updates if "toolCallId" in u]
    assert statuses == ["pending", "in_progress", "completed"]
    said = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert said == ["first done", "second done"]
