"""``headwire --acp``: each ending of a turn answers ``session/prompt`` with the right
``stopReason`` (the README's exit-code matrix, ACP column): ``end_turn``, ``max_tokens`` and
``refusal`` (the model's last call stopped so), ``cancelled``, ``max_turn_requests`` for every run
limit (turns, budget, wall-clock time, tool calls), and a JSON-RPC error for a failed model call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.contract import pricing
from tests.e2e.helpers import env_for, write_script
from tests.wire_schema import check_line

SLEEP = {"tool": "run_shell_command", "args": {"command": "sleep 30"}}


class Acp:
    """A running ``headwire --acp`` spoken to over raw stdio."""

    def __init__(self, tmp: Path, flags: list[str]) -> None:
        home, self.proj = tmp / "home", tmp / "proj"
        home.mkdir(exist_ok=True)
        self.proj.mkdir(exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "headwire", "--acp", "--yolo", *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.proj,
            env=env_for(home),
        )
        self.ids = 0
        self.lines = 0
        self.request("initialize", {"protocolVersion": 1})
        self.session = self.request("session/new", {"cwd": str(self.proj), "mcpServers": []})[
            "result"
        ]["sessionId"]

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "stdout closed early"
        self.lines += 1
        check_line("acp", "output", line, f"stdout line {self.lines}")
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        self.send({"id": self.ids, "method": method, "params": params})
        return self.until(self.ids)

    def until(self, msg_id: int, cancel_on_start: bool = False) -> dict[str, Any]:
        while True:
            message = self.read()
            if message.get("id") == msg_id and "method" not in message:
                return message
            update = message.get("params", {}).get("update", {})
            if cancel_on_start and update.get("status") == "in_progress":
                self.send({"method": "session/cancel", "params": {"sessionId": self.session}})

    def prompt(self, text: str, *, cancel: bool = False) -> dict[str, Any]:
        self.ids += 1
        params = {"sessionId": self.session, "prompt": [{"type": "text", "text": text}]}
        self.send({"id": self.ids, "method": "session/prompt", "params": params})
        return self.until(self.ids, cancel_on_start=cancel)

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def test_answers_refusals_cancel_errors_and_the_budget(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"text": "hi"},
            {"text": "cut short", "stop_reason": "max_tokens"},
            {"text": "I cannot help with that", "stop_reason": "refusal"},
            {"error": "the model server failed"},
            SLEEP,
            {"tool": "glob", "args": {"pattern": "*"}},
            {"text": "never: over the budget"},
        ],
    )
    # $0.000085 a call; 4 calls before the last prompt (the failed one reported no usage)
    flags = ["--script", str(script), "--settings", pricing("scripted"), "--max-budget-usd"]
    acp = Acp(tmp_path, [*flags, "0.0004"])
    assert acp.prompt("a")["result"] == {"stopReason": "end_turn"}
    assert acp.prompt("b")["result"] == {"stopReason": "max_tokens"}
    assert acp.prompt("c")["result"] == {"stopReason": "refusal"}
    error = acp.prompt("d")["error"]
    assert error["message"] == "the model server failed"
    assert acp.prompt("e", cancel=True)["result"] == {"stopReason": "cancelled"}
    assert acp.prompt("f")["result"] == {"stopReason": "max_turn_requests"}  # the budget
    assert acp.prompt("g")["result"] == {"stopReason": "max_turn_requests"}  # still spent
    assert acp.close() == 0


def test_time_and_turn_limits(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [SLEEP, {"text": "ok"}, {"text": "never"}])
    flags = ["--script", str(script), "--max-duration", "1", "--max-session-turns", "2"]
    acp = Acp(tmp_path, flags)
    assert acp.prompt("a")["result"] == {"stopReason": "max_turn_requests"}  # 1 s passed
    assert acp.prompt("b")["result"] == {"stopReason": "end_turn"}
    assert acp.prompt("c")["result"] == {"stopReason": "max_turn_requests"}  # 2 calls made
    assert acp.close() == 0


def test_tool_call_limit(tmp_path: Path) -> None:
    """--max-tool-calls counts over the ACP session: the second call is refused."""
    glob = {"tool": "glob", "args": {"pattern": "*"}}
    script = write_script(tmp_path / "s.jsonl", [glob, {"text": "ok"}, glob, {"text": "never"}])
    acp = Acp(tmp_path, ["--script", str(script), "--max-tool-calls", "1"])
    assert acp.prompt("a")["result"] == {"stopReason": "end_turn"}
    assert acp.prompt("b")["result"] == {"stopReason": "max_turn_requests"}
    assert acp.close() == 0


def test_json_schema_does_not_apply_to_acp(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "headwire", "--acp", "--json-schema", "{}"],
        cwd=tmp_path,
        env=env_for(tmp_path),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert b"--json-schema does not apply to --acp" in done.stderr
