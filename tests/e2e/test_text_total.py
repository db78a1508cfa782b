"""Text is total at every boundary: names and output that are not UTF-8, and lone surrogates.

The rule (docs/reference.md, "Text at every boundary"): a lone surrogate is written as the JSON
escape ``\\udxxx`` by every writer and read back as that same surrogate by every reader.
Each test is a finding of issue 11 reproduced with a real ``headwire`` subprocess against the
fake OpenAI server or a real MCP server; each failed before the fix.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.e2e.helpers import env_for, recordings, run_cli
from tests.fakes.fake_openai import FakeOpenAI

NAME = "caf\udce9.txt"
"""``caf\\xe9.txt`` as Python lists it (the byte 0xE9 surrogate-escaped)."""
MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"


def _latin1_file(tmp: Path) -> None:
    proj = tmp / "proj"
    proj.mkdir(parents=True, exist_ok=True)
    (proj / b"caf\xe9.txt".decode("utf-8", "surrogateescape")).write_bytes(b"bonjour\n")


def _tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "tool"]


def test_a_latin1_file_name_survives_stream_json_and_resume(tmp_path: Path) -> None:
    _latin1_file(tmp_path)
    script = [
        {"tool": "glob", "args": {"pattern": "*"}},
        {"tool": "read_file", "args": {"file_path": str(tmp_path / "proj" / NAME)}},
        {"text": "done"},
        {"text": "resumed"},
    ]
    with FakeOpenAI(script) as fake:
        base = ["-m", "m", "--openai-base-url", fake.base_url, "--yolo", "-o", "stream-json"]
        proc = run_cli([*base, "--session-id", "latin1", "-p", "list"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        lines = proc.lines()
        assert lines[-1]["type"] == "result" and lines[-1]["subtype"] == "success"
        # The model saw the name as the escape and, given it back, read that very file.
        assert NAME in _tool_messages(fake.requests[1])[0]
        assert "bonjour" in _tool_messages(fake.requests[2])[1]
        # --resume reads every recorded record back: no "Tool call interrupted" substitute.
        resumed = run_cli([*base, "--resume", "latin1", "-p", "again"], tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        history = _tool_messages(fake.requests[3])
    assert len(history) == 2 and NAME in history[0] and "bonjour" in history[1]
    assert not any("interrupted" in h for h in history)
    (recording,) = recordings(proc.home)
    assert b"caf\\udce9.txt" in recording.read_bytes()


def _session_lines(*prompts: str) -> bytes:
    return b"".join(
        json.dumps(
            {
                "type": "user",
                "session_id": "",
                "parent_tool_use_id": None,
                "message": {"role": "user", "content": p},
            }
        ).encode()
        + b"\n"
        for p in prompts
    )


def test_a_latin1_file_name_does_not_poison_a_persistent_session(tmp_path: Path) -> None:
    """Before: every later prompt got "Internal error"; a stdin line holding an escaped lone
    surrogate was a bad line (orjson refuses the escape)."""
    _latin1_file(tmp_path)
    script = [{"tool": "glob", "args": {"pattern": "*"}}, {"text": "one"}, {"text": "two"}]
    with FakeOpenAI(script) as fake:
        proc = run_cli(
            [
                "-m",
                "m",
                "--openai-base-url",
                fake.base_url,
                "--yolo",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ],
            tmp_path,
            stdin=_session_lines("list", "and then? \ud83d"),  # a lone surrogate escaped
        )
        last = fake.requests[-1]["messages"][-1]["content"]
    assert proc.returncode == 0, proc.stderr
    results = [m for m in proc.lines() if m["type"] == "result"]
    assert [(r["is_error"], r["result"]) for r in results] == [(False, "one"), (False, "two")]
    assert last.endswith("and then? \ud83d")


def test_a_lone_surrogate_in_an_sse_chunk_and_in_tool_arguments(tmp_path: Path) -> None:
    script = [
        {"tool": "run_shell_command", "args": {"command": "echo 'x\ud800y' | wc -c"}},
        {"text": "lone \ud800 here"},
    ]
    with FakeOpenAI(script) as fake:
        proc = run_cli(
            ["-m", "m", "--openai-base-url", fake.base_url, "--yolo", "-o", "json", "-p", "go"],
            tmp_path,
        )
        second = fake.requests[1]
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(proc.stdout)
    assert messages[-1]["result"] == "lone \ud800 here"
    call = second["messages"][-2]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"command": "echo 'x\ud800y' | wc -c"}


def _acp(tmp: Path, base_url: str) -> subprocess.Popen[bytes]:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "headwire", "--acp", "--yolo", "-m", "m"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=proj,
        env=env_for(home, OPENAI_BASE_URL=base_url),
    )


def _rpc(proc: subprocess.Popen[bytes], msg_id: int, method: str, params: Any) -> Any:
    assert proc.stdin is not None and proc.stdout is not None
    line = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    proc.stdin.write(line.encode() + b"\n")
    proc.stdin.flush()
    while True:
        raw = proc.stdout.readline()
        assert raw, "stdout closed early"
        message = json.loads(raw)
        if message.get("id") == msg_id and "method" not in message:
            return message


def test_an_acp_prompt_with_a_lone_surrogate_keeps_the_session_working(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "first"}, {"text": "second"}]) as fake:
        proc = _acp(tmp_path, fake.base_url)
        try:
            _rpc(proc, 1, "initialize", {"protocolVersion": 1})
            cwd = str(tmp_path / "proj")
            session = _rpc(proc, 2, "session/new", {"cwd": cwd, "mcpServers": []})["result"]
            sid = session["sessionId"]
            prompt = [{"type": "text", "text": "half an emoji: \ud83d"}]
            first = _rpc(proc, 3, "session/prompt", {"sessionId": sid, "prompt": prompt})
            again = [{"type": "text", "text": "and again"}]
            second = _rpc(proc, 4, "session/prompt", {"sessionId": sid, "prompt": again})
            requests = list(fake.requests)
        finally:
            proc.kill()
            proc.wait()
    assert first["result"]["stopReason"] == "end_turn", first
    assert second["result"]["stopReason"] == "end_turn", second
    assert requests[0]["messages"][-1]["content"].endswith("half an emoji: \ud83d")


def _mcp_config() -> str:
    server = {"command": sys.executable, "args": [str(MCP_SERVER), "raw-text"], "trust": True}
    return json.dumps({"mcpServers": {"raw": server}})


def test_mcp_results_node_accepts_are_answered_at_once(tmp_path: Path) -> None:
    script = [
        {
            "tools": [
                {"name": "mcp__raw__lone", "args": {}},
                {"name": "mcp__raw__latin1", "args": {}},
                {"name": "mcp__raw__echo", "args": {"text": "sent \udc00 back"}},
                {"name": "mcp__raw__broken", "args": {}},
            ]
        },
        {"text": "done"},
    ]
    started = time.monotonic()
    with FakeOpenAI(script) as fake:
        proc = run_cli(
            [
                "-m",
                "m",
                "--openai-base-url",
                fake.base_url,
                "--yolo",
                "-o",
                "json",
                "--tool-timeout",
                "60",
                "--mcp-config",
                _mcp_config(),
                "-p",
                "go",
            ],
            tmp_path,
            timeout=90,
        )
        second = fake.requests[1]
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 30, elapsed
    lone, latin1, echo, broken = _tool_messages(second)
    assert lone == "lone \ud800 surrogate"
    assert latin1 == "caf\ufffd au lait"
    assert echo == "sent \udc00 back"
    assert "not JSON" in broken


def test_headwire_sdk_sends_and_reads_lone_surrogates(tmp_path: Path) -> None:
    """The SDK wrote a prompt holding ``\\udc00`` with orjson (crash) and skipped every line
    holding ``\\ud800`` (so a turn whose result held one never ended)."""
    from headwire.sdk import Options, ResultMessage, query

    home, proj = tmp_path / "home", tmp_path / "proj"
    proj.mkdir(parents=True)

    async def one_turn(base_url: str) -> list[Any]:
        env = env_for(home, OPENAI_BASE_URL=base_url)
        options = Options(cwd=proj, env=env, model="m", approval_mode="yolo")
        return [m async for m in query("half \udc00 of it", options)]

    with FakeOpenAI([{"text": "back \ud800 again"}]) as fake:
        messages = asyncio.run(asyncio.wait_for(one_turn(fake.base_url), 60))
        sent = fake.requests[0]["messages"][-1]["content"]
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert len(results) == 1 and results[0].result == "back \ud800 again"
    assert sent.endswith("half \udc00 of it")


def test_raw_line_separators_inside_an_sse_chunk(tmp_path: Path) -> None:
    """A server that writes U+2028, U+0085 or \\x1c raw inside a JSON string (as
    ``JSON.stringify`` does) had its chunk cut in two by ``str.splitlines``: "Malformed
    streaming response"."""
    text = "one\u2028two\u2029three\x85four\x1cfive\x0bsix\x0cseven"
    with FakeOpenAI([{"text": text, "raw_unicode": True}]) as fake:
        proc = run_cli(
            ["-m", "m", "--openai-base-url", fake.base_url, "-o", "json", "-p", "go"], tmp_path
        )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[-1]["result"] == text


def test_tool_arguments_nested_deeper_than_orjson_writes(tmp_path: Path) -> None:
    """Arguments nested 300 deep (JSON.stringify writes any depth) ended the stream-JSON run
    with ``TypeError: Recursion limit reached`` and no result."""
    deep: Any = "x\ud800"
    for _ in range(300):
        deep = [deep]
    script = tmp_path / "deep.jsonl"
    script.write_text(
        json.dumps({"tool": "read_file", "args": {"file_path": "nope", "deep": deep}})
        + "\n"
        + json.dumps({"text": "done"})
        + "\n"
    )
    proc = run_cli(["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.lines()
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "done"
    (recording,) = recordings(proc.home)
    assert b"[[[[" in recording.read_bytes()
