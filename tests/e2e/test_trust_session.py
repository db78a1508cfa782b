"""Issue 12 in persistent sessions, through ``headwire.sdk`` and the real CLI: a permission
change reaches a running subagent, turns never slip, every shown ``tool_use`` is answered,
clients' answers and MCP schemas are checked where they enter.  Each test failed before."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from headwire.sdk import (
    Allow,
    AssistantMessage,
    Deny,
    Message,
    Options,
    PermissionContext,
    ProcessError,
    ResultMessage,
    Session,
    ToolUseBlock,
    UserMessage,
    query,
)
from tests.e2e.helpers import env_for, recordings, run_cli, write_script

T = TypeVar("T")
AGENT = {"tool": "agent", "args": {"description": "d", "prompt": "p"}}
SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def options(tmp: Path, **kw: Any) -> Options:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    return Options(cwd=proj, env=env_for(home), **kw)


def tool_uses(messages: list[Message]) -> list[ToolUseBlock]:
    return [
        b
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock)
    ]


def results(messages: list[Message]) -> dict[str, Any]:
    return {
        r.tool_use_id: r for m in messages if isinstance(m, UserMessage) for r in m.tool_results
    }


def test_set_permission_mode_reaches_a_running_subagent(tmp_path: Path) -> None:
    """Started in yolo; while the subagent's first command runs, the mode becomes plan: the
    subagent's next call (a write) is refused."""
    proj = tmp_path / "proj"
    target = proj / "late.txt"
    script = write_script(
        tmp_path / "s.jsonl",
        [
            AGENT,
            {"tool": "run_shell_command", "args": {"command": "sleep 1.5"}},
            {"tool": "write_file", "args": {"file_path": str(target), "content": "x"}},
            {"text": "child done"},
            {"text": "done"},
        ],
    )

    async def main() -> tuple[list[Message], dict[str, Any]]:
        opts = options(tmp_path, model=f"scripted:{script}", approval_mode="yolo")
        seen: list[Message] = []
        async with Session(opts) as session:
            await session.send("go")
            answer: dict[str, Any] = {}
            async for message in session.receive_turn():
                seen.append(message)
                inner = [u for u in tool_uses([message]) if u.name == "run_shell_command"]
                if inner and not answer:
                    answer = await session.set_permission_mode("plan")
        return seen, answer

    seen, answer = run(main())
    assert answer == {"status": "updated", "mode": "plan"}
    write = next(u for u in tool_uses(seen) if u.name == "write_file")
    assert results(seen)[write.id].is_error
    assert not target.exists()


def test_acp_set_mode_uses_the_same_live_policy() -> None:
    from headwire.runtime.agent.loop import AgentConfig
    from headwire.runtime.policy.live import Policy

    config = AgentConfig(session_id="s", cwd=Path("."), model_name="m", policy=Policy("yolo"))
    view = config.policy.narrowed(None)  # what a running subagent holds
    config.approval_mode = "plan"  # what set_permission_mode and session/set_mode do
    assert view.mode == "plan" and config.policy.mode == "plan"


def test_a_failed_subagent_does_not_end_the_turn(tmp_path: Path) -> None:
    """The interim error ``result`` is marked and the SDK's turns stay in step."""
    script = write_script(
        tmp_path / "s.jsonl",
        [AGENT, {"error": "model exploded"}, {"text": "answer one"}, {"text": "answer two"}],
    )

    async def main() -> tuple[list[Message], list[Message]]:
        async with Session(options(tmp_path, model=f"scripted:{script}")) as session:
            first = [m async for m in session.turn("one")]
            second = [m async for m in session.turn("two")]
        return first, second

    first, second = run(main())
    ends = [m for m in first if isinstance(m, ResultMessage)]
    assert [m.interim for m in ends] == [True, False]
    assert ends[0].error == "model exploded" and ends[0].parent_tool_use_id
    assert ends[1].result == "answer one"
    last = second[-1]
    assert isinstance(last, ResultMessage) and last.result == "answer two"


def test_upstream_shaped_interim_result_is_recognised(tmp_path: Path) -> None:
    """A CLI that does not mark the interim result (upstream) still gets whole turns."""
    lines = [
        {"type": "system", "subtype": "init", "session_id": "s", "uuid": "u"},
        {
            "type": "assistant",
            "uuid": "a",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {
                "role": "assistant",
                "model": "m",
                "content": [{"type": "tool_use", "id": "t1", "name": "agent", "input": {}}],
            },
        },
        {
            "type": "result",
            "subtype": "error_during_execution",
            "uuid": "r0",
            "session_id": "s",
            "is_error": True,
            "duration_ms": 0,
            "duration_api_ms": 0,
            "num_turns": 0,
            "usage": {"input_tokens": 0, "output_tokens": 0},
            "permission_denials": [],
            "error": {"message": "Task execution failed"},
        },
        {
            "type": "user",
            "uuid": "x",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "f"}
                ],
            },
        },
        {
            "type": "result",
            "subtype": "success",
            "uuid": "r1",
            "session_id": "s",
            "is_error": False,
            "duration_ms": 5,
            "duration_api_ms": 1,
            "num_turns": 2,
            "result": "final",
            "usage": {},
            "permission_denials": [],
        },
    ]
    fake = tmp_path / "fake_cli.py"
    fake.write_text(
        "import sys, json\n"
        f"LINES = {json.dumps([json.dumps(x) for x in lines])}\n"
        "for raw in sys.stdin:\n"
        "    msg = json.loads(raw)\n"
        "    if msg.get('type') == 'control_request':\n"
        "        print(json.dumps({'type': 'control_response', 'response': {'subtype': "
        "'success', 'request_id': msg['request_id'], 'response': {}}}), flush=True)\n"
        "    elif msg.get('type') == 'user':\n"
        "        print('\\n'.join(LINES), flush=True)\n"
    )

    async def main() -> list[Message]:
        return [m async for m in query("go", options(tmp_path, executable=str(fake)))]

    messages = run(main())
    ends = [m for m in messages if isinstance(m, ResultMessage)]
    assert [(m.interim, m.result) for m in ends] == [(True, None), (False, "final")]


def test_interrupt_during_a_subagent_answers_every_tool_use(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tools": [
                    {"name": "agent", "args": {"description": "d", "prompt": "p"}},
                    {"name": "run_shell_command", "args": {"command": "echo never"}},
                ]
            },
            {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
            {"text": "unreached"},
            {"text": "after"},
        ],
    )

    async def main() -> list[Message]:
        opts = options(tmp_path, model=f"scripted:{script}", approval_mode="yolo")
        seen: list[Message] = []
        async with Session(opts) as session:
            await session.send("go")
            interrupted = False
            async for message in session.receive_turn():
                seen.append(message)
                if not interrupted and any(
                    u.input.get("command") == "sleep 30" for u in tool_uses([message])
                ):
                    interrupted = True
                    await session.interrupt()
        return seen

    started = time.monotonic()
    seen = run(main())
    assert time.monotonic() - started < 20
    shown = {u.id for u in tool_uses(seen)}
    answered = results(seen)
    assert len(shown) == 3 and shown <= set(answered), (shown, answered)
    assert all(answered[i].is_error for i in shown)
    last = seen[-1]
    assert isinstance(last, ResultMessage) and last.error == "Operation cancelled."


def test_sdk_returns_when_the_cli_exits_but_a_child_holds_stdout(tmp_path: Path) -> None:
    """The CLI fails at startup (exit 2) while a grandchild it left holds stdout open: the
    turn ends with ProcessError at once, not when the grandchild exits."""
    pidfile = tmp_path / "sleeper.pid"
    wrapper = tmp_path / "cli.sh"
    wrapper.write_text(
        f'#!/bin/sh\nsleep 60 & echo $! > {pidfile}\nexec {sys.executable} -m headwire "$@"\n'
    )
    wrapper.chmod(0o755)

    async def main() -> str:
        opts = options(
            tmp_path,
            executable=str(wrapper),
            model="scripted:demo",
            extra_args=["--resume", "no-such-session"],
        )
        try:
            [m async for m in query("hi", opts)]
        except ProcessError as exc:
            return str(exc)
        return "no error"

    started = time.monotonic()
    try:
        error = run(main(), timeout=50)
    finally:
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert time.monotonic() - started < 20
    assert "code 2" in error and "no-such-session" in error


def test_updated_input_is_validated_and_recorded_as_run(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "touch asked"}},
            {"tool": "run_shell_command", "args": {"command": "touch asked-too"}},
            {"tool": "run_shell_command", "args": {"command": "touch third"}},
            {"text": "done"},
        ],
    )
    answers = iter(
        [
            Allow(updated_input={"command": 5}),
            Allow(updated_input={"command": "touch replaced"}),
            Allow(updated_input={"command": "touch x", "timeout": "soon"}),
        ]
    )

    async def can_use_tool(name: str, args: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        return next(answers)

    async def main() -> list[Message]:
        opts = options(tmp_path, model=f"scripted:{script}", can_use_tool=can_use_tool)
        return [m async for m in query("go", opts)]

    seen = run(main())
    blocks = list(results(seen).values())
    assert [b.is_error for b in blocks] == [True, False, True]
    assert "updatedInput" in str(blocks[0].content) and "is not of type" in str(blocks[0].content)
    proj = tmp_path / "proj"
    assert (proj / "replaced").exists() and not (proj / "asked-too").exists()
    assert not (proj / "asked").exists() and not (proj / "x").exists()
    (path,) = recordings(tmp_path / "home")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    ran = [r["args"] for r in records if r["type"] == "tool_result"]
    assert ran[1] == {"command": "touch replaced"}


def test_malformed_permission_answer_denies_and_the_turn_goes_on(tmp_path: Path) -> None:
    """``"interrupt": "false"`` or a non-object ``updatedInput`` are refused, not obeyed."""
    proj = tmp_path / "proj"
    proj.mkdir(parents=True)
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool": "run_shell_command", "args": {"command": "touch nope"}}, {"text": "done"}],
    )
    init = {
        "type": "control_request",
        "request_id": "i",
        "request": {"subtype": "initialize"},
    }
    user = {"type": "user", "message": {"role": "user", "content": "go"}}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "headwire",
            "--script",
            str(script),
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ],
        cwd=proj,
        env=env_for(tmp_path / "home"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(init) + "\n" + json.dumps(user) + "\n").encode())
    proc.stdin.flush()
    out: list[dict[str, Any]] = []
    for raw in proc.stdout:
        msg = json.loads(raw)
        out.append(msg)
        if msg.get("type") == "control_request":
            bad = {"behavior": "allow", "updatedInput": "rm -rf /", "interrupt": "false"}
            reply = {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": msg["request_id"],
                    "response": bad,
                },
            }
            proc.stdin.write((json.dumps(reply) + "\n").encode())
            proc.stdin.flush()
        if msg.get("type") == "result":
            break
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    (block,) = [
        b
        for m in out
        if m["type"] == "user"
        for b in m["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert block["is_error"] and "malformed" in block["content"]
    assert out[-1]["type"] == "result" and out[-1]["result"] == "done"
    assert not (proj / "nope").exists()
    assert b"can_use_tool answer for run_shell_command refused" in stderr


def test_dual_output_string_false_is_a_denial(tmp_path: Path) -> None:
    out, commands = tmp_path / "events.jsonl", tmp_path / "commands.jsonl"
    commands.write_text("")
    (tmp_path / "home").mkdir()
    proj = tmp_path / "proj"
    proj.mkdir()
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "write_file", "args": {"file_path": str(proj / "w.txt"), "content": "x"}},
            {"text": "done"},
        ],
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "headwire",
            "--script",
            str(script),
            "-p",
            "go",
            "--json-file",
            str(out),
            "--input-file",
            str(commands),
        ],
        cwd=proj,
        env=env_for(tmp_path / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    request_id = None
    deadline = time.monotonic() + 30
    while request_id is None and time.monotonic() < deadline:
        time.sleep(0.1)
        for line in out.read_text().splitlines() if out.exists() else []:
            event = json.loads(line)
            if event["type"] == "control_request":
                request_id = event["request_id"]
    assert request_id is not None
    answer = {"type": "confirmation_response", "request_id": request_id, "allowed": "false"}
    commands.write_text(json.dumps(answer) + "\n")
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert not (proj / "w.txt").exists()


def test_mcp_schema_that_is_not_json_schema_is_refused_at_entry(tmp_path: Path) -> None:
    """``"minimum": "5"``: the tool is skipped with a note; the turn ends with a result and the
    recording with an answered call."""
    schemas = {
        "bad": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "5"}}},
        "good": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}},
    }
    config = {
        "mcpServers": {
            "s": {"command": sys.executable, "args": [str(SERVER), "schema"], "trust": True}
        }
    }
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tools": [
                    {"name": "mcp__s__bad", "args": {"n": 3}},
                    {"name": "mcp__s__good", "args": {"n": 3}},
                    {"name": "mcp__s__good", "args": {"n": 7}},
                ]
            },
            {"text": "done"},
        ],
    )
    proc = run_cli(
        ["--script", str(script), "-o", "json", "--mcp-config", json.dumps(config), "-p", "go"],
        tmp_path,
        FAKE_MCP_SCHEMAS=json.dumps(schemas),
    )
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(proc.stdout)
    assert "mcp__s__bad" not in messages[0]["tools"] and "mcp__s__good" in messages[0]["tools"]
    blocks = [b for m in messages if m["type"] == "user" for b in m["message"]["content"]]
    assert [b["is_error"] for b in blocks] == [True, True, False]
    assert "must be >= 5" in blocks[1]["content"] or "less than the minimum" in blocks[1]["content"]
    assert messages[-1]["result"] == "done"
    assert "inputSchema is not usable" in proc.stderr and "Traceback" not in proc.stderr
