"""``web_fetch``, ``notebook_edit`` and ``todo_write`` end to end: the fake OpenAI server asks
for them, headwire runs them, and their results cross the one tool-result boundary, bounded,
in stream-JSON and in ACP (raw JSON-RPC over stdio)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from headwire.wire import encode
from tests.e2e.helpers import env_for, run_cli
from tests.e2e.test_headless_modes import tool_results
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.web_server import WebServer

MAX_ACP_LINE = 140_000
BIG_SOURCE = "print('n')\n" * 30_000  # 330 KB: the model text and the wire must bound it
NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": 1,
            "id": "c1",
            "metadata": {},
            "outputs": [],
            "source": "x = 1",
        }
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def setup(tmp_path: Path, allow_private: bool = True) -> tuple[Path, Path]:
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".headwire").mkdir(parents=True)
    proj.mkdir()
    settings = {"tools": {"todoWrite": {"enabled": True}}}
    if allow_private:
        settings["tools"]["webFetch"] = {"allowPrivateNetwork": True}  # type: ignore[index]
    (home / ".headwire" / "settings.json").write_text(json.dumps(settings))
    (proj / "n.ipynb").write_text(json.dumps(NOTEBOOK))
    return home, proj


SIDE_ANSWER = "The page is a short doc titled Docs with one link."


def script(web: WebServer, proj: Path) -> list[dict[str, Any]]:
    todos = [{"id": "1", "content": "t" * 200_000, "status": "in_progress"}]
    return [
        {"tool": "web_fetch", "args": {"url": web.url("/page"), "prompt": "summarize"}},
        {"text": SIDE_ANSWER},  # web_fetch's side call answers its prompt about the page
        {"tool": "read_file", "args": {"file_path": str(proj / "n.ipynb")}},  # read before edit
        {
            "tool": "notebook_edit",
            "args": {
                "notebook_path": str(proj / "n.ipynb"),
                "cell_id": "c1",
                "new_source": BIG_SOURCE,
            },
        },
        {"tool": "todo_write", "args": {"todos": todos}},
        {"text": "done"},
    ]


def test_new_tools_in_stream_json(tmp_path: Path) -> None:
    _home, proj = setup(tmp_path)
    with WebServer() as web, FakeOpenAI(script(web, proj)) as fake:
        proc = run_cli(
            ["--auth-type", "openai", "-m", "m", "--yolo", "-o", "stream-json", "-p", "go"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
        )
        model_view = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
        assert web.requests == ["/page"]
        side = fake.requests[1]
    assert proc.returncode == 0, proc.stderr
    blocks = tool_results(proc.lines())
    assert [b["is_error"] for b in blocks] == [False, False, False, False]
    fetched, _read, edited, todo = (b["content"] for b in blocks)
    assert fetched.startswith("Received ") and "from 127.0.0.1" in fetched
    for content, seen in zip((edited, todo), model_view[2:], strict=True):
        # a long text without a display shows what the model read (bounded, with the
        # artifact's path), and the wire bound holds
        assert content == seen["content"] and len(encode(content)) <= 65_536
        assert "The full output has been saved to" in content
    # the side call: the call's prompt and the page, no tools
    assert not side.get("tools") and "Request: summarize" in side["messages"][0]["content"]
    assert "# Docs" in side["messages"][0]["content"] and "secret" not in str(side)
    assert SIDE_ANSWER in model_view[0]["content"] and "# Docs" not in model_view[0]["content"]
    assert "The full output has been saved to" in model_view[2]["content"]
    cell = json.loads((proj / "n.ipynb").read_text())["cells"][0]
    assert "".join(cell["source"]) == BIG_SOURCE
    (stored,) = (tmp_path / "home" / ".headwire" / "todos").glob("*.json")
    assert json.loads(stored.read_text())["todos"][0]["status"] == "in_progress"


def test_web_fetch_refuses_the_local_server_without_the_setting(tmp_path: Path) -> None:
    _home, proj = setup(tmp_path, allow_private=False)
    with WebServer() as web, FakeOpenAI(script(web, proj)[:1]) as fake:
        proc = run_cli(
            ["--auth-type", "openai", "-m", "m", "--yolo", "-o", "stream-json", "-p", "go"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
        )
        assert web.requests == []
    (block,) = tool_results(proc.lines())
    assert block["is_error"] is True and "not a public internet address" in block["content"]


def test_new_tools_in_acp(tmp_path: Path) -> None:
    home, proj = setup(tmp_path)
    with WebServer() as web, FakeOpenAI(script(web, proj)) as fake:
        proc = subprocess.Popen(
            [sys.executable, "-m", "headwire", "--experimental-acp", "--yolo", "-m", "m"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=proj,
            env=env_for(home, OPENAI_BASE_URL=fake.base_url),
        )
        assert proc.stdin is not None and proc.stdout is not None
        lines: list[bytes] = []

        def send(message: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
            proc.stdin.flush()

        def answer(msg_id: int) -> dict[str, Any]:
            assert proc.stdout is not None
            while True:
                line = proc.stdout.readline()
                assert line, "stdout closed early"
                lines.append(line)
                message: dict[str, Any] = json.loads(line)
                if message.get("id") == msg_id and "method" not in message:
                    return message

        send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        answer(1)
        send({"id": 2, "method": "session/new", "params": {"cwd": str(proj), "mcpServers": []}})
        session = answer(2)["result"]["sessionId"]
        prompt = [{"type": "text", "text": "go"}]
        send(
            {
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": prompt},
            }
        )
        assert answer(3)["result"] == {"stopReason": "end_turn"}
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert web.requests == ["/page"]
    updates = [
        json.loads(line)["params"]["update"] for line in lines if b'"session/update"' in line
    ]
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert [c["title"] for c in calls] and len(calls) == 4
    finished = [
        u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "completed"
    ]
    assert len(finished) == 4
    # Results are bounded; the model's own arguments are echoed whole in ``tool_call``
    # (rawInput), as upstream does for every tool.
    result_lines = [line for line in lines if b'"status":"completed"' in line]
    assert len(result_lines) == 4 and max(map(len, result_lines)) <= MAX_ACP_LINE
    assert "".join(json.loads((proj / "n.ipynb").read_text())["cells"][0]["source"]) == BIG_SOURCE
