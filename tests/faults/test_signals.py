"""SIGINT and SIGTERM in the middle of a turn (a shell tool running ``sleep 30``).

The signal cancels the running turn: its error ``result`` ("Operation cancelled.") reaches the
wire and the recording (after the cancelled call's ``tool_result``), the shell tool's process
group and the MCP servers are stopped, and the process exits 130 (SIGINT) or 143 (SIGTERM)
without a traceback.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import write_script
from tests.faults.util import (
    NOISY_SERVER,
    Cli,
    alive,
    chats,
    descendants,
    json_output,
    mcp_config,
    no_traceback,
    read_recording,
    start,
    wait_until,
)

SLOW: list[dict[str, Any]] = [
    {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
    {"text": "never"},
]
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


def running_tool(cli: Cli, *extra: str) -> list[int]:
    """Wait until ``sleep 30`` (and every process named in ``extra``) runs under the CLI;
    returns all of the CLI's descendants."""

    def ready() -> list[int]:
        tree = descendants(cli.pid)
        names = ("sleep 30", *extra)
        return list(tree) if all(any(n in cmd for cmd in tree.values()) for n in names) else []

    return wait_until(ready, "the tool to start")  # type: ignore[no-any-return]


def check_cancelled_recording(home: Path) -> None:
    (path,) = chats(home)
    records, bad = read_recording(path)
    assert bad == []
    # ACP also records where the server ended the turn (session/load replays up to there)
    records = [r for r in records if r["type"] != "turn_stopped"]
    assert [r["type"] for r in records] == [
        "user",
        "assistant",
        "tool_pending",
        "tool_started",
        "tool_result",
        "result",
    ]
    assert records[4]["message"]["content"] == "Operation cancelled." and records[4]["is_error"]
    assert records[5]["is_error"] is True and records[5]["error"] == "Operation cancelled."


def check_error_result(result: dict[str, Any]) -> None:
    assert result["type"] == "result" and result["is_error"] is True
    assert result["subtype"] == "error_during_execution"
    assert result["error"]["message"] == "Operation cancelled."


def stopped(cli: Cli, signum: signal.Signals, children: list[int]) -> None:
    """Send ``signum``; the CLI exits with 128 + signum and leaves no process behind."""
    cli.proc.send_signal(signum)
    assert cli.wait() == EXIT[signum], cli.stderr
    no_traceback(cli.stderr)
    assert f"{signum.name} received; stopping" in cli.stderr
    assert [pid for pid in children if alive(pid)] == []


def test_sigterm_headless_stream_json_with_mcp(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.jsonl", SLOW)
    config = mcp_config(helper=[str(NOISY_SERVER)])
    cli = start(
        [
            "--script",
            str(script),
            "--yolo",
            "-o",
            "stream-json",
            "--mcp-config",
            config,
            "-p",
            "go",
        ],
        tmp_path,
    )
    children = running_tool(cli, str(NOISY_SERVER))
    assert len(children) >= 2  # the shell tool and the MCP server
    stopped(cli, signal.SIGTERM, children)
    messages = cli.stdout_lines()
    assert messages[0]["mcp_servers"] == [{"name": "helper", "status": "connected"}]
    check_error_result(messages[-1])
    check_cancelled_recording(cli.home)


def test_sigint_headless_text(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.jsonl", SLOW)
    cli = start(["--script", str(script), "--yolo", "-p", "go"], tmp_path)
    stopped(cli, signal.SIGINT, running_tool(cli))
    assert bytes(cli.out) == b""
    assert "Operation cancelled." in cli.stderr
    check_cancelled_recording(cli.home)


def test_sigterm_headless_json(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.jsonl", SLOW)
    cli = start(["--script", str(script), "--yolo", "-o", "json", "-p", "go"], tmp_path)
    stopped(cli, signal.SIGTERM, running_tool(cli))
    messages = json_output(bytes(cli.out))  # one array, ending with the error result
    # the cancelled call is answered on the wire too: every tool_use shown gets a tool_result
    assert [m["type"] for m in messages] == ["system", "assistant", "user", "result"]
    block = messages[2]["message"]["content"][0]
    assert block["is_error"] is True and block["content"] == "Operation cancelled."
    check_error_result(messages[-1])
    check_cancelled_recording(cli.home)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_persistent_session(tmp_path: Path, signum: signal.Signals) -> None:
    script = write_script(tmp_path / "script.jsonl", SLOW)
    cli = start(
        [
            "--script",
            str(script),
            "--yolo",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ],
        tmp_path,
        stdin=subprocess.PIPE,
    )
    assert cli.proc.stdin is not None
    for text in ("go", "queued, never run"):
        line = {"type": "user", "message": {"role": "user", "content": text}}
        cli.proc.stdin.write(json.dumps(line).encode() + b"\n")
    cli.proc.stdin.flush()  # stdin stays open: the session is idle-waiting for more
    stopped(cli, signum, running_tool(cli))
    cli.proc.stdin.close()
    results = [m for m in cli.stdout_lines() if m["type"] == "result"]
    assert len(results) == 1
    check_error_result(results[0])
    check_cancelled_recording(cli.home)


def test_sigterm_acp(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.jsonl", SLOW)
    cli = start(["--acp", "--yolo", "--script", str(script)], tmp_path, stdin=subprocess.PIPE)
    assert cli.proc.stdin is not None

    def send(message: dict[str, Any]) -> None:
        assert cli.proc.stdin is not None
        cli.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        cli.proc.stdin.flush()

    def answer(msg_id: int) -> dict[str, Any]:
        return wait_until(
            lambda: next(
                (
                    m
                    for m in cli.stdout_lines()  # type: ignore[no-any-return]
                    if m.get("id") == msg_id and "method" not in m
                ),
                None,
            ),
            f"the answer to request {msg_id}",
        )

    send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    answer(1)
    send({"id": 2, "method": "session/new", "params": {"cwd": str(cli.proj), "mcpServers": []}})
    session_id = answer(2)["result"]["sessionId"]
    send(
        {
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
        }
    )
    stopped(cli, signal.SIGTERM, running_tool(cli))
    cli.proc.stdin.close()
    assert answer(3)["result"] == {"stopReason": "cancelled"}
    check_cancelled_recording(cli.home)


def test_ignored_sigterm_stays_ignored(tmp_path: Path) -> None:
    """A parent that set SIGTERM to be ignored (``nohup``-like) keeps it ignored."""
    script = write_script(tmp_path / "script.jsonl", SLOW)
    cli = start(
        ["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"],
        tmp_path,
        preexec=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN),
    )
    children = running_tool(cli)
    cli.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert alive(cli.pid) and "SIGTERM" not in cli.stderr
    stopped(cli, signal.SIGINT, children)
