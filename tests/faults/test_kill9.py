"""``kill -9`` of headwire in the middle of a tool call, then ``--resume``.

Every record is flushed when it is written, so the recording holds the interrupted turn up to
the kill (the prompt, and the assistant message that called the tool) as valid JSONL.  A line
torn by a crash is skipped by the reader, and the next writer starts on a fresh line so the
records after it stay intact.  The resumed conversation answers the dangling tool call (chat
APIs reject a call without a result), and the session answers the next prompt.  ACP
``session/load`` of the session shows the killed call closed as interrupted, then the resumed
turn.
"""

from __future__ import annotations

import json
from pathlib import Path

from headwire.acp.replay import INTERRUPTED_TEXT
from headwire.runtime.store.recording import INTERRUPTED_CALL_MESSAGE
from headwire.wire import encode
from tests.e2e.helpers import run_cli
from tests.fakes.fake_openai import FakeOpenAI
from tests.faults.util import (
    chats,
    descendants,
    json_output,
    kill_groups,
    read_recording,
    run,
    start,
    wait_until,
)

SID = "9a1d2c4e-0000-4000-8000-00000000a001"
TORN = b'{"type":"tool_result","uuid":"torn-by-the-crash","message":{"role":"to'


def test_kill9_mid_tool_then_resume(tmp_path: Path) -> None:
    script = [
        {"tool": "run_shell_command", "args": {"command": "sleep 30"}, "id": "call_slow"},
        {"text": "resumed fine"},
    ]
    with FakeOpenAI(script) as fake:
        model = {
            "OPENAI_BASE_URL": fake.base_url,
            "OPENAI_API_KEY": "k",
            "OPENAI_MODEL": "fake-model",
        }
        cli = start(
            ["-o", "stream-json", "--yolo", "--session-id", SID, "-p", "first prompt"],
            tmp_path,
            env=model,
        )
        tool = wait_until(
            lambda: [p for p, cmd in descendants(cli.pid).items() if "sleep 30" in cmd],
            "the shell tool to start",
        )
        cli.proc.kill()
        assert cli.wait() == -9
        kill_groups(tool)  # kill -9 cannot clean up: the tool's own process group is orphaned

        (path,) = chats(cli.home)
        assert path.stem == SID
        records, bad = read_recording(path)
        assert bad == []
        assert [r["type"] for r in records] == ["user", "assistant", "tool_pending", "tool_started"]
        assert records[0]["message"] == {"role": "user", "content": "first prompt"}
        (call,) = records[1]["message"]["tool_calls"]
        assert call["id"] == "call_slow" and json.loads(call["function"]["arguments"]) == {
            "command": "sleep 30"
        }
        # The wire got as far as the tool call; no result was written.
        assert [m["type"] for m in cli.stdout_lines()][-1] == "assistant"

        # As if the kill had torn a record in half.
        with path.open("ab") as f:
            f.write(TORN)

        resumed = run(["-o", "json", "--resume", SID, "-p", "second prompt"], tmp_path, model)
        assert resumed.returncode == 0, resumed.stderr
        assert "Traceback" not in resumed.stderr
        result = json_output(resumed.stdout)[-1]
        assert result["type"] == "result" and result["result"] == "resumed fine"
        assert result["session_id"] == SID

        sent = fake.requests[-1]["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
        assert sent[3] == {
            "role": "tool",
            "tool_call_id": "call_slow",
            "content": INTERRUPTED_CALL_MESSAGE,
        }
        assert sent[4]["content"] == "second prompt"

    records, bad = read_recording(path)
    assert bad == [TORN]  # on a line of its own: the records after it are intact
    kinds = ["user", "assistant", "tool_pending", "tool_started", "user", "assistant", "result"]
    assert [r["type"] for r in records] == kinds
    assert records[4]["message"]["content"] == "second prompt"
    assert records[-1]["is_error"] is False and records[-1]["result"] == "resumed fine"

    load = {"sessionId": SID, "cwd": str(tmp_path / "proj"), "mcpServers": []}
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": load},
    ]
    stdin = b"".join(encode(f) + b"\n" for f in frames)
    loaded = run_cli(["--acp", "--script", "done"], tmp_path, stdin=stdin)
    assert loaded.returncode == 0, loaded.stderr
    updates = [m["params"]["update"] for m in loaded.lines() if m.get("method") == "session/update"]
    shown = [
        (
            u["sessionUpdate"],
            u.get("toolCallId") or u.get("content", {}).get("text"),
            u.get("status"),
        )
        for u in updates
    ]
    assert (
        shown
        == [
            ("user_message_chunk", "first prompt", None),
            ("tool_call", "call_slow", "pending"),
            ("tool_call_update", "call_slow", "in_progress"),
            ("tool_call_update", "call_slow", "failed"),  # cut off by the kill
            ("user_message_chunk", "second prompt", None),
            ("agent_message_chunk", "resumed fine", None),
            ("available_commands_update", None, None),
        ]
        or shown
    )
    assert updates[3]["content"][0]["content"]["text"] == INTERRUPTED_TEXT


def test_a_grep_worker_dies_with_a_killed_headwire(tmp_path: Path) -> None:
    """``kill -9`` cannot clean up, yet the ``re`` worker of a runaway ``grep_search`` (a
    look-around on a line that backtracks for minutes) does not outlive headwire: the kernel
    kills it (``PR_SET_PDEATHSIG``).  Before, the orphan kept a core busy until its search
    ended."""
    from tests.e2e.helpers import write_script
    from tests.faults.util import alive

    proj = tmp_path / "proj"
    proj.mkdir()
    line = "def compute_total_price_for_all_items_in_cart(self, items, discount):\n"
    (proj / "cart.py").write_text(line * 3)
    pattern = r"(\w+\s?)+$(?!x)"  # needs Python's re: the worker
    script = write_script(
        tmp_path / "script.jsonl",
        [{"tool": "grep_search", "args": {"pattern": pattern}}, {"text": "done"}],
    )
    cli = start(["--script", str(script), "--yolo", "-p", "go"], tmp_path)
    workers: list[int] = []
    try:
        workers += wait_until(
            lambda: [p for p, cmd in descendants(cli.pid).items() if "grep_worker" in cmd],
            "the grep worker to start",
            timeout=60,
        )
        cli.proc.kill()
        cli.proc.wait()
        wait_until(lambda: not any(alive(p) for p in workers), "the worker to die", timeout=5)
    finally:
        if cli.proc.poll() is None:
            cli.proc.kill()
            cli.proc.wait()
        kill_groups([p for p in workers if alive(p)])  # never leave a runaway behind
