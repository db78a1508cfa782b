"""``--include-bound-records``: each ``tool_result`` the 65,536-byte bound cut is followed by a
``system``/``tool_result_bound`` record (stream-JSON, the SDK types, Dual Output); without the
flag the wire has none.  Every line is checked against the wire schema by ``run_cli``."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from headwire.sdk import ToolResultBound, parse_message
from headwire.wire import encode
from tests.e2e.helpers import BIG_COMMAND, BIG_OUTPUT, BIG_SHA256, env_for, run_cli, write_script
from tests.wire_schema import check_line

QUICK_START = [
    "--model",
    "scripted:demo",
    "--yolo",
    "-o",
    "stream-json",
    "-p",
    "Run the big output tool once, then say done.",
]


def test_the_quick_start_run_gives_one_record(tmp_path: Path) -> None:
    sidecar = tmp_path / "dual.jsonl"
    args = [*QUICK_START, "--include-bound-records", "--json-file", str(sidecar)]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    records = [m for m in messages if m.get("subtype") == "tool_result_bound"]
    assert len(records) == 1
    (record,) = records
    i = messages.index(record)
    block = messages[i - 1]["message"]["content"][0]  # right after the cut tool_result
    assert block["type"] == "tool_result" and block["tool_use_id"] == record["tool_use_id"]
    assert record["shown_json_bytes"] == len(encode(block["content"])) == 65_536
    assert record["original_json_bytes"] > 499_999 and record["parent_tool_use_id"] is None
    artifact = record["artifact"]
    data = Path(artifact["path"]).read_bytes()
    assert data == BIG_OUTPUT and artifact["bytes"] == len(data)
    assert artifact["sha256"] == hashlib.sha256(data).hexdigest() == BIG_SHA256
    parsed = parse_message(record)
    assert isinstance(parsed, ToolResultBound) and parsed.artifact == artifact
    dual = [json.loads(line) for line in sidecar.read_text().splitlines()]
    assert record in dual


def test_without_the_flag_there_is_no_record(tmp_path: Path) -> None:
    proc = run_cli(QUICK_START, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not [m for m in proc.lines() if m.get("subtype") == "tool_result_bound"]


def test_acp_update_carries_the_facts_in_meta(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}, {"text": "done"}],
    )
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(proj), "mcpServers": []},
        },
    ]
    args = [sys.executable, "-m", "headwire", "--experimental-acp", "--yolo"]
    args += ["--script", str(script), "--include-bound-records"]
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=proj,
        env=env_for(home),
    )
    assert proc.stdin is not None and proc.stdout is not None
    for frame in frames:
        proc.stdin.write(json.dumps(frame).encode() + b"\n")
    proc.stdin.flush()
    session_id = None
    while session_id is None:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == 2:
            session_id = message["result"]["sessionId"]
    prompt = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/prompt",
        "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "big"}]},
    }
    proc.stdin.write(json.dumps(prompt).encode() + b"\n")
    proc.stdin.flush()
    lines: list[bytes] = []
    while not lines or json.loads(lines[-1]).get("id") != 3:
        line = proc.stdout.readline()
        assert line, "stdout closed early"
        lines.append(line.rstrip(b"\n"))
    proc.communicate(timeout=60)
    for n, line in enumerate(lines):
        check_line("acp", "output", line + b"\n", f"stdout line {n}")
    updates = [
        json.loads(line)["params"]["update"] for line in lines if b"tool_call_update" in line
    ]
    facts = [u["_meta"]["toolResultBound"] for u in updates if "toolResultBound" in u["_meta"]]
    assert len(facts) == 1
    assert facts[0]["shown_json_bytes"] == 65_536 and facts[0]["original_json_bytes"] > 499_999
    assert facts[0]["artifact"]["sha256"] == BIG_SHA256
