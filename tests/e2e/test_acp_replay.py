"""``session/load`` equals live, end to end, with the Python and the TypeScript ACP clients.

One session, four prompts, against ``headwire --acp`` (scripted model) as a subprocess:

1. a thought, a message and a shell call printing 499,999 bytes (allowed);
2. an ``agent`` call whose subagent runs two tools (``glob``, ``read_file``);
3. a ``write_file`` the client rejects (a refused call; the turn ends after it);
4. ``sleep 30``, cancelled by the client once it runs.

Then ``session/load`` of that session in a second process.  The replayed updates must equal
the live ones (each live prompt preceded by its ``user_message_chunk``; the
``available_commands_update`` each open sends left aside): the raw frames byte for byte, and
the updates as each SDK parsed them.  Ids are the scripted model's and nothing carries a
timestamp, so nothing needs setting aside.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from headwire.wire import encode
from tests.e2e.helpers import BIG_COMMAND, ROOT, env_for, write_script

BUDGET = 65_536
JS = ROOT / "tests" / "js"
PROMPTS = ["run the big command", "delegate", "write r.txt", "sleep"]
AGENT_ARGS = {
    "description": "look around",
    "prompt": "List the project and read the notes.",
    "subagent_type": "general-purpose",
}


def scenario(tmp: Path) -> Path:
    """The project (``notes.txt``) and the script of the four prompts."""
    proj = tmp / "proj"
    proj.mkdir(parents=True, exist_ok=True)
    (tmp / "home").mkdir(exist_ok=True)
    (proj / "notes.txt").write_text("remember the milk\n")
    return write_script(
        tmp / "script.jsonl",
        [
            {
                "thinking": "planning",
                "text": "running it",
                "tool": "run_shell_command",
                "args": {"command": BIG_COMMAND},
            },
            {"text": "done"},
            {"tool": "agent", "args": AGENT_ARGS},
            {
                "thinking": "inner thought",
                "tools": [
                    {"name": "glob", "args": {"pattern": "*.txt"}},
                    {"name": "read_file", "args": {"file_path": str(proj / "notes.txt")}},
                ],
            },
            {"text": "child done"},
            {"text": "delegated"},
            {"tool": "write_file", "args": {"file_path": str(proj / "r.txt"), "content": "x"}},
            {"tool": "run_shell_command", "args": {"command": "sleep 30"}},
        ],
    )


def expected_replay(turns: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """What ``session/load`` must send: per live prompt its text, then its updates."""
    out: list[dict[str, Any]] = []
    for prompt, updates in turns:
        out.append(
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": prompt}}
        )
        out += updates
    return history(out)


def history(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Updates without the command list each open announces."""
    return [u for u in updates if u.get("sessionUpdate") != "available_commands_update"]


def check_session(updates: list[dict[str, Any]]) -> None:
    """What the session must show, live and replayed alike."""
    calls: dict[str, list[dict[str, Any]]] = {}
    for u in updates:
        if "toolCallId" in u:
            calls.setdefault(u["toolCallId"], []).append(u)
    status = {c: [u["status"] for u in us] for c, us in calls.items()}
    by_name: dict[str, str] = {}  # the first call of each tool
    for c, us in calls.items():
        by_name.setdefault(us[0]["_meta"]["toolName"], c)
    big, agent = by_name["run_shell_command"], by_name["agent"]
    assert status[big] == ["pending", "in_progress", "completed"]
    done = calls[big][-1]
    assert len(encode(done["content"])) <= BUDGET and len(encode(done["rawOutput"])) <= BUDGET
    assert done["rawOutput"].startswith("xxxx")
    # the subagent's two calls, linked to the agent call, completed before it
    inner = [c for c, us in calls.items() if us[0]["_meta"].get("parentToolCallId") == agent]
    assert [calls[c][0]["_meta"]["toolName"] for c in inner] == ["glob", "read_file"]
    for c in inner:
        assert status[c] == ["pending", "in_progress", "completed"]
        assert calls[c][0]["_meta"] == {
            "toolName": calls[c][0]["_meta"]["toolName"],
            "provenance": "subagent",
            "parentToolCallId": agent,
            "subagentType": "general-purpose",
        }
    assert "remember the milk" in calls[inner[1]][-1]["content"][0]["content"]["text"]
    assert status[agent] == ["pending", "in_progress", "completed"]
    thoughts = [u for u in updates if u["sessionUpdate"] == "agent_thought_chunk"]
    assert thoughts[1]["_meta"] == {"parentToolCallId": agent, "subagentType": "general-purpose"}
    # the refused write: no in_progress; the cancelled sleep: closed as failed
    assert status[by_name["write_file"]] == ["pending", "failed"]
    sleep = [c for c, us in calls.items() if us[0].get("rawInput") == {"command": "sleep 30"}]
    assert status[sleep[0]] == ["pending", "in_progress", "failed"]
    assert calls[sleep[0]][-1]["content"][0]["content"]["text"] == "Operation cancelled."


# -- the Python client ------------------------------------------------------------------------

acp = pytest.importorskip("acp")
schema = pytest.importorskip("acp.schema")


class Client:
    """Allows shell calls, rejects writes, cancels ``sleep 30`` once it runs."""

    def __init__(self) -> None:
        self.raw: list[dict[str, Any]] = []
        self.parsed: list[Any] = []
        self.conn: Any = None
        self.session_id = ""

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        option = "cancel" if "file_path" in (tool_call.raw_input or {}) else "proceed_once"
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(option_id=option, outcome="selected")
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.parsed.append(update)
        raw = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        if raw.get("status") == "in_progress" and raw.get("rawInput") == {"command": "sleep 30"}:
            await self.conn.cancel(session_id=self.session_id)

    def observe(self, event: Any) -> None:
        message = event.message
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


def _dump(update: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


async def _live(tmp: Path, script: Path) -> tuple[str, list[Any], list[Any], list[str]]:
    client = Client()
    async with _spawn(client, script, tmp) as (conn, _proc):
        client.conn = conn
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp / "proj"), mcp_servers=[])).session_id
        client.session_id = sid
        raw_turns, parsed_turns, stops = [], [], []
        for prompt in PROMPTS:
            start = len(client.raw)
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block(prompt)])
            stops.append(answer.stop_reason)
            raw_turns.append((prompt, client.raw[start:]))
            parsed_turns.append((prompt, client.parsed[start:]))
        assert len(client.raw) == len(client.parsed)  # the SDK took every frame
    return sid, raw_turns, parsed_turns, stops


async def _load(tmp: Path, script: Path, sid: str) -> tuple[list[Any], list[Any]]:
    client = Client()
    async with _spawn(client, script, tmp) as (conn, _proc):
        client.conn = conn
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp / "proj"), session_id=sid, mcp_servers=[])
        return list(client.raw), list(client.parsed)


def test_replay_equals_live_python_client(tmp_path: Path) -> None:
    script = scenario(tmp_path)
    sid, raw_turns, parsed_turns, stops = asyncio.run(_live(tmp_path, script))
    assert stops == ["end_turn", "end_turn", "end_turn", "cancelled"]
    raw_replay, parsed_replay = asyncio.run(_load(tmp_path, script, sid))
    expected = expected_replay(raw_turns)
    check_session(expected)
    assert history(raw_replay) == expected
    # the same, as the SDK parsed each update
    prompts = [(p, [_dump(u) for u in us]) for p, us in parsed_turns]
    parsed = [_dump(u) for u in parsed_replay]
    assert history(parsed) == expected_replay(prompts)


# -- the TypeScript client --------------------------------------------------------------------


def _ts_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (JS / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json").is_file():
        return (
            "@agentclientprotocol/sdk is not installed (npm ci --omit=optional --prefix tests/js)"
        )
    return None


def test_replay_equals_live_typescript_client(tmp_path: Path) -> None:
    reason = _ts_missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the TypeScript client: {reason}")
        pytest.skip(reason)
    script = scenario(tmp_path)
    env = {k: v for k, v in env_for(tmp_path / "home").items() if k != "PATH"}
    config = {
        "command": [sys.executable, "-m", "headwire", "--acp", "--script", str(script)],
        "cwd": str(tmp_path / "proj"),
        "env": env,
        "prompts": PROMPTS,
    }
    done = subprocess.run(
        [str(shutil.which("node")), str(JS / "acp_replay.mjs"), json.dumps(config)],
        cwd=JS,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert "thrown" not in summary, summary["thrown"] + summary.get("stderr", "")
    turns = summary["live"]["turns"]
    assert [t["stopReason"] for t in turns] == ["end_turn", "end_turn", "end_turn", "cancelled"]
    expected = expected_replay([(t["prompt"], t["updates"]) for t in turns])
    check_session(expected)
    assert history(summary["replay"]) == expected
