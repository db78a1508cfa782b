"""End to end: the published ``qwen-code-sdk`` (PyPI) driving headwire as its Qwen Code CLI.

``path_to_qwen_executable`` points at a launcher ``.py`` (the SDK runs it with its own
interpreter).  The SDK reads stdout with ``readline()`` under asyncio's 64 KiB limit, so these
sessions keep every line small; the 499,999-byte session is covered with headwire's own SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import env_for, write_script
from tests.wire_tap import launcher

qwen_code_sdk = pytest.importorskip("qwen_code_sdk")


def base_options(tmp: Path, **extra: Any) -> dict[str, Any]:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in env_for(home).items() if k in ("HOME", "HEADWIRE_HOME")}
    return {
        "path_to_qwen_executable": str(launcher(tmp, "headwire_launcher.py")),
        "cwd": str(proj),
        "env": env,
        **extra,
    }


def user(text: str) -> dict[str, Any]:
    return {
        "type": "user",
        "session_id": "",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
    }


def test_two_turns_with_permissions_and_an_interrupt(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "touch allowed.txt"}},
            {"tool": "write_file", "args": {"file_path": str(proj / "denied.txt"), "content": "x"}},
            {"text": "turn one done"},
            {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
            {"text": "after the interrupt"},
        ],
    )
    asked: list[tuple[str, dict[str, Any]]] = []
    stderr: list[str] = []

    async def main() -> list[dict[str, Any]]:
        results = asyncio.Queue[dict[str, Any]]()
        sleeping = asyncio.Event()

        async def can_use_tool(name: str, args: dict[str, Any], ctx: Any) -> dict[str, Any]:
            asked.append((name, args))
            assert {s["type"] for s in ctx["suggestions"]} == {"allow", "deny"}
            if name == "write_file":
                return {"behavior": "deny", "message": "writes are not allowed here"}
            if args["command"] == "sleep 30":
                sleeping.set()
            return {"behavior": "allow", "updatedInput": args}

        async def prompts() -> AsyncIterator[dict[str, Any]]:
            yield user("first")
            await results.get()
            yield user("second")
            await sleeping.wait()
            await q.interrupt()
            await results.get()
            await q.set_model("renamed")
            await q.set_permission_mode("yolo")
            assert (await q.supported_commands() or {})["subtype"] == "supported_commands"
            assert (await q.mcp_server_status() or {})["subtype"] == "mcp_server_status"
            yield user("third")
            await results.get()

        opts = base_options(
            tmp_path, model=f"scripted:{script}", can_use_tool=can_use_tool, stderr=stderr.append
        )
        q = qwen_code_sdk.query(prompts(), opts)
        messages = []
        async for message in q:
            messages.append(message)
            if message["type"] == "result":
                results.put_nowait(message)
        return messages

    messages = asyncio.run(asyncio.wait_for(main(), 60))
    assert [name for name, _ in asked] == ["run_shell_command", "write_file", "run_shell_command"]
    results = [m for m in messages if m["type"] == "result"]
    assert [r["is_error"] for r in results] == [False, True, False]
    assert results[0]["result"] == "turn one done"
    assert [d["tool_name"] for d in results[0]["permission_denials"]] == ["write_file"]
    assert results[1]["error"]["message"] == "Operation cancelled."
    assert results[2]["result"] == "after the interrupt"
    tool_results = [b for m in messages if m["type"] == "user" for b in m["message"]["content"]]
    assert tool_results[1] == {
        "type": "tool_result",
        "tool_use_id": "call_scripted_2_1",
        "is_error": True,
        "content": "writes are not allowed here",
    }
    inits = [m for m in messages if m["type"] == "system"]
    assert inits[-1]["model"] == "renamed" and inits[-1]["permission_mode"] == "yolo"
    assert (proj / "allowed.txt").exists() and not (proj / "denied.txt").exists()
    assert not any("Traceback" in line for line in stderr)


def test_one_shot_query_exits_cleanly(tmp_path: Path) -> None:
    async def main() -> list[dict[str, Any]]:
        opts = base_options(tmp_path, model="scripted:done")
        return [m async for m in qwen_code_sdk.query("hello", opts)]

    messages = asyncio.run(asyncio.wait_for(main(), 60))  # no ProcessExitError: exit code 0
    assert [m["type"] for m in messages] == ["system", "stream_event", "assistant", "result"]
    assert messages[-1]["result"] == "done"
    assert messages[0]["session_id"] == messages[-1]["session_id"]
