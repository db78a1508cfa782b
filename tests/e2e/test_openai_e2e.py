"""End to end over real HTTP: the CLI against the scripted fake OpenAI-compatible server.

Upstream's capture recipe, reproduced: the model calls ``run_shell_command`` printing 499,999
bytes, then answers ``done``.  Also the failure modes of a misbehaving model server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from headwire.projection import project_tool_result_content
from tests.e2e.helpers import BIG_COMMAND, env_for, recordings, run_cli
from tests.e2e.test_headless_modes import check_bounded_result, tool_results
from tests.fakes.fake_openai import FakeOpenAI
from tests.shapes import message_shapes, upstream_shapes

BIG_TOOL: dict[str, Any] = {
    "tool": "run_shell_command",
    "args": {"command": BIG_COMMAND, "description": "print a large output", "is_background": False},
}
FLAGS = ["--auth-type", "openai", "-m", "fake-model", "--yolo"]
PROMPT = ["-p", "Run the big output tool once, then say done."]


def run_against(fake: FakeOpenAI, args: list[str], tmp: Path, **kw: Any) -> Any:
    return run_cli(args, tmp, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-test-secret", **kw)


@pytest.mark.parametrize(
    ("mode", "sample"),
    [
        (["-o", "json"], "shell-json"),
        (["-o", "stream-json"], "shell-stream-json"),
        (["-o", "stream-json", "--include-partial-messages"], "shell-stream-json-partial"),
    ],
)
def test_big_output_session_matches_upstream(tmp_path: Path, mode: list[str], sample: str) -> None:
    with FakeOpenAI([BIG_TOOL, {"text": "done"}]) as fake:
        proc = run_against(fake, [*FLAGS, *mode, *PROMPT], tmp_path)
        bodies = list(fake.requests)
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()[sample]
    messages = json.loads(proc.stdout) if mode[1] == "json" else proc.lines()
    check_bounded_result(proc, messages)
    # the model saw its own bounded text, not the wire preview and not the whole output
    tool_msg = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert "The full output has been saved to" in tool_msg["content"]
    assert len(tool_msg["content"]) < 30_000
    assert b"sk-test-secret" not in proc.stdout
    for path in recordings(proc.home):
        assert b"sk-test-secret" not in path.read_bytes()


def test_text_mode_over_http(tmp_path: Path) -> None:
    with FakeOpenAI([BIG_TOOL, {"text": "done"}]) as fake:
        proc = run_against(fake, [*FLAGS, "-o", "text", *PROMPT], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ({"error_status": 400, "message": "bad request body"}, "HTTP 400"),
        ({"malformed": True}, "Malformed streaming response"),
        ({"drop_after_chunks": 2, "text": "partial answer here"}, "Connection closed mid-stream"),
    ],
)
def test_misbehaving_server_is_a_clear_error(
    tmp_path: Path, reply: dict[str, Any], needle: str
) -> None:
    script = [reply, reply, reply, reply, reply]
    with FakeOpenAI(script) as fake:
        for fmt in ("text", "json", "stream-json"):
            proc = run_against(fake, [*FLAGS, "-o", fmt, "-p", "hi"], tmp_path / fmt)
            assert proc.returncode == 1, proc.stderr
            assert "Traceback" not in proc.stderr
            if fmt == "text":
                assert needle in proc.stderr and proc.stdout == b""
            else:
                text = proc.stdout.decode()
                last = json.loads(text)[-1] if fmt == "json" else json.loads(text.splitlines()[-1])
                assert last["type"] == "result" and last["is_error"] is True
                assert needle in last["error"]["message"]


def test_retries_a_500_then_succeeds(tmp_path: Path) -> None:
    with FakeOpenAI([{"error_status": 500}, {"text": "done"}]) as fake:
        proc = run_against(fake, [*FLAGS, "-o", "text", "-p", "hi"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"


def test_unreachable_server(tmp_path: Path) -> None:
    quick = '{"model": {"generationConfig": {"retryInitialDelayMs": 10}}}'
    proc = run_cli(
        [*FLAGS, "--settings", quick, "-o", "text", "-p", "hi"],
        tmp_path,
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        OPENAI_API_KEY="k",
    )
    assert proc.returncode == 1
    assert "Cannot reach model server" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_model_configuration(tmp_path: Path) -> None:
    proc = run_cli(["-p", "hi"], tmp_path)
    assert proc.returncode == 2
    assert "model" in proc.stderr.lower() and "Traceback" not in proc.stderr


def test_tool_failure_and_timeout_are_tool_errors(tmp_path: Path) -> None:
    script = [
        {"tool": "run_shell_command", "args": {"command": "exit 3"}},
        {"tool": "run_shell_command", "args": {"command": "sleep 30", "timeout": 300}},
        {"tool": "no_such_tool", "args": {}},
        {"text": "done"},
    ]
    with FakeOpenAI(script) as fake:
        proc = run_against(fake, [*FLAGS, "-o", "json", "-p", "go"], tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(json.loads(proc.stdout))
    assert [r["is_error"] for r in results] == [True, True, True]
    assert "timed out" in results[1]["content"].lower()
    assert "not found" in results[2]["content"]


def test_closed_stdout_finishes_the_turn_and_keeps_the_recording(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proj = tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    with FakeOpenAI([BIG_TOOL, {"text": "done"}]) as fake:
        env = env_for(home, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
        proc = subprocess.Popen(
            [sys.executable, "-m", "headwire", *FLAGS, "-o", "stream-json", *PROMPT],
            cwd=proj,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        proc.stdout.readline()  # system/init, then the reader goes away
        proc.stdout.close()
        _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err
    assert proc.returncode == 0
    (recording,) = recordings(home)
    kinds = [json.loads(line)["type"] for line in recording.read_text().splitlines()]
    assert kinds == [
        "user",
        "assistant",
        "tool_pending",
        "tool_started",
        "tool_result",
        "assistant",
        "result",
    ]
    tool = [json.loads(line) for line in recording.read_text().splitlines()][4]
    assert tool["display"].startswith("x" * 499_998)
    assert project_tool_result_content(tool["display"]) != tool["display"]


def test_a_local_server_needs_no_key_and_no_key_nor_url_stops_before_any_request(
    tmp_path: Path,
) -> None:
    with FakeOpenAI([{"text": "done"}]) as fake:
        bare = run_cli([*FLAGS, "-p", "hi"], tmp_path, OPENAI_BASE_URL=fake.base_url)
        keyed = run_against(fake, [*FLAGS, "-p", "hi"], tmp_path)
        assert len(fake.requests) == 2
    assert bare.returncode == 0 and bare.stdout == b"done\n"
    assert bare.stderr == ""  # a loopback server: no "no API key" warning
    assert keyed.returncode == 0 and "API key" not in keyed.stderr
    nothing = run_cli([*FLAGS, "-p", "hi"], tmp_path)
    assert nothing.returncode == 2 and nothing.stdout == b""
    assert "set OPENAI_API_KEY" in nothing.stderr and "OPENAI_BASE_URL" in nothing.stderr
