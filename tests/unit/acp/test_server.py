"""The ACP server in process: the update path (projection, A2UI exemption), replay, bad input."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from headwire import events as ev
from headwire.acp.replay import INTERRUPTED_TEXT, Replayer, stream_records
from headwire.acp.server import AcpServer
from headwire.acp.session import AcpSession, SessionUpdates, prompt_text
from headwire.acp.updates import tool_meta, tool_title
from headwire.boundary import acp_result_update
from headwire.cli.build import open_acp_runtime
from headwire.io.writer import WireWriter
from headwire.projection import ACP_TRUNCATION_MARKER, project_acp_tool_call_update
from headwire.protocol import jsonrpc as rpc
from headwire.runtime.agent.loop import Agent
from headwire.runtime.store.recording import Recorder
from headwire.runtime.tools.base import ApprovalMode, Tool, ToolContext, ToolOutcome
from headwire.runtime.tools.registry import builtin_tools
from headwire.wire import encode

BUDGET = 65_536


class FakeTool:
    """A tool that returns a fixed display (only its identity matters here)."""

    description = "test tool"
    parameters: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def __init__(self, name: str, server_id: str | None = None, kind: str = "other") -> None:
        self.name = name
        self.display_name = name
        self.kind = kind
        if server_id is not None:
            self.server_id = server_id

    def validate(self, args: dict[str, Any]) -> str | None:
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        return False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome(llm_text="")


def _server() -> tuple[AcpServer, io.BytesIO]:
    out = io.BytesIO()

    def no_build(*_: Any) -> Any:
        raise AssertionError("not used")

    return AcpServer(argparse.Namespace(), no_build, WireWriter(out)), out


def _session(server: AcpServer, cwd: Path) -> AcpSession:
    agent = SimpleNamespace(
        tools={},
        cancelled=asyncio.Event(),
        config=SimpleNamespace(approval_mode="default", allowed_tools=()),
    )
    session = AcpSession("sid", cwd, cast(Agent, agent), close=_noop_close)
    server.sessions["sid"] = session
    return session


async def _noop_close() -> None:
    return None


def _frames(out: io.BytesIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _result_update(
    tool: FakeTool, display: str, text: str, tmp_path: Path
) -> tuple[dict[str, Any], bytes]:
    server, out = _server()
    session = _session(server, tmp_path)
    updates = SessionUpdates(server, session, {tool.name: cast(Tool, tool)})
    updates(ev.ToolCallPending(call_id="call_1", name=tool.name, args={}))
    response = ev.ToolResponse(
        call_id="call_1", name=tool.name, args={}, output=text, display=display
    )
    updates(ev.ToolFinished(response=response, model_text=text))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    return json.loads(lines[1])["params"]["update"], lines[1]


@pytest.mark.parametrize(
    ("name", "server_id"),
    [("present_ui", None), ("mcp__ui__present_choices", None), ("render", "dq-A2UI")],
)
def test_a2ui_results_arrive_whole(tmp_path: Path, name: str, server_id: str | None) -> None:
    display = '[{"version":"v0.9","createSurface":{"surfaceId":"s"}}]\n' + "u" * 200_000
    update, line = _result_update(FakeTool(name, server_id), display, display, tmp_path)
    assert update["rawOutput"] == display
    assert update["content"][0]["content"]["text"] == display
    assert ACP_TRUNCATION_MARKER.encode() not in line
    assert len(line) > 400_000


def test_other_results_are_projected_exactly(tmp_path: Path) -> None:
    tool = FakeTool("mcp__bigout__big_output", "bigout")
    display = "x" * 499_999
    update, _ = _result_update(tool, display, display, tmp_path)
    meta = tool_meta(tool.name, cast(Tool, tool))
    unprojected = acp_result_update(
        "call_1", failed=False, text=display, display=display, meta=meta
    )
    assert update == project_acp_tool_call_update(unprojected)
    assert len(encode(update["content"])) <= BUDGET and len(encode(update["rawOutput"])) <= BUDGET
    assert list(update) == [
        "sessionUpdate",
        "toolCallId",
        "status",
        "content",
        "_meta",
        "rawOutput",
    ]
    assert update["_meta"] == {
        "toolName": "mcp__bigout__big_output",
        "provenance": "mcp",
        "serverId": "bigout",
    }


def test_meta_and_titles(tmp_path: Path) -> None:
    tools = {t.name: t for t in builtin_tools()}
    shell = tools["run_shell_command"]
    assert tool_meta("run_shell_command", shell) == {
        "toolName": "run_shell_command",
        "provenance": "builtin",
    }
    assert tool_meta("mcp__srv__t", None)["serverId"] == "srv"
    assert (
        tool_title("run_shell_command", shell, {"command": "ls", "description": "list"})
        == "Shell: ls (list)"
    )
    assert tool_title("nope", None, {}) == "nope"


def test_prompt_text() -> None:
    assert prompt_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert (
        prompt_text([{"type": "resource_link", "uri": "file:///x/y.py", "name": "y"}]) == "@/x/y.py"
    )
    text = prompt_text([{"type": "resource", "resource": {"uri": "file:///z", "text": "body"}}])
    assert text == "Content of file:///z:\nbody"
    for bad in (
        "x",
        [1],
        [{"type": "image", "data": "", "mimeType": "image/png"}],
        [{"type": "text"}],
    ):
        with pytest.raises(rpc.RpcError) as info:
            prompt_text(bad)
        assert info.value.code == rpc.INVALID_PARAMS


def _record_session(tmp_path: Path, *, ended: bool = True) -> Path:
    """A recording as headwire wrote it before ``chunks``/``tool_pending`` existed."""
    rec = Recorder(tmp_path / "home", tmp_path, "s1")
    rec.record("user", message={"role": "user", "content": "hello"})
    rec.record(
        "assistant",
        message={
            "role": "assistant",
            "content": "let me look",
            "reasoning_content": "thinking",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "run_shell_command", "arguments": '{"command":"ls"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "run_shell_command", "arguments": '{"command":"x"}'},
                },
                {
                    "id": "c3",
                    "type": "function",
                    "function": {"name": "present_ui", "arguments": "{}"},
                },
            ],
        },
    )
    rec.record(
        "tool_result",
        message={"role": "tool", "tool_call_id": "c1", "content": "model text"},
        call_id="c1",
        name="run_shell_command",
        args={"command": "ls"},
        is_error=False,
        error=None,
        display="y" * 300_000,
        artifact=None,
    )
    rec.record(
        "tool_result",
        message={"role": "tool", "tool_call_id": "c2", "content": "Operation cancelled."},
        call_id="c2",
        is_error=True,
        error="Operation cancelled.",
    )
    if ended:
        rec.record("result", is_error=False, result="", error=None, num_turns=1)
    rec.close()
    with rec.path.open("ab") as f:
        f.write(b'{"type":"assistant","mess')  # a torn last line
    return rec.path


@pytest.mark.parametrize("ended", [True, False])
def test_replay_reads_older_recordings(tmp_path: Path, ended: bool) -> None:
    path = _record_session(tmp_path, ended=ended)
    tools = {t.name: t for t in builtin_tools()}
    replayer = Replayer(tools, tmp_path)
    updates = [u for record in stream_records(path) for u in replayer.updates(record)]
    updates += list(replayer.finish())
    kinds = [(u["sessionUpdate"], u.get("status")) for u in updates]
    assert kinds == [
        ("user_message_chunk", None),
        ("agent_thought_chunk", None),
        ("agent_message_chunk", None),
        ("tool_call", "pending"),
        ("tool_call", "pending"),
        ("tool_call", "pending"),
        ("tool_call_update", "completed"),
        ("tool_call_update", "failed"),
        ("tool_call_update", "failed"),
    ]
    assert updates[0]["content"]["text"] == "hello"
    start = updates[3]
    assert start["title"] == "Shell: ls" and start["kind"] == "execute"
    assert start["rawInput"] == {"command": "ls"}
    done = updates[6]
    assert done["content"][0]["content"]["text"] == "model text"
    assert done["rawOutput"].startswith("y") and len(encode(done["rawOutput"])) <= BUDGET
    assert done == project_acp_tool_call_update(  # replayed through the live boundary
        acp_result_update(
            "c1", failed=False, text="model text", display="y" * 300_000, meta=done["_meta"]
        )
    )
    assert updates[7]["_meta"]["toolName"] == "run_shell_command"  # name from the announcing call
    assert updates[7]["content"][0]["content"]["text"] == "Operation cancelled."
    # c3 never got a result: the turn's end closed it live ("Operation cancelled."); a
    # recording cut off by a crash closes it at the end of the replay
    closed = "Operation cancelled." if ended else INTERRUPTED_TEXT
    assert updates[8]["toolCallId"] == "c3"
    assert updates[8]["content"][0]["content"]["text"] == closed


async def _drive(server: AcpServer, lines: list[bytes]) -> None:
    for line in lines:
        server.handle_line(line)
        await asyncio.sleep(0)
    while server._tasks:
        await asyncio.wait(set(server._tasks))


def test_bad_requests_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEADWIRE_HOME", str(tmp_path / "home"))
    server, out = _server()
    _session(server, tmp_path)
    lines = [
        b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}',
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}',
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
        b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}',
        b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":{}}}',
        b'{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}',
        b'{"jsonrpc":"2.0","id":5,"method":"session/set_mode","params":{"sessionId":"sid","modeId":"fast"}}',
        b'{"jsonrpc":"2.0","id":6,"method":"session/set_mode","params":{"sessionId":"sid","modeId":"yolo"}}',
        b'{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":[]}',
        b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}',
        b'{"jsonrpc":"2.0","id":99,"result":{}}',
        b'{"jsonrpc":"2.0","id":8,"method":"session/load","params":{"sessionId":"gone","cwd":"/","mcpServers":[]}}',
    ]
    asyncio.run(_drive(server, lines))
    frames = _frames(out)
    assert frames[0]["id"] == 2 and frames[0]["error"]["code"] == -32002  # before initialize
    by_id = {f["id"]: f for f in frames[1:]}
    assert sorted(by_id) == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert by_id[0]["result"]["protocolVersion"] == 1
    for msg_id in (1, 2, 3, 4, 5, 7, 8):
        assert by_id[msg_id]["error"]["code"] == rpc.INVALID_PARAMS, by_id[msg_id]
    assert by_id[6] == {"jsonrpc": "2.0", "id": 6, "result": {}}
    assert server.sessions["sid"].agent.config.approval_mode == "yolo"


class _Harness:
    """A real server and agent (scripted model) in process; the test plays the client."""

    def __init__(self, tmp_path: Path, turns: list[dict[str, Any]]) -> None:
        from headwire.cli.flags.agent import build_parser

        script = tmp_path / "script.jsonl"
        script.write_text("".join(json.dumps(t) + "\n" for t in turns))
        self.proj = tmp_path / "proj"
        self.proj.mkdir()
        self.out = io.BytesIO()
        args = build_parser().parse_args(["--script", str(script)])
        self.server = AcpServer(args, open_acp_runtime, WireWriter(self.out))
        self.next_id = 100
        self.initialized = False
        self.answered: set[Any] = set()

    def frames(self) -> list[dict[str, Any]]:
        return _frames(self.out)

    async def call(
        self, method: str, params: dict[str, Any], on_request: Any = None
    ) -> dict[str, Any]:
        if not self.initialized:
            self.initialized = True
            await self.call("initialize", {"protocolVersion": 1})
        self.next_id += 1
        msg_id = self.next_id
        self.server.handle_line(
            encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        )
        answered = self.answered
        for _ in range(2000):
            await asyncio.sleep(0.005)
            for frame in self.frames():
                if frame.get("id") == msg_id and "method" not in frame:
                    return frame
                if "method" in frame and "id" in frame and frame["id"] not in answered:
                    answered.add(frame["id"])
                    result = on_request(frame)
                    self.server.handle_line(
                        encode({"jsonrpc": "2.0", "id": frame["id"], "result": result})
                    )
        raise AssertionError(f"no answer to {method}")


@pytest.mark.parametrize(
    "outcome",
    [{"outcome": "selected", "optionId": "cancel"}, {"outcome": "cancelled"}],
)
def test_rejected_permission_ends_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: dict[str, Any]
) -> None:
    monkeypatch.setenv("HEADWIRE_HOME", str(tmp_path / "home"))
    h = _Harness(
        tmp_path,
        [
            {"tool": "run_shell_command", "args": {"command": "touch made-it"}},
            {"text": "should not be said"},
        ],
    )

    async def scenario() -> None:
        new = await h.call("session/new", {"cwd": str(h.proj), "mcpServers": []})
        sid = new["result"]["sessionId"]
        asked: list[dict[str, Any]] = []

        def answer(request: dict[str, Any]) -> dict[str, Any]:
            asked.append(request)
            return {"outcome": outcome}

        done = await h.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}, answer
        )
        assert done["result"] == {"stopReason": "end_turn"}
        [request] = asked
        assert request["method"] == "session/request_permission"
        assert request["params"]["toolCall"]["_meta"] == {"toolName": "run_shell_command"}
        updates = [f["params"]["update"] for f in h.frames() if f.get("method") == "session/update"]
        [failed] = [u for u in updates if u.get("status") == "failed"]
        assert (
            failed["content"][0]["content"]["text"]
            == 'Tool "run_shell_command" was canceled by the user.'
        )
        assert not any(u["sessionUpdate"] == "agent_message_chunk" for u in updates)
        assert not (h.proj / "made-it").exists()

    asyncio.run(scenario())


def test_allow_always_adds_a_session_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEADWIRE_HOME", str(tmp_path / "home"))
    h = _Harness(
        tmp_path,
        [
            {"tool": "run_shell_command", "args": {"command": "touch one"}},
            {"tool": "run_shell_command", "args": {"command": "touch two"}},
            {"text": "ok"},
        ],
    )

    async def scenario() -> None:
        new = await h.call("session/new", {"cwd": str(h.proj), "mcpServers": []})
        sid = new["result"]["sessionId"]
        asked: list[dict[str, Any]] = []

        def answer(request: dict[str, Any]) -> dict[str, Any]:
            asked.append(request)
            return {"outcome": {"outcome": "selected", "optionId": "proceed_always"}}

        done = await h.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}, answer
        )
        assert done["result"] == {"stopReason": "end_turn"}
        assert len(asked) == 1  # the second "touch" ran under the new rule
        assert (h.proj / "one").exists() and (h.proj / "two").exists()
        assert h.server.sessions[sid].agent.config.allowed_tools == ("run_shell_command(touch)",)

    asyncio.run(scenario())


def test_cancel_while_asking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEADWIRE_HOME", str(tmp_path / "home"))
    h = _Harness(
        tmp_path,
        [
            {"tool": "run_shell_command", "args": {"command": "touch never"}},
            {"text": "should not be said"},
        ],
    )

    async def scenario() -> None:
        new = await h.call("session/new", {"cwd": str(h.proj), "mcpServers": []})
        sid = new["result"]["sessionId"]

        def answer(request: dict[str, Any]) -> dict[str, Any]:
            # the client cancels the turn, then answers the open request "cancelled" (ACP rule)
            h.server.handle_line(
                encode({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
            )
            return {"outcome": {"outcome": "cancelled"}}

        done = await h.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}, answer
        )
        assert done["result"] == {"stopReason": "cancelled"}
        updates = [f["params"]["update"] for f in h.frames() if f.get("method") == "session/update"]
        [closed] = [u for u in updates if u.get("status") == "failed"]
        assert closed["content"][0]["content"]["text"] == "Operation cancelled."
        assert not (h.proj / "never").exists()
        # the session takes the next prompt
        h.server.sessions[sid].agent.config.approval_mode = "yolo"
        again = await h.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}
        )
        assert again["result"] == {"stopReason": "end_turn"}

    asyncio.run(scenario())
