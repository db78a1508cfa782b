"""End to end: ``headwire.sdk`` driving the real CLI (and fake CLIs) as a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from headwire.projection import project_tool_result_content
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
    SystemMessage,
    ToolUseBlock,
    UserMessage,
    query,
)
from headwire.wire import encode
from tests.e2e.helpers import env_for, recordings, write_script
from tests.wire_tap import launcher

T = TypeVar("T")


def two_turns(proj: Path) -> list[dict[str, Any]]:
    """Turn 1: a shell call (allowed) and a write (denied); turn 2: a long call (interrupted);
    then one more turn to show the session goes on."""
    return [
        {"tool": "run_shell_command", "args": {"command": "touch allowed.txt"}},
        {"tool": "write_file", "args": {"file_path": str(proj / "denied.txt"), "content": "no"}},
        {"text": "turn one done"},
        {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
        {"text": "after the interrupt"},
    ]


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def options(tmp: Path, **kw: Any) -> Options:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    kw.setdefault("executable", str(launcher(tmp)))  # the wire is checked after the test
    return Options(cwd=proj, env=env_for(home), **kw)


def children() -> set[int]:
    """Live child processes of this process (Linux)."""
    out: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            with open(task / "children") as f:
                out |= {int(pid) for pid in f.read().split()}
        except FileNotFoundError:  # the thread ended while we looked
            continue
    return {pid for pid in out if _alive(pid)}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


async def _gone(pids: set[int], timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() for pid in pids):
            return True
        await asyncio.sleep(0.05)
    return False


def test_two_turns_with_permissions_and_an_interrupt(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", two_turns(tmp_path / "proj"))
    asked: list[tuple[str, dict[str, Any], PermissionContext]] = []
    sleeping = asyncio.Event()

    async def can_use_tool(name: str, args: dict[str, Any], ctx: PermissionContext) -> Allow | Deny:
        asked.append((name, args, ctx))
        if name == "write_file":
            return Deny("writes are not allowed here")
        if args["command"] == "sleep 30":
            sleeping.set()
        return Allow()

    async def main() -> tuple[list[Message], list[Message], list[Message], Session]:
        opts = options(tmp_path, model=f"scripted:{script}", can_use_tool=can_use_tool)
        async with Session(opts) as session:
            assert session.server_info["capabilities"]["can_handle_can_use_tool"] is True
            first = [m async for m in session.turn("first")]

            async def interrupt() -> None:
                await sleeping.wait()
                await session.interrupt()

            interrupter = asyncio.create_task(interrupt())
            started = time.monotonic()
            second = [m async for m in session.turn("second")]
            await interrupter
            assert time.monotonic() - started < 10
            assert (await session.set_model("renamed"))["model"] == "renamed"
            await session.set_permission_mode("yolo")
            third = [m async for m in session.turn("third")]
        return first, second, third, session

    first, second, third, session = run(main())
    assert session.returncode == 0
    assert [a[0] for a in asked] == ["run_shell_command", "write_file", "run_shell_command"]
    assert asked[0][2].tool_use_id == "call_scripted_1_1"
    assert isinstance(first[0], SystemMessage) and first[0].subtype == "init"
    tool_uses = [
        b
        for m in first
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock)
    ]
    assert [t.name for t in tool_uses] == ["run_shell_command", "write_file"]
    results = [r for m in first if isinstance(m, UserMessage) for r in m.tool_results]
    assert [r.is_error for r in results] == [False, True]
    assert results[1].content == "writes are not allowed here"
    end = first[-1]
    assert isinstance(end, ResultMessage) and end.result == "turn one done"
    assert [d.tool_name for d in end.permission_denials] == ["write_file"]
    assert (tmp_path / "proj" / "allowed.txt").exists()
    assert not (tmp_path / "proj" / "denied.txt").exists()
    cancelled = second[-1]
    assert isinstance(cancelled, ResultMessage) and cancelled.is_error
    assert cancelled.error == "Operation cancelled."
    init, last = third[0], third[-1]
    assert isinstance(init, SystemMessage) and init.model == "renamed"
    assert init.permission_mode == "yolo"
    assert isinstance(last, ResultMessage) and last.result == "after the interrupt"


def test_query_one_shot_and_the_bounded_big_output(tmp_path: Path) -> None:
    async def main() -> list[Message]:
        opts = options(tmp_path, model="scripted:demo", approval_mode="yolo")
        return [m async for m in query("Run the big output tool once, then say done.", opts)]

    before = children()
    messages = run(main())
    assert children() <= before  # the CLI was reaped
    assert [type(m).__name__ for m in messages] == [
        "SystemMessage",
        "StreamEvent",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    (block,) = [r for m in messages if isinstance(m, UserMessage) for r in m.tool_results]
    (recording,) = recordings(tmp_path / "home")
    records = [json.loads(line) for line in recording.read_text().splitlines()]
    (tool,) = [r for r in records if r["type"] == "tool_result"]
    assert isinstance(block.content, str)
    assert block.content == project_tool_result_content(tool["display"])
    assert len(encode(block.content)) == 65_536


FAKE_CLI = r"""
import json, sys
size = int(sys.argv[1])
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "control_request":
        sys.stdout.write(json.dumps({"type": "control_response", "response": {
            "subtype": "success", "request_id": msg["request_id"],
            "response": {"subtype": "initialize", "session_id": "fake"}}}) + "\n")
    elif msg["type"] == "user":
        sys.stdout.write("not json: skipped by the client\n")
        head = '{"type":"user","uuid":"u1","session_id":"fake","parent_tool_use_id":null,' \
               '"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",' \
               '"is_error":false,"content":"'
        sys.stdout.write(head)
        chunk = "z" * (1 << 20)
        for _ in range(size >> 20):
            sys.stdout.write(chunk)
        sys.stdout.write("z" * (size & ((1 << 20) - 1)) + '"}]},"future_field":1}\n')
        sys.stdout.write(json.dumps({"type": "result", "subtype": "success", "uuid": "r",
            "session_id": "fake", "is_error": False, "duration_ms": 1, "duration_api_ms": 0,
            "num_turns": 1, "result": "ok", "usage": {}, "permission_denials": []}) + "\n")
    sys.stdout.flush()
sys.stderr.write("fake cli: bye\n")
"""


def test_a_line_over_100_mb_parses(tmp_path: Path) -> None:
    fake = tmp_path / "fake_cli.py"
    fake.write_text(FAKE_CLI)
    size = 100 * 1024 * 1024 + 12_345

    async def main() -> tuple[list[Message], Session]:
        session = Session(Options(executable=[sys.executable, str(fake), str(size)], cwd=tmp_path))
        async with session:
            return [m async for m in session.turn("big")], session

    messages, session = run(main(), timeout=120)
    tool_result = messages[0]
    assert isinstance(tool_result, UserMessage)
    (block,) = tool_result.tool_results
    assert isinstance(block.content, str) and len(block.content) == size
    assert tool_result.raw["future_field"] == 1  # unknown fields are kept, not fatal
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "ok"
    assert session.skipped_lines == 1
    assert "fake cli: bye" in session.stderr
    assert session.returncode == 0


def test_a_failing_cli_reports_its_stderr(tmp_path: Path) -> None:
    async def main() -> None:
        async with Session(options(tmp_path, approval_mode="sometimes")):
            pass

    with pytest.raises(ProcessError) as info:
        run(main())
    assert info.value.exit_code == 2
    assert "invalid value" in str(info.value) and "sometimes" in info.value.stderr


def test_cancellation_reaps_the_cli(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"delay_s": 60, "text": "never"}])
    seen: list[Message] = []

    async def consume(session: Session) -> None:
        async for message in session.turn("slow"):
            seen.append(message)

    async def main() -> set[int]:
        before = children()
        session = Session(options(tmp_path, model=f"scripted:{script}"))

        async def body() -> None:
            async with session:
                await consume(session)

        task = asyncio.create_task(body())
        while len(seen) < 2:  # init and goal_state: the turn is running
            await asyncio.sleep(0.02)
        spawned = children() - before
        assert len(spawned) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _gone(spawned)
        return spawned

    started = time.monotonic()
    run(main())
    assert time.monotonic() - started < 15


def test_query_closed_early_reaps_the_cli(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"delay_s": 60, "text": "never"}])

    async def main() -> None:
        before = children()
        messages = query("slow", options(tmp_path, model=f"scripted:{script}"))
        first = await messages.__anext__()
        assert isinstance(first, SystemMessage)
        spawned = children() - before
        await messages.aclose()
        assert await _gone(spawned)

    run(main())


def test_options_cover_the_run_contract_flags(tmp_path: Path) -> None:
    from headwire.sdk.client import build_args
    from tests.fakes.fake_openai import FakeOpenAI

    schema = {"type": "object", "properties": {"risk": {"enum": ["low"]}}, "required": ["risk"]}
    each = {"inputPerMillionTokens": 1, "outputPerMillionTokens": 1}
    price = {"m": each, "m2": each}
    with FakeOpenAI([{"text": '{"risk": "low"}'}], require_api_key="sk-sdk-1234") as fake:
        opts = options(
            tmp_path,
            model="m",
            auth_type="openai",
            base_url=fake.base_url,
            api_key="sk-sdk-1234",
            json_schema=schema,
            max_budget_usd=5.0,
            max_duration_s=60.0,
            settings={"modelPricing": price},
            tool_timeout_s=30.0,
            fallback_models=["m2"],
        )

        async def main() -> list[Any]:
            return [m async for m in query("rate it", opts)]

        messages = run(main())
    result = messages[-1]
    assert result.is_error is False and result.structured_output == {"risk": "low"}
    argv = build_args(opts)
    assert "sk-sdk-1234" not in " ".join(argv)  # the key goes in the environment
    for flag in ("--json-schema", "--max-budget-usd", "--max-duration", "--openai-base-url"):
        assert flag in argv
