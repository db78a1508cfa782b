"""Deadline awareness: with ``--max-duration`` the model is told the limit in the system prompt,
and told once, at the end of a tool result, when less than 20% of it is left (the fake server's
request log shows both)."""

from __future__ import annotations

from pathlib import Path

from headwire.runtime.agent.limits import low_time_note
from tests.e2e.helpers import run_cli
from tests.fakes.fake_openai import FakeOpenAI


def tool_messages(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def test_the_model_is_told_the_time_it_has(tmp_path: Path) -> None:
    replies = [
        {"tool": "glob", "args": {"pattern": "*"}},
        {"tool": "run_shell_command", "args": {"command": "sleep 4.1"}},
        {"text": "done"},
    ]
    with FakeOpenAI(replies) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", "--max-duration", "5"]
        args += ["-o", "json", "-p", "x"]
        proc = run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
        bodies = fake.requests
    assert proc.returncode == 0, proc.stderr
    system = bodies[0]["messages"][0]
    assert system["role"] == "system" and "wall-clock limit of 5 seconds" in system["content"]
    assert not any("time limit are left" in t for t in tool_messages(bodies[1]))  # plenty left
    quick, slow = tool_messages(bodies[2])
    assert "time limit are left" not in quick
    assert slow.endswith("give your answer before the work is stopped.]")
    assert "of the 5 s time limit are left" in slow


def test_without_a_limit_nothing_is_said(tmp_path: Path) -> None:
    with FakeOpenAI([{"tool": "glob", "args": {"pattern": "*"}}, {"text": "done"}]) as fake:
        args = ["--auth-type", "openai", "-m", "fake-model", "--yolo", "-o", "json", "-p", "x"]
        run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
        bodies = fake.requests
    assert "Time limit" not in str(bodies[0]["messages"][0]["content"])
    assert not any("time limit" in t for t in tool_messages(bodies[1]))


def test_low_time_note_threshold() -> None:
    assert low_time_note(100, 20) is None
    note = low_time_note(100, 19.6)
    assert note is not None and "about 20 s of the 100 s" in note
    assert low_time_note(100, -3) is not None and "about 0 s" in str(low_time_note(100, -3))
