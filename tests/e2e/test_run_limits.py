"""Run limits count every model call and tool call of the run, subagents' (nested ones too)
included, through the one gate of :mod:`headwire.runtime.agent.limits`; ``--max-tool-calls`` and
``model.maxSubagentDepth`` as Qwen Code 0.24.4 has them.

The model is the fake OpenAI server of ``tests/fakes`` (its request log is the count of model
calls), headwire the real CLI.  The differential test also runs upstream's CLI against the same
server when ``HEADWIRE_ORACLE_PKG_DIR`` names the installed ``@qwen-code/qwen-code`` package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from headwire.errors import ExitCode
from tests.e2e.contract import CALL_USD, messages_of, one_result, pricing, turn_results
from tests.e2e.helpers import Proc, run_cli, write_script
from tests.e2e.test_session import SESSION, jsonl, user
from tests.fakes.fake_openai import FakeOpenAI

MODES = {"json": ["-o", "json"], "stream-json": ["-o", "stream-json"]}
AGENT = {
    "tool": "agent",
    "args": {"description": "look around", "prompt": "Keep looking.", "subagent_type": ""},
}
GLOB = {"tool": "glob", "args": {"pattern": "*"}}


def fake_run(tmp: Path, replies: list[dict[str, Any]], *flags: str) -> tuple[Proc, int]:
    """headwire against a fake server scripted with ``replies``: the run and the number of
    model requests the server received."""
    with FakeOpenAI(replies) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", *flags]
        proc = run_cli(args, tmp, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
        return proc, len(fake.requests)


def subagent_ends(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The interim error results of subagents (marked with their agent call's id)."""
    return [m for m in messages if m["type"] == "result" and m.get("parent_tool_use_id")]


@pytest.mark.parametrize("mode", MODES)
def test_max_turns_counts_every_subagent_model_call(tmp_path: Path, mode: str) -> None:
    """--max-turns 2 and a subagent that keeps calling tools: two model requests in all (the
    main agent's and the subagent's first), then the run-limit result, exit 53.  Before the
    fix the subagent had no turn limit: 13 requests and a success."""
    replies = [AGENT, *[GLOB] * 10, {"text": "child done"}, {"text": "done"}]
    proc, requests = fake_run(tmp_path, replies, "--max-turns", "2", *MODES[mode], "-p", "x")
    assert (requests, proc.returncode) == (2, ExitCode.TURN_LIMIT), proc.stderr
    result = one_result(proc.stdout, "error_max_turns")
    assert result["num_turns"] == 1  # the main agent's own calls; the subagent made the other
    (interim,) = subagent_ends(messages_of(proc.stdout))
    assert "max session turns" in interim["error"]["message"]


@pytest.mark.parametrize("mode", MODES)
def test_nested_subagents_share_the_turn_limit(tmp_path: Path, mode: str) -> None:
    """A subagent of a subagent counts against the same limit: --max-turns 3 is the main
    agent's call and the two subagents' first ones."""
    replies = [AGENT, AGENT, *[GLOB] * 6, {"text": "deep"}, {"text": "mid"}, {"text": "done"}]
    flags = ["--max-turns", "3", "--max-subagent-depth", "2", *MODES[mode], "-p", "x"]
    proc, requests = fake_run(tmp_path, replies, *flags)
    assert (requests, proc.returncode) == (3, ExitCode.TURN_LIMIT), proc.stderr
    one_result(proc.stdout, "error_max_turns")
    assert len(subagent_ends(messages_of(proc.stdout))) == 2


def test_budget_counts_subagent_usage(tmp_path: Path) -> None:
    """--max-budget-usd at $0.000085 a call: the subagent's calls are spent from the same
    budget, and the call that crosses it is the run's last."""
    replies = [AGENT, *[GLOB] * 10, {"text": "child done"}, {"text": "done"}]
    flags = ["--settings", pricing("fake-model"), "--max-budget-usd", "0.0002"]
    proc, requests = fake_run(tmp_path, replies, *flags, "-o", "json", "-p", "x")
    assert (requests, proc.returncode) == (3, ExitCode.TURN_LIMIT), proc.stderr
    result = one_result(proc.stdout, "error_max_budget_usd")
    assert result["total_cost_usd"] == pytest.approx(3 * CALL_USD)


def test_max_duration_stops_a_running_subagent(tmp_path: Path) -> None:
    """The wall-clock limit is a deadline around the whole turn: a subagent's running
    ``sleep 30`` is cancelled with it, and every ``tool_use`` shown gets its result."""
    sleep = {"tool": "run_shell_command", "args": {"command": "sleep 30"}}
    script = write_script(tmp_path / "s.jsonl", [AGENT, sleep, {"text": "late"}])
    args = ["--script", str(script), "--yolo", "--max-duration", "1", "-o", "stream-json"]
    began = time.monotonic()
    proc = run_cli([*args, "-p", "x"], tmp_path)
    assert time.monotonic() - began < 10  # 1 s, plus start-up under load
    assert proc.returncode == ExitCode.TURN_LIMIT, proc.stderr
    result = one_result(proc.stdout, "error_during_execution")
    assert result["errors"][0].startswith("Reached --max-duration 1 s")
    blocks = [
        b
        for m in proc.lines()
        if m["type"] in ("assistant", "user")
        for b in m["message"]["content"]
        if b["type"] in ("tool_use", "tool_result")
    ]
    uses = {b["id"] for b in blocks if b["type"] == "tool_use"}
    assert uses == {b["tool_use_id"] for b in blocks if b["type"] == "tool_result"}
    assert len(uses) == 2  # the agent call and the subagent's sleep


@pytest.mark.parametrize("mode", MODES)
def test_max_tool_calls_counts_subagent_calls(tmp_path: Path, mode: str) -> None:
    """--max-tool-calls 2: the agent call is one, the subagent's first glob the other; its
    second is answered without running, and the main agent makes no further model call."""
    replies = [AGENT, *[GLOB] * 10, {"text": "child done"}, {"text": "done"}]
    proc, requests = fake_run(tmp_path, replies, "--max-tool-calls", "2", *MODES[mode], "-p", "x")
    assert (requests, proc.returncode) == (3, ExitCode.RUN_BUDGET), proc.stderr
    messages = messages_of(proc.stdout)
    result = one_result(proc.stdout, "error_during_execution")
    assert result["errors"][0].startswith("Reached --max-tool-calls 2")
    results = [b for m in messages if m["type"] == "user" for b in m["message"]["content"]]
    results = [b for b in results if b["type"] == "tool_result"]
    assert [b["is_error"] for b in results] == [False, True, True]  # glob, refused glob, agent
    assert results[1]["content"].startswith("Reached --max-tool-calls 2")


def test_failed_denied_and_unknown_calls_count(tmp_path: Path) -> None:
    """As Qwen Code counts: a call with bad arguments, a denied call and a call to no tool each
    count; the third answer's call is refused."""
    replies = [
        {"tool": "read_file", "args": {"nope": 1}},
        {"tool": "run_shell_command", "args": {"command": "touch f"}},
        {"tool": "no_such_tool", "args": {}},
        {"text": "never"},
    ]
    with FakeOpenAI(replies) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--max-tool-calls", "2"]
        proc = run_cli(
            [*args, "-o", "json", "-p", "x"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="k",
        )
        requests = len(fake.requests)
    assert (requests, proc.returncode) == (3, ExitCode.RUN_BUDGET), proc.stderr
    result = one_result(proc.stdout, "error_during_execution")
    assert len(result["permission_denials"]) == 1  # the shell command, asked in default mode


def test_max_tool_calls_zero_allows_none(tmp_path: Path) -> None:
    proc, requests = fake_run(tmp_path, [GLOB, {"text": "x"}], "--max-tool-calls", "0", "-p", "x")
    assert (requests, proc.returncode) == (1, ExitCode.RUN_BUDGET)
    assert "Reached --max-tool-calls 0" in proc.stderr


def test_max_tool_calls_counts_over_a_persistent_session(tmp_path: Path) -> None:
    """Like --max-session-turns, the count runs over the whole session: turns one and two use
    the two calls, turn three's call is refused (its result says so), a tool-free turn four
    still answers, and the session exits 0 at end of input."""
    script = [GLOB, {"text": "one"}, GLOB, {"text": "two"}, GLOB, {"text": "four"}]
    path = write_script(tmp_path / "s.jsonl", script)
    args = ["--script", str(path), "--yolo", *SESSION, "--max-tool-calls", "2"]
    proc = run_cli(args, tmp_path, stdin=jsonl(user("a"), user("b"), user("c"), user("d")))
    assert proc.returncode == 0, proc.stderr
    results = turn_results(proc.lines())
    assert [r["subtype"] for r in results] == [
        "success",
        "success",
        "error_during_execution",
        "success",
    ]
    assert results[2]["errors"][0].startswith("Reached --max-tool-calls 2")
    assert results[3]["result"] == "four"


def test_max_tool_calls_from_settings_and_the_flag_wins(tmp_path: Path) -> None:
    replies = [GLOB, GLOB, GLOB, {"text": "done"}]
    settings = json.dumps({"model": {"maxToolCalls": 1}})
    proc, requests = fake_run(tmp_path, replies, "--settings", settings, "-p", "x")
    assert (requests, proc.returncode) == (2, ExitCode.RUN_BUDGET)
    proc, requests = fake_run(
        tmp_path, replies, "--settings", settings, "--max-tool-calls", "-1", "-p", "x"
    )
    assert (requests, proc.returncode) == (4, 0)


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--max-tool-calls", "-2"], "--max-tool-calls: expected -1 (no limit)"),
        (["--max-subagent-depth", "0"], "--max-subagent-depth: expected a whole number from 1"),
    ],
)
def test_limit_values_out_of_range_are_refused(tmp_path: Path, flags: list[str], says: str) -> None:
    proc = run_cli(["--script", "done", *flags, "-o", "json", "-p", "x"], tmp_path)
    assert proc.returncode == ExitCode.USAGE
    assert says in proc.stderr
    assert says in one_result(proc.stdout, "error_during_execution")["errors"][0]


@pytest.mark.parametrize(
    ("flags", "depth"),
    [
        ([], 5),
        (["--max-subagent-depth", "2"], 2),
        (["--settings", '{"model": {"maxSubagentDepth": 1.7}}'], 1),
        (["--settings", '{"model": {"maxSubagentDepth": 500}}'], 100),
    ],
)
def test_subagents_nest_to_the_depth_limit(tmp_path: Path, flags: list[str], depth: int) -> None:
    """Every agent asks for a subagent, seven times in all: they nest ``depth`` levels (default
    5, as Qwen Code; a setting is rounded down and kept within 1..100), the agent at the last
    level has no ``agent`` tool, so each of its calls fails, and the run still answers."""
    calls = 7
    texts = [{"text": f"answer {n}"} for n in range(calls + 1)]
    script = write_script(tmp_path / "s.jsonl", [AGENT] * calls + texts)
    args = ["--script", str(script), "--yolo", *flags, "-o", "stream-json", "-p", "x"]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    started = [m for m in messages if m["type"] == "system" and m["subtype"] == "task_started"]
    assert len(started) == min(depth, calls)
    results = [
        b
        for m in messages
        if m["type"] == "user"
        for b in m["message"]["content"]
        if b["type"] == "tool_result"
    ]
    refused = [b for b in results if b["is_error"]]
    assert len(refused) == calls - min(depth, calls)
    assert all('"agent"' in str(b["content"]) for b in refused)
    one_result(proc.stdout, "success")


ORACLE = os.environ.get("HEADWIRE_ORACLE_PKG_DIR", "")


@pytest.mark.slow
@pytest.mark.skipif(
    not ORACLE or shutil.which("node") is None or not (Path(ORACLE) / "cli-entry.js").exists(),
    reason="HEADWIRE_ORACLE_PKG_DIR (upstream Qwen Code) not set, or no node",
)
@pytest.mark.parametrize("limit", [0, 2])
def test_max_tool_calls_matches_upstream(tmp_path: Path, limit: int) -> None:
    """The same fake model (a shell call forever) and --max-tool-calls: headwire and Qwen Code
    0.24.4 run as many calls, make as many model requests, and exit 55."""
    forever = {
        "tool": "run_shell_command",
        "args": {"command": "echo x >> n", "description": "count", "is_background": False},
    }
    seen = {}
    for who in ("headwire", "upstream"):
        work = tmp_path / who
        proj = work / "proj"
        proj.mkdir(parents=True)
        (work / "home").mkdir()
        with FakeOpenAI([forever, {"repeat_last": True}]) as fake:
            if who == "headwire":
                proc = run_cli(
                    [
                        "--auth-type",
                        "openai",
                        "-m",
                        "fake-model",
                        "--yolo",
                        "-o",
                        "json",
                        "--max-tool-calls",
                        str(limit),
                        "-p",
                        "go",
                    ],
                    work,
                    OPENAI_BASE_URL=fake.base_url,
                    OPENAI_API_KEY="k",
                )
                code = proc.returncode
            else:
                env = {
                    "PATH": os.environ.get("PATH", ""),
                    "HOME": str(work / "home"),
                    "OPENAI_API_KEY": "k",
                    "OPENAI_BASE_URL": fake.base_url,
                    "OPENAI_MODEL": "fake-model",
                    "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
                    "NO_COLOR": "1",
                    "LANG": "C.UTF-8",
                }
                code = subprocess.run(
                    [
                        "node",
                        str(Path(ORACLE) / "cli-entry.js"),
                        "--auth-type",
                        "openai",
                        "--yolo",
                        "-o",
                        "json",
                        "--max-tool-calls",
                        str(limit),
                        "-p",
                        "go",
                    ],
                    cwd=proj,
                    env=env,
                    capture_output=True,
                    timeout=120,
                    check=False,
                ).returncode
            ran = (proj / "n").read_text().count("x") if (proj / "n").exists() else 0
            seen[who] = (code, ran, len(fake.requests))
    assert seen["headwire"] == seen["upstream"] == (55, limit, limit + 1)
