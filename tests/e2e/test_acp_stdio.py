"""``headwire --experimental-acp`` over raw stdio (no SDK): framing, ids, bad input, frame sizes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.helpers import BIG_COMMAND, env_for, write_script
from tests.wire_schema import check_line

MAX_UPDATE_LINE = 140_000
"""Upstream's frame for the same output is 131,347 bytes."""


def test_raw_stdio_framing(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    script = write_script(
        tmp_path / "script.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}},
            {"text": "done"},
        ],
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--experimental-acp", "--yolo", "--script", str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=proj,
        env=env_for(home),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(raw: bytes) -> None:
        assert proc.stdin is not None
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()

    lines: list[bytes] = []

    def read_until(msg_id: Any) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            assert line, "stdout closed early"
            assert line.endswith(b"\n")
            lines.append(line)
            check_line("acp", "output", line, f"stdout line {len(lines)}")
            message: dict[str, Any] = json.loads(line)  # every line is one JSON object
            if "id" in message and "method" not in message and message["id"] == msg_id:
                return message

    send(b'{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":1}}')
    assert read_until("init-1")["result"]["protocolVersion"] == 1
    send(b"this is not json")
    assert read_until(None)["error"]["code"] == -32700
    send(b'{"jsonrpc":"2.0","method":"some/notification"}')  # ignored: no answer at all
    send(b'[{"jsonrpc":"2.0","id":9,"method":"initialize"}]')
    assert read_until(None)["error"]["code"] == -32600
    send(b'{"id":10,"method":"initialize","params":{"protocolVersion":1}}')
    assert read_until(10)["error"]["code"] == -32600
    send(b'{"jsonrpc":"2.0","id":11,"method":"session/fork","params":{}}')
    missing = read_until(11)["error"]
    assert missing["code"] == -32601 and missing["data"] == {"method": "session/fork"}
    send(b'{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":42}}')
    assert read_until(12)["error"]["code"] == -32602
    huge = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 13,
            "method": "session/prompt",
            "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "z" * 3_000_000}]},
        }
    )
    send(huge.encode())  # a 3 MB line is read whole
    assert read_until(13)["error"]["code"] == -32602

    send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 14,
                "method": "session/new",
                "params": {"cwd": str(proj), "mcpServers": []},
            }
        ).encode()
    )
    new = read_until(14)["result"]
    assert new["modes"]["currentModeId"] == "yolo"
    send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 15.5,
                "method": "session/prompt",
                "params": {
                    "sessionId": new["sessionId"],
                    "prompt": [{"type": "text", "text": "big"}],
                },
            }
        ).encode()
    )
    assert read_until(15.5)["result"] == {"stopReason": "end_turn"}
    proc.stdin.close()
    rest, err = proc.stdout.read(), proc.stderr.read() if proc.stderr else b""
    assert proc.wait(timeout=20) == 0
    lines += rest.splitlines(keepends=True)

    updates = [json.loads(line) for line in lines if b'"method":"session/update"' in line]
    assert all(json.loads(line) is not None for line in lines)
    tool_lines = [line for line in lines if b'"sessionUpdate":"tool_call_update"' in line]
    assert tool_lines and max(len(line) for line in tool_lines) <= MAX_UPDATE_LINE
    kinds = [u["params"]["update"]["sessionUpdate"] for u in updates]
    assert kinds[:2] == ["available_commands_update", "tool_call"]
    assert "session/request_permission" not in b"".join(lines).decode()  # yolo asks nobody
    assert b"some/notification" in err  # noted on stderr, never answered
