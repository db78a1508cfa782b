"""End to end: the published ``claude-agent-sdk`` (PyPI) driving headwire as its CLI.

``cli_path`` points at a shebang launcher (:func:`tests.wire_tap.launcher`: the wire both ways
is checked against the schema after each test); the SDK passes Claude Code's flags (``--verbose``,
``--system-prompt ""``, ``--permission-prompt-tool stdio`` ...), which headwire maps or notes
and ignores, and parses every message with its strict parser (``message.model`` on assistant
messages, the result's required keys).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import env_for, write_script
from tests.wire_tap import launcher

claude = pytest.importorskip("claude_agent_sdk")


def options(tmp: Path, **extra: Any) -> Any:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in env_for(home).items() if k in ("HOME", "HEADWIRE_HOME")}
    return claude.ClaudeAgentOptions(cli_path=launcher(tmp), cwd=proj, env=env, **extra)


def test_two_turns_with_permissions_and_an_interrupt(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "touch allowed.txt"}},
            {"tool": "write_file", "args": {"file_path": str(proj / "denied.txt"), "content": "x"}},
            {"thinking": "all done", "text": "turn one done"},
            {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
            {"text": "after the interrupt"},
        ],
    )
    asked: list[str] = []
    stderr: list[str] = []

    async def main() -> list[list[Any]]:
        sleeping = asyncio.Event()

        async def can_use_tool(name: str, args: dict[str, Any], ctx: Any) -> Any:
            asked.append(name)
            assert ctx.tool_use_id
            if name == "write_file":
                assert ctx.blocked_path is None  # inside the workspace
                return claude.PermissionResultDeny(message="writes are not allowed here")
            if args["command"] == "sleep 30":
                sleeping.set()
            return claude.PermissionResultAllow()

        opts = options(
            tmp_path, model=f"scripted:{script}", can_use_tool=can_use_tool, stderr=stderr.append
        )
        turns: list[list[Any]] = []
        async with claude.ClaudeSDKClient(opts) as client:
            await client.query("first")
            turns.append([m async for m in client.receive_response()])
            await client.query("second")

            async def interrupt() -> None:
                await sleeping.wait()
                await client.interrupt()

            interrupter = asyncio.create_task(interrupt())
            turns.append([m async for m in client.receive_response()])
            await interrupter
            status = await client.get_mcp_status()
            assert status["mcpServers"] == []
            await client.set_permission_mode("acceptEdits")
            await client.set_model("renamed")
            await client.query("third")
            turns.append([m async for m in client.receive_response()])
        return turns

    first, second, third = asyncio.run(asyncio.wait_for(main(), 60))
    assert asked == ["run_shell_command", "write_file", "run_shell_command"]
    assert isinstance(first[0], claude.SystemMessage) and first[0].subtype == "init"
    blocks = [b for m in first if isinstance(m, claude.AssistantMessage) for b in m.content]
    assert [type(b).__name__ for b in blocks] == [
        "ToolUseBlock",
        "ToolUseBlock",
        "ThinkingBlock",
        "TextBlock",
    ]
    assert all(
        m.model == f"scripted:{script}" for m in first if isinstance(m, claude.AssistantMessage)
    )
    results = [b for m in first if isinstance(m, claude.UserMessage) for b in m.content]
    assert [(r.is_error, r.content) for r in results][1] == (True, "writes are not allowed here")
    end = first[-1]
    assert isinstance(end, claude.ResultMessage) and end.result == "turn one done"
    assert [d["tool_name"] for d in end.permission_denials] == ["write_file"]
    cancelled = second[-1]
    assert isinstance(cancelled, claude.ResultMessage) and cancelled.is_error
    assert cancelled.subtype == "error_during_execution"
    last = third[-1]
    assert isinstance(last, claude.ResultMessage) and last.result == "after the interrupt"
    assert third[0].data["permission_mode"] == "auto-edit" and third[0].data["model"] == "renamed"
    assert (proj / "allowed.txt").exists() and not (proj / "denied.txt").exists()
    assert any("--permission-prompt-tool" in line for line in stderr)  # noted, ignored


def test_one_shot_query(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="claude_agent_sdk")

    async def main() -> list[Any]:
        return [
            m
            async for m in claude.query(
                prompt="hello",
                options=options(
                    tmp_path, model="scripted:done", permission_mode="default", max_turns=4
                ),
            )
        ]

    messages = asyncio.run(asyncio.wait_for(main(), 60))
    assert [type(m).__name__ for m in messages] == [
        "SystemMessage",
        "StreamEvent",
        "AssistantMessage",
        "ResultMessage",
    ]
    assert messages[-1].result == "done" and messages[-1].is_error is False
    assert messages[0].data["claude_code_version"] == messages[0].data["qwen_code_version"]
    assert [r.getMessage() for r in caplog.records] == []  # e.g. "too old to report its version"


SCHEMA = {
    "type": "object",
    "properties": {"risk": {"enum": ["low", "high"]}},
    "required": ["risk"],
}


def test_output_format_and_max_budget_usd(tmp_path: Path) -> None:
    """``output_format`` becomes ``--json-schema``: an invalid answer is corrected and the value
    arrives as ``ResultMessage.structured_output``; ``max_budget_usd`` stops a session with
    ``error_max_budget_usd`` after the call that crosses it, with the running cost."""
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"text": "low, I think"},
            {"text": '{"risk": "low"}'},
            {"tool": "glob", "args": {"pattern": "*"}},
            {"text": "never: the budget stops the turn before this call"},
        ],
    )
    model = f"scripted:{script}"
    # 11 input and 3 output tokens a call: $0.00005 at these prices
    price = {"inputPerMillionTokens": 2.0, "outputPerMillionTokens": 9.333333333}
    settings = json.dumps({"modelPricing": {model: price}})

    async def main() -> list[Any]:
        opts = options(
            tmp_path,
            model=model,
            settings=settings,
            output_format={"type": "json_schema", "schema": SCHEMA},
            max_budget_usd=0.00012,
        )
        results: list[Any] = []
        async with claude.ClaudeSDKClient(opts) as client:
            for prompt in ("rate it", "look again"):
                await client.query(prompt)
                results += [
                    m
                    async for m in client.receive_response()
                    if isinstance(m, claude.ResultMessage)
                ]
        return results

    first, second = asyncio.run(asyncio.wait_for(main(), 60))
    assert first.subtype == "success" and first.is_error is False
    assert first.structured_output == {"risk": "low"} and first.num_turns == 2
    assert first.total_cost_usd == pytest.approx(0.0001)
    assert first.model_usage[model]["inputTokens"] == 22
    assert second.subtype == "error_max_budget_usd" and second.is_error is True
    assert second.errors and "--max-budget-usd" in second.errors[0]
    assert second.total_cost_usd == pytest.approx(0.00015)
    assert second.structured_output is None


def test_a_pre_tool_use_callback_denies_a_shell_command(tmp_path: Path) -> None:
    """claude-agent-sdk's hooks (issue 24): the callback is registered in ``initialize``, run
    with ``hook_callback`` before the tool, and its deny keeps the command from running."""
    proj = tmp_path / "proj"
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "touch made.txt"}},
            {"text": "denied, done"},
        ],
    )
    seen: list[dict[str, Any]] = []

    async def guard(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        seen.append({**data, "tool_use_id_arg": tool_use_id})
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no shell from the SDK",
            }
        }

    async def main() -> list[Any]:
        hooks = {"PreToolUse": [claude.HookMatcher(matcher="Bash", hooks=[guard])]}
        opts = options(
            tmp_path, model=f"scripted:{script}", hooks=hooks, permission_mode="bypassPermissions"
        )
        async with claude.ClaudeSDKClient(opts) as client:
            await client.query("go")
            return [m async for m in client.receive_response()]

    messages = asyncio.run(asyncio.wait_for(main(), 60))
    assert not (proj / "made.txt").exists()
    (call,) = seen
    assert call["hook_event_name"] == "PreToolUse" and call["tool_name"] == "run_shell_command"
    assert call["tool_input"] == {"command": "touch made.txt"}
    assert call["tool_use_id_arg"] == call["tool_use_id"]
    results = [
        b
        for m in messages
        if isinstance(m, claude.UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, claude.ToolResultBlock)
    ]
    assert results and results[0].is_error and "no shell from the SDK" in str(results[0].content)
    assert isinstance(messages[-1], claude.ResultMessage) and messages[-1].result == "denied, done"


@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK warns that bypass skips the callback
def test_a_pre_tool_use_ask_goes_to_can_use_tool_even_in_bypass_mode(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool": "run_shell_command", "args": {"command": "touch asked.txt"}}, {"text": "done"}],
    )
    asked: list[str] = []

    async def ask(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}

    async def can_use_tool(name: str, args: dict[str, Any], ctx: Any) -> Any:
        asked.append(name)
        return claude.PermissionResultAllow()

    async def main() -> list[Any]:
        opts = options(
            tmp_path,
            model=f"scripted:{script}",
            hooks={"PreToolUse": [claude.HookMatcher(matcher=None, hooks=[ask])]},
            can_use_tool=can_use_tool,
            permission_mode="bypassPermissions",
        )
        async with claude.ClaudeSDKClient(opts) as client:
            await client.query("go")
            return [m async for m in client.receive_response()]

    messages = asyncio.run(asyncio.wait_for(main(), 60))
    assert asked == ["run_shell_command"]
    assert (proj / "asked.txt").exists()
    assert isinstance(messages[-1], claude.ResultMessage) and messages[-1].result == "done"
