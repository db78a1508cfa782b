"""Everything headwire creates is private: files 0600, directories 0700, whatever the umask.

A full workload runs against one fresh ``HEADWIRE_HOME``: a headless session whose model runs a
big shell command, a big MCP tool, a background shell and a subagent (which runs another big
command), with a Dual Output ``--json-file``; a ``--continue`` of it; a persistent stream-JSON
session; an ACP session.  Then every directory and file under ``HEADWIRE_HOME`` is checked,
under umask 0 (so no mode comes from the umask) and under the usual 022.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import BIG_COMMAND, env_for, write_script
from tests.security.helpers import modes_under, run_headwire

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
MCP_CONFIG = json.dumps(
    {"mcpServers": {"bigout": {"command": sys.executable, "args": [str(SERVER)]}}}
)


def _main_session(tmp: Path, umask: int) -> Path:
    """The headless workload; returns the Dual Output file it created."""
    script = write_script(
        tmp / "main.jsonl",
        [
            {
                "tools": [
                    {"name": "run_shell_command", "args": {"command": BIG_COMMAND}},
                    {"name": "mcp__bigout__big_output", "args": {}},
                    {
                        "name": "run_shell_command",
                        "args": {"command": "echo bg", "is_background": True},
                    },
                    {
                        "name": "agent",
                        "args": {"description": "big", "prompt": "run the big command"},
                    },
                ]
            },
            {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}},  # the subagent
            {"text": "child done"},
            {"text": "done"},
        ],
    )
    dual = tmp / "dual" / "events.jsonl"
    dual.parent.mkdir()
    proc = run_headwire(
        [
            "--script",
            str(script),
            "--yolo",
            "-o",
            "stream-json",
            "--mcp-config",
            MCP_CONFIG,
            "--json-file",
            str(dual),
            "-p",
            "work",
        ],
        tmp,
        umask=umask,
    )
    assert proc.returncode == 0, proc.stderr
    results = [
        b
        for m in proc.lines()
        if m.get("type") == "user"
        for b in m["message"]["content"]
        if b.get("type") == "tool_result"
    ]
    assert len(results) == 5 and not any(b["is_error"] for b in results), results
    again = run_headwire(
        [
            "--script",
            str(write_script(tmp / "again.jsonl", [{"text": "again"}])),
            "--continue",
            "-o",
            "json",
            "-p",
            "more",
        ],
        tmp,
        umask=umask,
    )
    assert again.returncode == 0, again.stderr
    return dual


def _persistent_session(tmp: Path, umask: int) -> None:
    script = write_script(
        tmp / "session.jsonl",
        [{"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}, {"text": "done"}],
    )
    line = {
        "type": "user",
        "session_id": "s",
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": "big"},
    }
    proc = run_headwire(
        [
            "--script",
            str(script),
            "--yolo",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ],
        tmp,
        umask=umask,
        stdin=(json.dumps(line) + "\n").encode(),
    )
    assert proc.returncode == 0, proc.stderr


def _acp_session(tmp: Path, umask: int) -> None:
    script = write_script(
        tmp / "acp.jsonl",
        [{"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}, {"text": "done"}],
    )
    proj = tmp / "proj"
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--acp", "--yolo", "--script", str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=proj,
        env=env_for(tmp / "home"),
        umask=umask,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def request(msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            json.dumps(
                {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
            ).encode()
            + b"\n"
        )
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, "ACP server closed stdout"
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == msg_id and "method" not in message:
                return message

    try:
        request(1, "initialize", {"protocolVersion": 1})
        session = request(2, "session/new", {"cwd": str(proj), "mcpServers": []})["result"]
        done = request(
            3,
            "session/prompt",
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "big"}]},
        )
        assert done["result"]["stopReason"] == "end_turn"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()


@pytest.mark.slow
@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_everything_created_under_headwire_home_is_private(tmp_path: Path, umask: int) -> None:
    dual = _main_session(tmp_path, umask)
    _persistent_session(tmp_path, umask)
    _acp_session(tmp_path, umask)
    home = tmp_path / "home" / ".headwire"
    modes = modes_under(home)
    kinds = {kind for kind, _ in modes.values()}
    assert kinds == {"dir", "file"}, modes
    wrong = {
        path: (kind, oct(mode))
        for path, (kind, mode) in modes.items()
        if mode != (0o700 if kind == "dir" else 0o600)
    }
    assert not wrong, wrong
    artifacts = [p for p in modes if p.endswith(".output")]
    recordings = [p for p in modes if p.endswith(".jsonl")]
    assert len(artifacts) >= 5, modes  # 2 big shells, MCP, background shell, ACP, session
    assert len(recordings) >= 3, modes  # headless (+ --continue), persistent, ACP
    assert dual.stat().st_mode & 0o777 == 0o600
    assert dual.read_bytes().count(b"\n") > 5


def test_dual_output_file_keeps_an_existing_files_mode(tmp_path: Path) -> None:
    """A ``--json-file`` that already exists is appended to, its mode left as the user set it
    (only files headwire creates are forced private)."""
    path = tmp_path / "mine.jsonl"
    path.write_text("")
    path.chmod(0o640)
    script = write_script(tmp_path / "s.jsonl", [{"text": "done"}])
    proc = run_headwire(["--script", str(script), "--json-file", str(path), "-p", "hi"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert path.stat().st_mode & 0o777 == 0o640 and path.read_bytes()


def test_existing_home_directories_are_not_loosened(tmp_path: Path) -> None:
    """Directories that already exist keep their mode; new ones below them are 0700."""
    home = tmp_path / "home" / ".headwire"
    home.mkdir(parents=True)
    home.chmod(0o750)
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}, {"text": "done"}],
    )
    proc = run_headwire(["--script", str(script), "--yolo", "-p", "big"], tmp_path, umask=0)
    assert proc.returncode == 0, proc.stderr
    modes = modes_under(home)
    assert modes.pop(".") == ("dir", 0o750)
    assert all(mode == (0o700 if kind == "dir" else 0o600) for kind, mode in modes.values()), modes
