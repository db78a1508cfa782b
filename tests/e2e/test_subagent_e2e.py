"""Subagents end to end: events tagged with the agent call id, results bounded at the boundary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from headwire.wire import encode
from tests.e2e.helpers import BIG_COMMAND, run_cli, write_script

AGENT_CALL = {
    "tool": "agent",
    "args": {
        "description": "print big output",
        "prompt": "Run the big output tool.",
        "subagent_type": "general-purpose",
    },
}
BIG = {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}


def script(tmp: Path, *turns: dict[str, Any]) -> str:
    return str(write_script(tmp / "script.jsonl", list(turns)))


def check_subagent_wire(messages: list[dict[str, Any]]) -> None:
    agent_use = messages[[m.get("type") for m in messages].index("assistant")]
    call_id = agent_use["message"]["content"][0]["id"]
    assert agent_use["message"]["content"][0]["name"] == "agent"
    tagged = [m for m in messages if m.get("parent_tool_use_id") == call_id]
    kinds = [
        (m["type"], m["message"]["content"][0]["type"])
        for m in tagged
        if m["type"] in ("user", "assistant")
    ]
    assert kinds == [
        ("user", "text"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "text"),
    ]
    inner = [m for m in tagged if m["type"] == "user"][1]["message"]["content"][0]
    assert len(encode(inner["content"])) == 65_536
    subtypes = [m.get("subtype") for m in messages if m["type"] == "system"]
    assert "task_started" in subtypes and "task_notification" in subtypes
    outer = [m for m in messages if m["type"] == "user" and m["parent_tool_use_id"] is None]
    assert outer[-1]["message"]["content"][0]["tool_use_id"] == call_id
    assert outer[-1]["message"]["content"][0]["content"] == "child done"
    assert messages[-1]["type"] == "result" and messages[-1]["result"] == "done"


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_subagent_tool_result_is_tagged_and_bounded(tmp_path: Path, fmt: str) -> None:
    path = script(tmp_path, AGENT_CALL, BIG, {"text": "child done"}, {"text": "done"})
    proc = run_cli(["--script", path, "--yolo", "-o", fmt, "-p", "delegate"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(proc.stdout) if fmt == "json" else proc.lines()
    check_subagent_wire(messages)


def test_subagent_in_persistent_session(tmp_path: Path) -> None:
    path = script(tmp_path, AGENT_CALL, BIG, {"text": "child done"}, {"text": "done"})
    line = {
        "type": "user",
        "session_id": "s",
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": "delegate"},
    }
    proc = run_cli(
        [
            "--script",
            path,
            "--yolo",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ],
        tmp_path,
        stdin=(json.dumps(line) + "\n").encode(),
    )
    assert proc.returncode == 0, proc.stderr
    check_subagent_wire(proc.lines())


def test_subagent_failure_emits_error_result_and_parent_continues(tmp_path: Path) -> None:
    path = script(tmp_path, AGENT_CALL, {"error": "model exploded"}, {"text": "done"})
    proc = run_cli(["--script", path, "--yolo", "-o", "json", "-p", "delegate"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(proc.stdout)
    errors = [m for m in messages if m["type"] == "result" and m["is_error"]]
    agent_call = messages[[m["type"] for m in messages].index("assistant")]["message"]["content"][0]
    # upstream sends this interim result without parent_tool_use_id; headwire marks it
    assert len(errors) == 1 and errors[0]["parent_tool_use_id"] == agent_call["id"]
    assert errors[0]["error"]["message"] == "model exploded"
    assert messages[-1]["result"] == "done"


def test_user_defined_agent_and_depth_limit(tmp_path: Path) -> None:
    agents = tmp_path / "proj" / ".headwire" / "agents"
    agents.mkdir(parents=True)
    (agents / "lister.md").write_text(
        "---\nname: lister\ndescription: lists\ntools: [glob]\n---\nYou list files.\n"
    )
    call = {"tool": "agent", "args": {"description": "d", "prompt": "p", "subagent_type": "lister"}}
    nested = {"tool": "agent", "args": {"description": "d", "prompt": "p"}}
    path = script(tmp_path, call, nested, {"text": "child done"}, {"text": "done"})
    proc = run_cli(
        ["--script", path, "--yolo", "--trust-project", "-o", "json", "-p", "x"], tmp_path
    )
    messages = json.loads(proc.stdout)
    assert "lister" in messages[0]["agents"]
    inner = [
        m
        for m in messages
        if m["type"] == "user"
        and m["parent_tool_use_id"]
        and m["message"]["content"][0]["type"] == "tool_result"
    ]
    assert inner[0]["message"]["content"][0]["is_error"] is True
    assert "not found" in inner[0]["message"]["content"][0]["content"]
