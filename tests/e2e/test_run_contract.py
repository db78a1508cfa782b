"""The run contract, end to end: every ending of a run or a turn gives exactly one ``result``
whose ``subtype``, ``is_error``, ``errors`` and the exit code agree (the README's exit-code
matrix: each row names its test here, and :func:`test_every_matrix_row_names_a_test` checks
that the names exist), with the partial answer and a session that can be resumed.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from headwire.errors import ExitCode
from tests.e2e.contract import (
    CALL_USD,
    check_result,
    expected_exit,
    messages_of,
    one_result,
    pricing,
    turn_results,
)
from tests.e2e.helpers import run_cli, write_script
from tests.e2e.test_session import SESSION, control, jsonl, user
from tests.fakes.fake_openai import FakeOpenAI
from tests.faults.util import start, wait_until
from tests.paths import ROOT

MODES = {"json": ["-o", "json"], "stream-json": ["-o", "stream-json"]}
SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"


def scripted(tmp: Path, turns: list[dict[str, Any]], *extra: str) -> list[str]:
    return ["--script", str(write_script(tmp / "s.jsonl", turns)), "--yolo", *extra]


def resume_args(tmp: Path, session_id: str) -> list[str]:
    return ["--script", str(tmp / "s.jsonl"), "--resume", session_id, "-o", "json", "-p", "go on"]


@pytest.mark.parametrize("mode", MODES)
def test_answer(tmp_path: Path, mode: str) -> None:
    proc = run_cli([*scripted(tmp_path, [{"text": "all good"}]), *MODES[mode], "-p", "x"], tmp_path)
    assert proc.returncode == expected_exit("success") == 0
    result = one_result(proc.stdout, "success")
    assert result["result"] == "all good" and result["stop_reason"] == "end_turn"
    assert result["stats"]["models"]["scripted"]["tokens"]["prompt"] == 11  # as JSON mode
    assert result["total_cost_usd"] is None  # the scripted model has no price: null, never 0
    assert result["modelUsage"]["scripted"]["costUSD"] is None


@pytest.mark.parametrize("mode", MODES)
def test_model_error(tmp_path: Path, mode: str) -> None:
    turns = [
        {"text": "partly there", "tool": "glob", "args": {"pattern": "*.py"}},
        {"error": "boom"},
    ]
    proc = run_cli([*scripted(tmp_path, turns), *MODES[mode], "-p", "x"], tmp_path)
    assert proc.returncode == expected_exit("error_during_execution") == 1
    result = one_result(proc.stdout, "error_during_execution")
    assert result["errors"] == ["boom"] and result["result"] == "partly there"


def test_model_error_in_text_mode_goes_to_stderr(tmp_path: Path) -> None:
    proc = run_cli([*scripted(tmp_path, [{"error": "boom"}]), "-p", "x"], tmp_path)
    assert (proc.returncode, proc.stdout) == (1, b"") and "boom" in proc.stderr


def test_tool_crash(tmp_path: Path) -> None:
    """An MCP server that dies mid-call fails that call; the turn goes on to its answer."""
    config = json.dumps({"mcpServers": {"s": {"command": sys.executable, "args": [str(SERVER)]}}})
    turns = [{"tool": "mcp__s__crash", "args": {}}, {"text": "recovered"}]
    args = [*scripted(tmp_path, turns), "--mcp-config", config, "-o", "stream-json", "-p", "x"]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    (block,) = [b for m in proc.lines() if m["type"] == "user" for b in m["message"]["content"]]
    assert block["is_error"] is True
    assert one_result(proc.stdout, "success")["result"] == "recovered"


@pytest.mark.parametrize("mode", MODES)
def test_max_turns(tmp_path: Path, mode: str) -> None:
    turns = [{"text": "step one", "tool": "glob", "args": {"pattern": "*"}}, {"text": "never"}]
    args = [*scripted(tmp_path, turns), "--max-turns", "1", *MODES[mode], "-p", "x"]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == expected_exit("error_max_turns", limit=True) == 53
    result = one_result(proc.stdout, "error_max_turns")
    assert result["result"] == "step one" and result["num_turns"] == 1
    resumed = run_cli(resume_args(tmp_path, result["session_id"]), tmp_path)
    assert resumed.returncode == 0 and one_result(resumed.stdout, "success")["result"] == "never"


@pytest.mark.parametrize("mode", MODES)
def test_budget(tmp_path: Path, mode: str) -> None:
    """--max-budget-usd 0.0001 at $0.000085 a call: the second call crosses it and is the last;
    the session resumes (with a new budget for the new run) and its total goes on."""
    tool = {"tool": "glob", "args": {"pattern": "*"}}
    with FakeOpenAI([{"text": "looking", **tool}, tool, tool, {"text": "done"}]) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", *MODES[mode]]
        args += ["--settings", pricing("fake-model"), "--max-budget-usd", "0.0001", "-p", "x"]
        proc = run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
        calls = len(fake.requests)
        assert proc.returncode == expected_exit("error_max_budget_usd", limit=True) == 53
        assert calls == 2  # 0.000085 < 0.0001, then 0.00017: stop before a third
        result = one_result(proc.stdout, "error_max_budget_usd")
        assert result["total_cost_usd"] == pytest.approx(2 * CALL_USD)
        assert "0.0001" in result["errors"][0] and result["result"] == "looking"
        resume = ["--auth-type", "openai", "-m", "fake-model", "--yolo", *MODES[mode]]
        resume += ["--settings", pricing("fake-model"), "--max-budget-usd", "1"]
        resume += ["--resume", result["session_id"], "-p", "go on"]
        again = run_cli(resume, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
    assert again.returncode == 0, again.stderr
    total = one_result(again.stdout, "success")["total_cost_usd"]
    assert total == pytest.approx(4 * CALL_USD)  # the two calls before and the two now


@pytest.mark.parametrize("mode", MODES)
def test_max_tool_calls(tmp_path: Path, mode: str) -> None:
    """--max-tool-calls 2 with a model that calls a tool forever: two calls run, the third is
    answered without running, no further model call starts, exit 55, and one result."""
    forever = {"text": "working", "tool": "run_shell_command", "args": {"command": "echo x >> n"}}
    with FakeOpenAI([forever, {"repeat_last": True}]) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", *MODES[mode]]
        proc = run_cli(
            [*args, "--max-tool-calls", "2", "-p", "x"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="k",
        )
        requests = len(fake.requests)
    assert proc.returncode == expected_exit("error_during_execution", limit="tool_calls") == 55
    assert requests == 3  # as Qwen Code: the third answer's call is the one refused
    assert (tmp_path / "proj" / "n").read_text() == "x\n" * 2
    result = one_result(proc.stdout, "error_during_execution")
    assert result["errors"][0].startswith("Reached --max-tool-calls 2") and result["result"]
    assert result["num_turns"] == 3 and result["stop_reason"] == "tool_use"
    blocks = [
        b
        for m in messages_of(proc.stdout)
        if m["type"] in ("assistant", "user")
        for b in m["message"]["content"]
        if b["type"] in ("tool_use", "tool_result")
    ]
    assert [b["type"] for b in blocks] == ["tool_use", "tool_result"] * 3
    assert [b.get("is_error") for b in blocks[1::2]] == [False, False, True]
    with FakeOpenAI([{"text": "done"}]) as fake:  # the recording is complete: it resumes
        args += ["--resume", result["session_id"], "--max-tool-calls", "2", "-p", "go on"]
        resumed = run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
    assert resumed.returncode == 0 and one_result(resumed.stdout, "success")["result"] == "done"


def test_budget_needs_a_price(tmp_path: Path) -> None:
    proc = run_cli(
        [*scripted(tmp_path, []), "--max-budget-usd", "1", "-o", "stream-json", "-p", "x"],
        tmp_path,
    )
    assert proc.returncode == ExitCode.USAGE
    assert "modelPricing" in one_result(proc.stdout, "error_during_execution")["errors"][0]


@pytest.mark.parametrize("mode", MODES)
def test_duration(tmp_path: Path, mode: str) -> None:
    turns = [{"text": "started", "tool": "run_shell_command", "args": {"command": "sleep 30"}}]
    args = [*scripted(tmp_path, turns), "--max-duration", "1", *MODES[mode], "-p", "x"]
    began = time.monotonic()
    proc = run_cli(args, tmp_path)
    elapsed = time.monotonic() - began
    assert proc.returncode == expected_exit("error_during_execution", limit=True) == 53
    assert elapsed < 8, elapsed  # 1 s, plus start-up and the shell's cleanup under load
    result = one_result(proc.stdout, "error_during_execution")
    assert result["errors"][0].startswith("Reached --max-duration 1 s") and result["result"]
    answered = [m for m in messages_of(proc.stdout) if m["type"] == "user"]
    assert answered, "the cancelled call got its tool_result"
    resumed = run_cli(resume_args(tmp_path, result["session_id"]), tmp_path)
    assert resumed.returncode == 0 and one_result(resumed.stdout, "success")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal(tmp_path: Path, signum: signal.Signals) -> None:
    turns = [{"tool": "run_shell_command", "args": {"command": "sleep 30"}}]
    cli = start([*scripted(tmp_path, turns), "-o", "stream-json", "-p", "x"], tmp_path)
    wait_until(lambda: any(m["type"] == "assistant" for m in cli.stdout_lines()), "the call")
    time.sleep(0.3)
    cli.proc.send_signal(signum)
    code = cli.wait()
    assert code == {signal.SIGINT: 130, signal.SIGTERM: 143}[signum]
    result = check_result(turn_results(cli.stdout_lines())[0], "error_during_execution")
    assert len(turn_results(cli.stdout_lines())) == 1
    assert result["errors"] == ["Operation cancelled."]


def test_signal_before_the_turn(tmp_path: Path) -> None:
    """A signal while an MCP server is still starting: the stand-in result, exit 143."""
    config = json.dumps({"mcpServers": {"slow": {"command": "sleep", "args": ["30"]}}})
    cli = start(
        [*scripted(tmp_path, []), "--mcp-config", config, "-o", "json", "-p", "x"], tmp_path
    )
    wait_until(lambda: "sleep 30" in str(_children(cli.pid)), "the MCP server to start")
    cli.proc.send_signal(signal.SIGTERM)
    assert cli.wait() == 143
    results = turn_results(messages_of(bytes(cli.out)))
    assert len(results) == 1 and check_result(results[0], "error_during_execution")


def _children(pid: int) -> dict[int, str]:
    from tests.faults.util import descendants

    return descendants(pid)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--max-turns", "abc"], "--max-turns: invalid int value"),
        (["--settings", '{"tools": {"exclude": "x"}}'], "tools.exclude"),
        (["--json-schema", '{"type": "objekt"}'], "not a valid JSON Schema"),
        (["--max-budget-usd", "-1"], "--max-budget-usd"),
    ],
)
def test_startup_failure(tmp_path: Path, mode: str, flags: list[str], says: str) -> None:
    proc = run_cli([*scripted(tmp_path, []), *flags, *MODES[mode], "-p", "x"], tmp_path)
    assert proc.returncode == ExitCode.USAGE
    result = one_result(proc.stdout, "error_during_execution")
    assert says in result["errors"][0] and says in proc.stderr
    assert result["num_turns"] == 0 and result["total_cost_usd"] == 0


def test_startup_failure_in_text_mode_writes_nothing(tmp_path: Path) -> None:
    proc = run_cli([*scripted(tmp_path, []), "--json-schema", "{", "-p", "x"], tmp_path)
    assert (proc.returncode, proc.stdout) == (ExitCode.USAGE, b"")
    assert "--json-schema: not valid JSON" in proc.stderr


def test_session_turns(tmp_path: Path) -> None:
    """A persistent session: each turn (and a bad line) ends with its own consistent result;
    the session goes on and exits 0 at end of input; cost is the running total."""
    turns = [
        {"text": "one"},
        {"error": "boom"},
        {"tool": "glob", "args": {"pattern": "*"}},
        {"text": "never reached: the turn limit"},
    ]
    args = [*scripted(tmp_path, turns), "--max-session-turns", "3", *SESSION]
    args += ["--settings", pricing("scripted")]
    stdin = jsonl(user("a"), user("b"), "not json", user("c"), user("d"))
    proc = run_cli(args, tmp_path, stdin=stdin, check_input=False)
    assert proc.returncode == 0, proc.stderr
    results = turn_results(proc.lines())
    subtypes = ["success", "error_during_execution", "error_during_execution", "error_max_turns"]
    subtypes.append("error_max_turns")
    assert [r["subtype"] for r in results] == subtypes
    for result, subtype in zip(results, subtypes, strict=True):
        check_result(result, subtype)
    costs = [r["total_cost_usd"] for r in results]
    assert costs == sorted(costs) and costs[-1] == pytest.approx(2 * CALL_USD)  # no usage: error


def test_session_interrupt(tmp_path: Path) -> None:
    turns = [{"tool": "run_shell_command", "args": {"command": "sleep 30"}}, {"text": "after"}]
    stdin_path = tmp_path / "in.jsonl"
    stdin_path.write_bytes(jsonl(user("a")))
    cli = start(
        [*scripted(tmp_path, turns), *SESSION], tmp_path, stdin=__import__("subprocess").PIPE
    )
    assert cli.proc.stdin is not None
    cli.proc.stdin.write(jsonl(user("a")))
    cli.proc.stdin.flush()
    wait_until(lambda: any(m["type"] == "assistant" for m in cli.stdout_lines()), "the call")
    cli.proc.stdin.write(jsonl(control("i1", "interrupt"), user("b")))
    cli.proc.stdin.close()
    assert cli.wait() == 0
    results = turn_results(cli.stdout_lines())
    assert [r["subtype"] for r in results] == ["error_during_execution", "success"]
    check_result(results[0], "error_during_execution")
    assert results[1]["result"] == "after"


def test_session_max_duration_is_per_turn(tmp_path: Path) -> None:
    """``--max-duration`` bounds each turn of a persistent session: the slow turn ends with its
    own error result (the call answered, the partial text kept), the session lives on and the
    next turn, which starts a fresh clock, succeeds; end of input exits 0."""
    turns = [
        {"text": "started", "tool": "run_shell_command", "args": {"command": "sleep 30"}},
        {"text": "second"},
    ]
    args = [*scripted(tmp_path, turns), "--max-duration", "1", *SESSION]
    began = time.monotonic()
    proc = run_cli(args, tmp_path, stdin=jsonl(user("a"), user("b")))
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - began < 10
    results = turn_results(proc.lines())
    assert [r["subtype"] for r in results] == ["error_during_execution", "success"]
    check_result(results[0], "error_during_execution")
    assert results[0]["errors"][0].startswith("Reached --max-duration 1 s")
    assert results[0]["result"] == "started"
    assert results[1]["result"] == "second"
    answered = [m for m in messages_of(proc.stdout) if m["type"] == "user"]
    assert answered, "the cancelled call got its tool_result"


def test_session_startup_failure(tmp_path: Path) -> None:
    proc = run_cli(
        [*scripted(tmp_path, []), "--settings", '{"nope": 1}', *SESSION],
        tmp_path,
        stdin=jsonl(user("a")),
    )
    assert proc.returncode == ExitCode.USAGE
    assert "nope" in one_result(proc.stdout, "error_during_execution")["errors"][0]


def test_every_matrix_row_names_a_test() -> None:
    """The README's exit-code matrix: each row names a test of this module (or another
    file's) that exists."""
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Exit codes") :]
    table = table[: table.index("\n## ", 5)]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`test_" in line]
    assert len(rows) >= 10
    for row in rows:
        for path, name in re.findall(r"`(?:(tests/[\w/]+\.py)::)?(test_\w+)`", row):
            source = (ROOT / path if path else Path(__file__)).read_text()
            assert f"def {name}(" in source, (path, name)
