"""End to end: the published TypeScript clients (npm) driving headwire.

``tests/js`` pins ``@anthropic-ai/claude-agent-sdk``, ``@qwen-code/sdk`` and
``@agentclientprotocol/sdk`` (``package-lock.json``; ``.ci/run`` installs them with
``npm ci``).  Each ``tests/js/*.mjs`` script runs one client against headwire started through a
tapped launcher (:mod:`tests.wire_tap`: every line both ways is checked against the wire schema
after the test) and prints a JSON summary, checked here.

Without node or the installed packages these tests skip, saying why; under CI (``CI`` set) a
missing install fails them instead, so CI always runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from headwire.projection.acp import ACP_TRUNCATION_MARKER as ACP_MARKER
from headwire.wire import encode
from tests.e2e.helpers import BIG_COMMAND, ROOT, env_for, write_script
from tests.wire_tap import launcher

JS = ROOT / "tests" / "js"
INSTALL = "npm ci --omit=optional --prefix tests/js"


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    for package in ("@anthropic-ai/claude-agent-sdk", "@qwen-code/sdk", "@agentclientprotocol/sdk"):
        if not (JS / "node_modules" / package / "package.json").is_file():
            return f"{package} is not installed in tests/js (run `{INSTALL}`)"
    return None


@pytest.fixture(scope="module")
def node() -> str:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the TypeScript clients: {reason}")
        pytest.skip(reason)
    return str(shutil.which("node"))


def drive(node: str, driver: str, tmp: Path, timeout: float = 90, **config: Any) -> dict[str, Any]:
    """Run ``tests/js/DRIVER`` with ``config`` (plus launcher, cwd, env); its JSON summary."""
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in env_for(home).items() if k in ("HOME", "HEADWIRE_HOME")}
    config = {"launcher": str(launcher(tmp)), "cwd": str(proj), "env": env, **config}
    done = subprocess.run(
        [node, str(JS / driver), json.dumps(config)],
        cwd=JS,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    stdout = done.stdout.decode()
    assert done.returncode == 0, f"{driver} exited {done.returncode}: {done.stderr.decode()}"
    summary: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    assert "thrown" not in summary, summary["thrown"]
    return summary


def two_turn_script(tmp: Path) -> Path:
    """Turn 1: a shell call (allowed) and a write (denied); turn 2: ``sleep 30`` (interrupted);
    turn 3: plain text."""
    proj = tmp / "proj"
    return write_script(
        tmp / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "touch allowed.txt"}},
            {"tool": "write_file", "args": {"file_path": str(proj / "denied.txt"), "content": "x"}},
            {"text": "turn one done"},
            {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
            {"text": "after the interrupt"},
        ],
    )


def test_claude_agent_sdk_session_denial_interrupt_and_max_turns(node: str, tmp_path: Path) -> None:
    """Regression (issue 11 item 8): before error results carried ``errors``, the TypeScript
    SDK threw ``Cannot read properties of undefined (reading 'map')`` at the interrupted
    turn's result and at the max-turns result, ending the caller's stream."""
    script = two_turn_script(tmp_path)
    over = write_script(
        tmp_path / "over.jsonl",
        [{"tool": "glob", "args": {"pattern": "*"}}, {"text": "never"}],
    )
    out = drive(
        node,
        "claude.mjs",
        tmp_path,
        model=f"scripted:{script}",
        maxTurnsModel=f"scripted:{over}",
    )
    session = out["session"]
    assert session["asked"] == ["run_shell_command", "write_file", "run_shell_command"]
    first, second, third = session["turns"]
    assert first[0] == {"type": "system", "subtype": "init"}
    results = [r for m in first if m["type"] == "user" for r in m["results"]]
    assert results[1] == {"is_error": True, "content": "writes are not allowed here"}
    assert first[-1]["result"] == "turn one done" and first[-1]["denials"] == ["write_file"]
    assert session["interrupted"]
    assert second[-1]["subtype"] == "error_during_execution" and second[-1]["is_error"]
    assert second[-1]["errors"] == ["Operation cancelled."]
    assert third[-1]["result"] == "after the interrupt"
    assert (tmp_path / "proj" / "allowed.txt").exists()
    assert not (tmp_path / "proj" / "denied.txt").exists()
    last = out["maxTurns"][-1]
    assert last["subtype"] == "error_max_turns" and last["is_error"]
    assert len(last["errors"]) == 1 and "max session turns" in last["errors"][0]


def test_qwen_code_sdk_session_denial_interrupt_and_max_turns(node: str, tmp_path: Path) -> None:
    script = two_turn_script(tmp_path)
    over = write_script(
        tmp_path / "over.jsonl",
        [{"tool": "glob", "args": {"pattern": "*"}}, {"text": "never"}],
    )
    out = drive(
        node, "qwen.mjs", tmp_path, model=f"scripted:{script}", maxTurnsModel=f"scripted:{over}"
    )
    session = out["session"]
    assert session["asked"] == ["run_shell_command", "write_file", "run_shell_command"]
    first, second, third = session["turns"]
    results = [r for m in first if m["type"] == "user" for r in m["results"]]
    assert results[1] == {"is_error": True, "content": "writes are not allowed here"}
    assert first[-1]["result"] == "turn one done" and first[-1]["denials"] == ["write_file"]
    assert second[-1]["subtype"] == "error_during_execution"
    assert second[-1]["errors"] == ["Operation cancelled."]
    assert third[-1]["result"] == "after the interrupt"
    last = out["maxTurns"][-1]
    assert last["subtype"] == "error_max_turns" and last["is_error"]


def test_agentclientprotocol_sdk_bounded_updates_rejection_and_cancel(
    node: str, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}},
            {"text": "done"},
            # the rejection ends the turn after the write: no model call follows it (the loop's
            # suspension point before every model call sees the stop first)
            {"tool": "write_file", "args": {"file_path": str(proj / "r.txt"), "content": "x"}},
            {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
            {"text": "never"},
        ],
    )
    out = drive(node, "acp.mjs", tmp_path, script=str(script))
    assert out["protocolVersion"] == 1 and out["exit"] == 0, out["stderr"]
    assert out["stops"] == ["end_turn", "end_turn", "cancelled"]
    assert out["permissions"] == ["run_shell_command", "write_file", "run_shell_command"]
    finals = [
        u
        for u in out["updates"]
        if u["sessionUpdate"] == "tool_call_update" and u["status"] in ("completed", "failed")
    ]
    big, rejected, cancelled = finals
    assert big["status"] == "completed"
    assert len(encode(big["rawOutput"])) == 65_536
    assert ACP_MARKER in big["rawOutput"] and big["rawOutput"].startswith("x" * 1000)
    assert len(encode(big["content"])) <= 65_536
    assert rejected["status"] == "failed" and cancelled["status"] == "failed"
    assert not (proj / "r.txt").exists()


def test_claude_agent_sdk_output_format_and_max_budget_usd(node: str, tmp_path: Path) -> None:
    """``outputFormat`` reaches headwire as ``--json-schema``: the corrected value arrives as
    ``structured_output``; an answer that never validates ends with
    ``error_max_structured_output_retries``; ``maxBudgetUsd`` ends a run with
    ``error_max_budget_usd`` and its cost (the SDK yields every one of them)."""
    schema = {"type": "object", "properties": {"risk": {"enum": ["low", "high"]}}}
    schema["required"] = ["risk"]
    corrected = write_script(tmp_path / "c.jsonl", [{"text": "low"}, {"text": '{"risk":"low"}'}])
    never = write_script(tmp_path / "n.jsonl", [{"text": "[]"}] * 3)
    tool = {"tool": "glob", "args": {"pattern": "*"}}
    budget = write_script(tmp_path / "b.jsonl", [tool, tool, tool, {"text": "never"}])
    price = {"inputPerMillionTokens": 2.0, "outputPerMillionTokens": 9.333333333}
    settings = tmp_path / "home" / ".headwire" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"modelPricing": {f"scripted:{budget}": price}}))
    out = drive(
        node,
        "claude_contract.mjs",
        tmp_path,
        schema=schema,
        correctedModel=f"scripted:{corrected}",
        neverModel=f"scripted:{never}",
        budgetModel=f"scripted:{budget}",
    )
    (ok,) = out["corrected"]
    assert ok["subtype"] == "success" and ok["structured_output"] == {"risk": "low"}
    assert ok["num_turns"] == 2 and ok["total_cost_usd"] is None  # unpriced, never 0
    (failed,) = out["never"]
    assert failed["subtype"] == "error_max_structured_output_retries" and failed["is_error"]
    assert "after 3 attempts" in failed["errors"][0] and failed["structured_output"] is None
    (stopped,) = out["budget"]
    assert stopped["subtype"] == "error_max_budget_usd" and stopped["is_error"]
    assert stopped["num_turns"] == 3 and stopped["total_cost_usd"] == pytest.approx(0.00015)


def test_claude_agent_sdk_pre_tool_use_callback_denies_a_shell_command(
    node: str, tmp_path: Path
) -> None:
    """Issue 24: the TypeScript SDK's hook callback runs before the tool, and its deny holds."""
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool": "run_shell_command", "args": {"command": "touch made.txt"}}, {"text": "done"}],
    )
    out = drive(node, "claude_hooks.mjs", tmp_path, model=f"scripted:{script}")
    assert not (tmp_path / "proj" / "made.txt").exists()
    (seen,) = out["seen"]
    assert seen["event"] == "PreToolUse" and seen["tool"] == "run_shell_command"
    assert seen["command"] == "touch made.txt" and seen["toolUseId"]
    (result,) = out["results"]
    assert result["is_error"] and "no shell from TypeScript" in json.dumps(result["content"])
    assert out["result"] == "done"
