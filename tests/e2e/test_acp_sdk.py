"""``headwire --acp`` driven by the ``agent-client-protocol`` SDK's client, as a subprocess.

One session: a prompt whose shell tool prints 499,999 bytes (the client answers the permission
request), a prompt cancelled while ``sleep 30`` runs, then, in a second process, ``session/load``
of that session and one more prompt.  Live and replayed ``tool_call_update`` frames are checked
against :func:`project_acp_tool_call_update` of the unprojected update rebuilt from the
(lossless) recording, and against the upstream captures' shapes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from headwire.acp.updates import tool_call_result
from headwire.projection import project_acp_tool_call_update
from headwire.runtime.tools.registry import builtin_tools
from headwire.wire import encode
from tests.e2e.helpers import BIG_COMMAND, BIG_OUTPUT, env_for, recordings, write_script
from tests.shapes import shape, upstream_shapes
from tests.wire_schema import check_message

acp = pytest.importorskip("acp")
schema = pytest.importorskip("acp.schema")

BUDGET = 65_536
SHELL = {t.name: t for t in builtin_tools()}["run_shell_command"]


class Client:
    """Collects updates and raw frames; allows every permission request once."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.raw: list[dict[str, Any]] = []
        self.permissions: list[Any] = []

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        self.permissions.append((options, tool_call))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(option_id="proceed_once", outcome="selected")
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    def observe(self, event: Any) -> None:
        """Every frame both ways: checked against the wire schema, updates collected."""
        message = event.message
        incoming = event.direction.value == "incoming"
        check_message("acp", "output" if incoming else "input", message, "acp frame")
        if event.direction.value == "incoming" and message.get("method") == "session/update":
            self.raw.append(message["params"]["update"])

    def on_connect(self, conn: Any) -> None:
        return None


def _spawn(client: Client, script: Path, tmp: Path) -> Any:
    return acp.spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "headwire",
        "--acp",
        "--script",
        str(script),
        env=env_for(tmp / "home"),
        cwd=str(tmp / "proj"),
        observers=[client.observe],
    )


async def _until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the agent")
        await asyncio.sleep(0.02)


def _processes() -> dict[int, tuple[int, str, str]]:
    """pid -> (ppid, comm, state) from /proc."""
    out: dict[int, tuple[int, str, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        end = stat.rfind(")")
        fields = stat[end + 2 :].split()
        out[int(entry)] = (int(fields[1]), stat[stat.find("(") + 1 : end], fields[0])
    return out


def _descendants(root: int, comm: str) -> list[int]:
    procs = _processes()
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, name, _state) in procs.items():
            if ppid == parent:
                frontier.append(pid)
                if name == comm:
                    found.append(pid)
    return found


def _alive(pid: int) -> bool:
    state = _processes().get(pid)
    return state is not None and state[2] not in ("Z", "X")


def _completed(raw: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    [update] = [
        u
        for u in raw
        if u.get("sessionUpdate") == "tool_call_update"
        and u.get("toolCallId") == call_id
        and u.get("status") in ("completed", "failed")
    ]
    return update


def _expected(home: Path, call_id: str) -> dict[str, Any]:
    """The projected update rebuilt from the recording's unprojected tool result."""
    [path] = recordings(home)
    for line in path.read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("type") == "tool_result" and record.get("call_id") == call_id:
            failed = bool(record["is_error"])
            text = record["error"] if failed else record["message"]["content"]
            unprojected = tool_call_result(
                call_id, record["name"], SHELL, failed=failed, text=text, display=record["display"]
            )
            assert record["display"].startswith(BIG_OUTPUT.decode().rstrip("\n"))  # lossless
            return project_acp_tool_call_update(unprojected)
    raise AssertionError(f"no recorded result for {call_id}")


def _keys(node: list[Any]) -> list[str]:
    return [k for k, _ in node]


def _upstream_update_shapes(label: str) -> list[list[Any]]:
    updates = []
    for message in upstream_shapes()[label]:
        params = dict((k, v) for k, v in message if k == "params")
        if params:
            update = dict(params["params"]).get("update")
            if isinstance(update, list):
                updates.append(update)
    return updates


def _check_shapes(live: list[dict[str, Any]], call_id: str) -> None:
    """Key order and kinds of our tool frames against upstream's shell and MCP captures."""
    upstream = _upstream_update_shapes("shell-acp")
    titled = [u for u in upstream if "title" in _keys(u)]
    start_up = next(u for u in titled if "phase" in _keys(dict(u)["_meta"]))  # the tool_call
    progress_up = next(u for u in titled if "phase" not in _keys(dict(u)["_meta"]))
    done_up = next(u for u in upstream if "rawOutput" in _keys(u))
    mcp_done = next(u for u in _upstream_update_shapes("mcp-acp") if "rawOutput" in _keys(u))
    mine = [u for u in live if u.get("toolCallId") == call_id]
    start, progress, done = mine[0], mine[1], mine[-1]
    assert (start["sessionUpdate"], start["status"]) == ("tool_call", "pending")
    assert list(start) == _keys(start_up)
    assert list(start["_meta"]) == [k for k in _keys(dict(start_up)["_meta"]) if k != "phase"]
    assert (progress["sessionUpdate"], progress["status"]) == ("tool_call_update", "in_progress")
    assert list(progress) == _keys(progress_up)
    assert list(progress["_meta"]) == _keys(dict(progress_up)["_meta"])
    assert done["status"] == "completed"
    assert list(done) == _keys(done_up) == _keys(mcp_done)
    assert shape(done["content"]) == dict(mcp_done)["content"]
    assert shape(done["rawOutput"]) == dict(mcp_done)["rawOutput"] == "str"


def _check_bounded(update: dict[str, Any]) -> None:
    assert len(encode(update["content"])) <= BUDGET
    assert isinstance(update["rawOutput"], str) and len(encode(update["rawOutput"])) <= BUDGET


async def _first_process(tmp: Path, script: Path) -> tuple[str, str, dict[str, Any]]:
    client = Client()
    async with _spawn(client, script, tmp) as (conn, proc):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.protocol_version == 1
        caps = init.agent_capabilities
        assert caps.load_session is True
        assert (caps.prompt_capabilities.image, caps.prompt_capabilities.embedded_context) == (
            False,
            True,
        )
        assert (caps.mcp_capabilities.http, caps.mcp_capabilities.sse) == (True, False)
        assert init.agent_info.name == "headwire" and init.auth_methods == []

        new = await conn.new_session(cwd=str(tmp / "proj"), mcp_servers=[])
        sid = new.session_id
        assert new.modes.current_mode_id == "default"
        assert [m.id for m in new.modes.available_modes] == ["plan", "default", "auto-edit", "yolo"]

        # 1. the big output, after the client allows the call
        answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("run the big command")])
        assert answer.stop_reason == "end_turn"
        [(options, tool_call)] = client.permissions
        assert [o.kind for o in options] == ["allow_always", "allow_once", "reject_once"]
        big_id = tool_call.tool_call_id
        assert tool_call.raw_input == {"command": BIG_COMMAND}
        done = _completed(client.raw, big_id)
        _check_bounded(done)
        assert done == _expected(tmp / "home", big_id)
        _check_shapes(client.raw, big_id)
        kinds = [u.session_update for u in client.updates]
        assert kinds.count("available_commands_update") == 1
        assert any(
            u.session_update == "agent_message_chunk" and u.content.text == "done"
            for u in client.updates
        )

        # 2. cancelled while the tool runs: the prompt answers "cancelled", the sleep is gone
        seen = len(client.raw)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[acp.text_block("sleep")]))
        await _until(lambda: any(u.get("status") == "in_progress" for u in client.raw[seen:]))
        await _until(lambda: bool(_descendants(proc.pid, "sleep")), timeout=5)
        [sleep_pid] = _descendants(proc.pid, "sleep")
        await conn.cancel(session_id=sid)
        answer = await asyncio.wait_for(prompt, 15)
        assert answer.stop_reason == "cancelled"
        await _until(lambda: not _alive(sleep_pid), timeout=5)
        sleep_id = next(
            u["toolCallId"] for u in client.raw[seen:] if u.get("sessionUpdate") == "tool_call"
        )
        failed = _completed(client.raw, sleep_id)
        assert failed["status"] == "failed"
        return sid, sleep_id, done


async def _second_process(
    tmp: Path, script: Path, sid: str, sleep_id: str, live_done: dict[str, Any]
) -> None:
    client = Client()
    async with _spawn(client, script, tmp) as (conn, _proc):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        loaded = await conn.load_session(cwd=str(tmp / "proj"), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "default"
        await _until(
            lambda: any(
                u.get("toolCallId") == sleep_id and u.get("status") == "failed" for u in client.raw
            )
        )
        users = [
            u["content"]["text"] for u in client.raw if u["sessionUpdate"] == "user_message_chunk"
        ]
        assert users == ["run the big command", "sleep"]
        replayed = _completed(client.raw, live_done["toolCallId"])
        _check_bounded(replayed)
        assert replayed == live_done  # replay projects exactly like the live wire
        cancelled = _completed(client.raw, sleep_id)
        assert cancelled["content"][0]["content"]["text"] == "Operation cancelled."

        # the loaded session goes on where it stopped
        answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("and now?")])
        assert answer.stop_reason == "end_turn"
        assert any(
            u.session_update == "agent_message_chunk" and u.content.text == "after load"
            for u in client.updates
        )


def test_acp_session_with_the_sdk_client(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "proj").mkdir()
    script = write_script(
        tmp_path / "script.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}},
            {"text": "done"},
            {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
            {"text": "after load"},
        ],
    )
    sid, sleep_id, done = asyncio.run(_first_process(tmp_path, script))
    asyncio.run(_second_process(tmp_path, script, sid, sleep_id, done))
