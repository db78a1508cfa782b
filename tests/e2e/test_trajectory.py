"""``--trajectory-out`` and ``sessions export --format atif``: an ATIF file at every ending.

A run with two tool calls and a subagent (the fake OpenAI server, distinct usage per call)
gives a trajectory that Harbor's validator accepts (when ``HEADWIRE_HARBOR_PYTHON`` names a
Python with ``harbor``; the structural check of :mod:`tests.atif_check` always runs), whose
model-call count and token sums equal the stream-JSON ``result``, with the subagent's steps and
tokens embedded.  A trajectory is also written after SIGTERM and after each run limit.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.atif_check import check_structure, harbor_validate, load
from tests.e2e.contract import messages_of, pricing, turn_results
from tests.e2e.helpers import run_cli, write_script
from tests.fakes.fake_openai import FakeOpenAI
from tests.faults.util import start, wait_until


def usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


AGENT = {
    "description": "look around",
    "prompt": "List the files.",
    "subagent_type": "general-purpose",
}
REPLIES = [
    {"tool": "agent", "args": AGENT, "id": "call_agent", "usage": usage(100, 7)},
    {"tool": "glob", "args": {"pattern": "*"}, "id": "call_sub_glob", "usage": usage(50, 5, 10)},
    {"text": "child done", "usage": usage(60, 6)},
    {
        "text": "two tools",
        "tools": [
            {"name": "run_shell_command", "args": {"command": "echo hi"}, "id": "call_shell"},
            {"name": "glob", "args": {"pattern": "*.md"}, "id": "call_glob"},
        ],
        "usage": usage(120, 8, 40),
    },
    {"text": "done", "usage": usage(130, 9, 100)},
]


def test_run_with_tools_and_subagent(tmp_path: Path) -> None:
    out = tmp_path / "out" / "trajectory.json"
    with FakeOpenAI(REPLIES) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", "-o", "stream-json"]
        args += ["--trajectory-out", str(out), "-p", "explore"]
        proc = run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    result = turn_results(messages)[0]
    doc = load(out)
    harbor_validate(out)
    assert out.stat().st_mode & 0o777 == 0o600
    steps = doc["steps"]
    agent_steps = [s for s in steps if s["source"] == "agent"]
    assert len(agent_steps) == result["num_turns"] == doc["final_metrics"]["extra"]["model_calls"]
    assert doc["final_metrics"]["total_steps"] == len(steps) == 1 + 3
    final = doc["final_metrics"]
    assert final["total_prompt_tokens"] == result["usage"]["input_tokens"] == 350
    assert final["total_completion_tokens"] == result["usage"]["output_tokens"] == 24
    assert final["total_cached_tokens"] == result["usage"]["cache_read_input_tokens"] == 140
    # the tool calls and their results, with the wire's ids and the model-facing results
    wire_ids = [
        b["id"]
        for m in messages
        if m["type"] == "assistant" and m.get("parent_tool_use_id") is None
        for b in m["message"]["content"]
        if b["type"] == "tool_use"
    ]
    calls = [c["tool_call_id"] for s in agent_steps for c in s.get("tool_calls", [])]
    assert calls == wire_ids == ["call_agent", "call_shell", "call_glob"]
    results = {
        r["source_call_id"]: r
        for s in agent_steps
        for r in s.get("observation", {}).get("results", [])
    }
    assert set(results) == set(calls)
    assert "Output: hi" in results["call_shell"]["content"]
    assert results["call_agent"]["content"] == "child done"
    assert results["call_agent"]["subagent_trajectory_ref"][0]["trajectory_id"] == "call_agent"
    # the subagent: embedded, its steps and tokens
    (sub,) = doc["subagent_trajectories"]
    assert sub["trajectory_id"] == "call_agent"
    assert [s["source"] for s in sub["steps"]] == ["user", "agent", "agent"]
    assert sub["steps"][1]["observation"]["results"][0]["source_call_id"] == "call_sub_glob"
    assert sub["final_metrics"]["total_prompt_tokens"] == 110
    assert sub["final_metrics"]["total_completion_tokens"] == 11
    both = final["extra"]["with_subagents"]
    model_usage = result["modelUsage"]["fake-model"]
    assert both["total_prompt_tokens"] == model_usage["inputTokens"] == 460
    assert both["total_completion_tokens"] == model_usage["outputTokens"] == 35
    # sessions export --format atif renders the same document from the recording
    exported = run_cli(["sessions", "export", "--format", "atif", result["session_id"]], tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout) == doc


def scripted(tmp: Path, turns: list[dict[str, Any]], out: Path, *extra: str) -> list[str]:
    script = write_script(tmp / "s.jsonl", turns)
    return ["--script", str(script), "--yolo", "--trajectory-out", str(out), *extra]


def ending(doc: dict[str, Any], subtype: str) -> None:
    check_structure(doc)
    assert doc["extra"]["result"]["subtype"] == subtype
    assert doc["extra"]["result"]["is_error"] is True


def test_written_after_max_turns(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    turns = [{"text": "step one", "tool": "glob", "args": {"pattern": "*"}}, {"text": "never"}]
    args = scripted(tmp_path, turns, out, "--max-turns", "1", "-o", "json", "-p", "x")
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 53
    doc = load(out)
    ending(doc, "error_max_turns")
    assert doc["steps"][1]["message"] == "step one"
    harbor_validate(out)


def test_written_after_max_duration(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    turns = [{"text": "started", "tool": "run_shell_command", "args": {"command": "sleep 30"}}]
    args = scripted(tmp_path, turns, out, "--max-duration", "1", "-o", "json", "-p", "x")
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 53
    doc = load(out)
    ending(doc, "error_during_execution")
    assert "max-duration" in doc["extra"]["result"]["errors"][0]
    assert doc["steps"][1]["observation"]["results"][0]["extra"]["is_error"] is True


def test_written_after_max_budget(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    tool = {"tool": "glob", "args": {"pattern": "*"}}
    with FakeOpenAI([{"text": "looking", **tool}, tool, tool, {"text": "done"}]) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", "-o", "stream-json"]
        args += ["--settings", pricing("fake-model"), "--max-budget-usd", "0.0001"]
        args += ["--trajectory-out", str(out), "-p", "x"]
        proc = run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
    assert proc.returncode == 53
    doc = load(out)
    ending(doc, "error_max_budget_usd")
    result = turn_results(messages_of(proc.stdout))[0]
    assert doc["final_metrics"]["total_cost_usd"] == pytest.approx(result["total_cost_usd"])
    assert doc["final_metrics"]["total_prompt_tokens"] == result["usage"]["input_tokens"]


def test_written_after_sigterm(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    turns = [{"text": "working", "tool": "run_shell_command", "args": {"command": "sleep 30"}}]
    cli = start(scripted(tmp_path, turns, out, "-o", "stream-json", "-p", "x"), tmp_path)
    wait_until(lambda: any(m["type"] == "assistant" for m in cli.stdout_lines()), "the call")
    time.sleep(0.3)
    cli.proc.send_signal(signal.SIGTERM)
    assert cli.wait() == 143
    doc = load(out)
    ending(doc, "error_during_execution")
    assert doc["extra"]["result"]["errors"] == ["Operation cancelled."]
    assert doc["steps"][1]["tool_calls"][0]["function_name"] == "run_shell_command"


def test_a_compacted_run_loses_no_step(tmp_path: Path) -> None:
    """Issue 26: compaction changes what the model is sent, never the record. A long task that
    compacts several times gives a trajectory with every step of the run: one agent step per
    conversation model call (the result's ``num_turns``; summary calls are not steps), every
    tool call with its result, the original request first."""
    from tests.fakes.long_task import LongTask

    out = tmp_path / "trajectory.json"
    steps = 12
    prompt = "Run the long task: call the tool as asked until it is finished."
    with FakeOpenAI(window=8_000, long_task=LongTask(steps=steps, output_bytes=2_000)) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", "-o", "stream-json"]
        args += [
            "--settings",
            json.dumps({"model": {"generationConfig": {"contextWindowSize": 8000}}}),
        ]
        args += ["--trajectory-out", str(out), "-p", prompt]
        proc = run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    assert any(m.get("subtype") == "compact_boundary" for m in messages)  # it did compact
    result = turn_results(messages)[0]
    doc = load(out)
    check_structure(doc)
    agent_steps = [s for s in doc["steps"] if s["source"] == "agent"]
    assert len(agent_steps) == result["num_turns"] == steps + 1
    assert doc["steps"][0]["source"] == "user" and doc["steps"][0]["message"] == prompt
    wire_ids = [
        b["id"]
        for m in messages
        if m["type"] == "assistant"
        for b in m["message"]["content"]
        if b["type"] == "tool_use"
    ]
    calls = [c["tool_call_id"] for s in agent_steps for c in s.get("tool_calls", [])]
    results = [
        r["source_call_id"]
        for s in agent_steps
        for r in s.get("observation", {}).get("results", [])
    ]
    assert calls == wire_ids == results and len(calls) == steps
    harbor_validate(out)  # last: it skips where Harbor is not installed
