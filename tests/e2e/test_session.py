"""End to end: the persistent stream-JSON session, driven line by line over real pipes.

Covers the issue's session contract without any SDK: the upstream captures' shapes (direct and
SDK mode, 499,999-byte tool output bounded exactly as in the core), FIFO turns, control
requests both ways, interrupts, bad input lines, a 50 MB line, EOF in the middle of a turn,
and a client that stops reading.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from headwire.projection import project_tool_result_content
from headwire.wire import encode
from tests.e2e.helpers import env_for, recordings, run_cli, write_script
from tests.shapes import message_shapes, upstream_shapes
from tests.wire_schema import check_line

SESSION = ["--input-format", "stream-json", "--output-format", "stream-json"]
PROMPT = "Run the big output tool once, then say done."


def user(text: str) -> dict[str, Any]:
    """An input ``user`` line as the SDKs write it."""
    return {
        "type": "user",
        "session_id": "",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
    }


def control(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": subtype, **fields},
    }


def answer(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    }


def jsonl(*messages: dict[str, Any] | str) -> bytes:
    return b"".join((m if isinstance(m, str) else json.dumps(m)).encode() + b"\n" for m in messages)


class Live:
    """A running session: write lines, read messages with a timeout."""

    def __init__(self, args: list[str], tmp: Path, check_input: bool = True) -> None:
        self.check_input = check_input
        self.home = tmp / "home"
        (tmp / "proj").mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "headwire", *args, *SESSION],
            cwd=tmp / "proj",
            env=env_for(self.home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr = b""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._errors, args=(self.proc.stderr,), daemon=True).start()

    def _pump(self, stream: IO[bytes]) -> None:
        for n, line in enumerate(stream, 1):
            message = json.loads(line)
            try:
                check_line("headless", "output", line, f"stdout line {n}")
            except AssertionError as exc:  # fail the test's next read, not this thread
                message = {"type": "schema_violation", "error": str(exc)}
            self.lines.put(message)
        self.lines.put(None)

    def _errors(self, stream: IO[bytes]) -> None:
        self.stderr = stream.read()

    def send(self, *messages: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        if self.check_input:
            for line in jsonl(*messages).splitlines():
                check_line("headless", "input", line, "stdin")
        self.proc.stdin.write(jsonl(*messages))
        self.proc.stdin.flush()

    def read(self, timeout: float = 20.0) -> dict[str, Any]:
        item = self.lines.get(timeout=timeout)
        assert item is not None, f"stdout ended; stderr: {self.stderr.decode()}"
        assert item.get("type") != "schema_violation", item.get("error")
        return item

    def until(self, kind: str, timeout: float = 20.0) -> list[dict[str, Any]]:
        """Messages up to and including the next one of type ``kind``."""
        out = [self.read(timeout)]
        while out[-1]["type"] != kind:
            out.append(self.read(timeout))
        return out

    def finish(self, timeout: float = 20.0) -> tuple[int, list[dict[str, Any]]]:
        """Close stdin; the remaining messages and the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        rest = []
        while (item := self.lines.get(timeout=timeout)) is not None:
            assert item.get("type") != "schema_violation", item.get("error")
            rest.append(item)
        return self.proc.wait(timeout), rest


def check_bounded(home: Path, messages: list[dict[str, Any]]) -> None:
    """The tool result is exactly the core projection of the recorded display (65,536 bytes)."""
    (block,) = [b for m in messages if m["type"] == "user" for b in m["message"]["content"]]
    (recording,) = recordings(home)
    records = [json.loads(line) for line in recording.read_text().splitlines()]
    (tool,) = [r for r in records if r["type"] == "tool_result"]
    assert tool["display"].startswith("x" * 499_998)
    assert block["content"] == project_tool_result_content(tool["display"])
    assert len(encode(block["content"])) == 65_536


def test_direct_mode_matches_upstream_capture(tmp_path: Path) -> None:
    proc = run_cli(
        ["--model", "scripted:demo", "--yolo", *SESSION], tmp_path, stdin=jsonl(user(PROMPT))
    )
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()["shell-persistent"]
    check_bounded(proc.home, proc.lines())
    assert max(len(line) for line in proc.stdout.splitlines()) < 66_000


def test_sdk_mode_matches_upstream_capture(tmp_path: Path) -> None:
    stdin = jsonl(control("req-init-1", "initialize", hooks=None), user(PROMPT))
    proc = run_cli(["--model", "scripted:demo", "--yolo", *SESSION], tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()["shell-persistent-sdk"]
    messages = proc.lines()
    init = messages[0]["response"]
    assert init["request_id"] == "req-init-1"
    assert init["response"]["session_id"] == messages[1]["session_id"]
    check_bounded(proc.home, messages)


def test_turns_run_in_order_and_eof_drains_them(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [{"delay_s": 0.4, "text": "first"}, {"text": "second"}, {"text": "third"}],
    )
    stdin = jsonl(user("a"), user("b"), user("c"))  # EOF arrives while turn 1 is running
    proc = run_cli(["--script", str(script), *SESSION], tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    results = [m for m in proc.lines() if m["type"] == "result"]
    assert [r["result"] for r in results] == ["first", "second", "third"]
    assert [m["type"] for m in proc.lines()].count("system") == 3  # init before every turn


def test_eof_mid_turn_in_sdk_mode_denies_what_nobody_can_answer(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"delay_s": 0.3, "tool": "run_shell_command", "args": {"command": "touch x.txt"}},
            {"text": "finished anyway"},
        ],
    )
    stdin = jsonl(control("i", "initialize"), user("go"))  # then EOF, while the model "thinks"
    proc = run_cli(["--script", str(script), *SESSION], tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    (block,) = [b for m in messages if m["type"] == "user" for b in m["message"]["content"]]
    assert block["is_error"] is True and "closed the session" in block["content"]
    assert messages[-1]["result"] == "finished anyway"
    assert not (tmp_path / "proj" / "x.txt").exists()


def test_bad_lines_get_clear_errors_and_the_session_goes_on(tmp_path: Path) -> None:
    stdin = jsonl(
        "this is not json",  # line 1
        "[1, 2]",  # line 2
        {"no_type": True},  # line 3
        {"no_type": True, "request_id": "r-bad"},  # line 4: answered by request id
        "",  # line 5: blank, skipped
        control("r-x", "definitely_not_a_subtype"),  # line 6
        {"type": "control_request", "request_id": "r-y"},  # line 7: no request object
        {"type": "assistant", "message": {}},  # line 8: ignored with a note
        user("hello"),  # line 9
    )
    proc = run_cli(["--model", "scripted:done", *SESSION], tmp_path, stdin=stdin, check_input=False)
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    errors = [m["error"]["message"] for m in messages if m["type"] == "result" and m["is_error"]]
    assert len(errors) == 3
    assert errors[0].startswith("Failed to parse stream-json line 1: not valid JSON")
    assert "line 2" in errors[1] and "JSON object" in errors[1]
    assert "line 3" in errors[2] and '"type"' in errors[2]
    responses = {
        m["response"]["request_id"]: m["response"]
        for m in messages
        if m["type"] == "control_response"
    }
    assert responses["r-bad"]["subtype"] == "error" and "line 4" in responses["r-bad"]["error"]
    assert responses["r-x"]["error"] == "Unknown control request subtype: definitely_not_a_subtype"
    assert responses["r-y"]["subtype"] == "error"
    assert messages[-1]["type"] == "result" and messages[-1]["result"] == "done"
    for n in (1, 2, 3, 4, 7, 8):
        assert f"stdin line {n}:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_50_mb_line_is_accepted(tmp_path: Path) -> None:
    big = "y" * (50 * 1024 * 1024)
    proc = run_cli(["--model", "scripted:done", *SESSION], tmp_path, stdin=jsonl(user(big)))
    assert proc.returncode == 0, proc.stderr
    assert proc.lines()[-1]["result"] == "done"


def test_permission_requests_allow_deny_update_and_time_out(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": "touch asked.txt"}},
            {"tool": "write_file", "args": {"file_path": "/etc/headwire-test", "content": "x"}},
            {"tool": "run_shell_command", "args": {"command": "touch late.txt"}},
            {"text": "done"},
        ],
    )
    live = Live(["--script", str(script)], tmp_path)
    live.send(control("i", "initialize", hooks=None, timeout={"canUseTool": 400}), user("go"))
    assert live.read()["response"]["response"]["capabilities"]["can_handle_can_use_tool"] is True
    seen = live.until("control_request")
    shell = seen[-1]
    request = shell["request"]
    assert request["subtype"] == "can_use_tool" and request["tool_name"] == "run_shell_command"
    assert request["input"] == {"command": "touch asked.txt"}
    assert request["tool_use_id"] == "call_scripted_1_1" and request["blocked_path"] is None
    assert {s["type"] for s in request["permission_suggestions"]} == {"allow", "deny"}
    live.send(
        answer(
            shell["request_id"],
            {"behavior": "allow", "updatedInput": {"command": "touch changed.txt"}},
        )
    )
    seen += live.until("control_request")
    write = seen[-1]
    assert write["request"]["blocked_path"] == "/etc/headwire-test"
    live.send(answer(write["request_id"], {"behavior": "deny", "message": "not there"}))
    seen += live.until("control_request")
    late = seen[-1]  # never answered: denied after 0.4 s
    messages = seen + live.until("result")
    code, _ = live.finish()
    assert code == 0
    cancel = [m for m in messages if m["type"] == "control_cancel_request"]
    assert cancel == [{"type": "control_cancel_request", "request_id": late["request_id"]}]
    results = [b for m in messages if m["type"] == "user" for b in m["message"]["content"]]
    assert results[0]["is_error"] is False and "touch changed.txt" in results[0]["content"]
    assert results[1]["is_error"] is True and results[1]["content"] == "not there"
    assert results[2]["is_error"] is True and "timed out" in results[2]["content"]
    denials = messages[-1]["permission_denials"]
    assert [d["tool_name"] for d in denials] == ["write_file", "run_shell_command"]
    proj = tmp_path / "proj"
    assert (proj / "changed.txt").exists() and not (proj / "asked.txt").exists()
    assert not (proj / "late.txt").exists()


def test_interrupt_ends_the_turn_and_the_session_continues(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"delay_s": 30, "text": "never"}])
    live = Live(["--script", str(script)], tmp_path)
    live.send(control("i", "initialize"), user("slow"))
    live.until("stream_event")  # goal_state: the turn is running
    started = time.monotonic()
    live.send(control("int", "interrupt"))
    messages = live.until("result")
    assert time.monotonic() - started < 5
    (response,) = [m for m in messages if m["type"] == "control_response"]
    assert response["response"] == {
        "subtype": "success",
        "request_id": "int",
        "response": {"subtype": "interrupt"},
    }
    result = messages[-1]
    assert result["is_error"] is True and result["error"] == {"message": "Operation cancelled."}
    live.send(user("again"))  # the conversation has no assistant turn yet: entry 0 again
    live.send(control("int2", "interrupt"))
    live.until("result")
    code, _ = live.finish()
    assert code == 0


def test_deny_with_interrupt_ends_the_turn(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool": "run_shell_command", "args": {"command": "touch x.txt"}}, {"text": "after"}],
    )
    live = Live(["--script", str(script)], tmp_path)
    live.send(control("i", "initialize"), user("go"))
    ask = live.until("control_request")[-1]
    live.send(answer(ask["request_id"], {"behavior": "deny", "message": "stop", "interrupt": True}))
    messages = live.until("result")
    tool_result = next(m for m in messages if m["type"] == "user")["message"]["content"][0]
    assert tool_result["content"] == "stop" and tool_result["is_error"] is True
    assert messages[-1]["error"]["message"] == "Operation cancelled."
    live.send(user("next"))
    assert live.until("result")[-1]["result"] == "after"
    assert live.finish()[0] == 0


def test_control_requests_from_the_client(tmp_path: Path) -> None:
    stdin = jsonl(
        control("1", "initialize", hooks=None),
        control("2", "set_model", model="other-model"),
        control("3", "set_permission_mode", mode="acceptEdits"),
        control("4", "set_permission_mode", mode="sometimes"),
        control("5", "supported_commands"),
        control("6", "mcp_server_status"),
        control("7", "get_context_usage"),
        control("8", "get_available_models"),
        control("9", "set_model"),
        {"type": "control_cancel_request", "request_id": "nothing-pending"},
        user("hi"),
        control("10", "get_usage_info"),
    )
    proc = run_cli(["--model", "scripted:done", *SESSION], tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    by_id = {
        m["response"]["request_id"]: m["response"]
        for m in messages
        if m["type"] == "control_response"
    }
    assert by_id["2"]["response"] == {"subtype": "set_model", "model": "other-model"}
    assert by_id["3"]["response"] == {"status": "updated", "mode": "auto-edit"}
    assert by_id["4"]["subtype"] == "error" and "sometimes" in by_id["4"]["error"]
    assert by_id["5"]["response"]["subtype"] == "supported_commands"
    assert by_id["6"]["response"]["subtype"] == "mcp_server_status"
    assert by_id["7"]["response"]["subtype"] == "get_context_usage"
    assert by_id["8"]["response"]["models"][0]["id"] == "other-model"
    assert by_id["9"]["subtype"] == "error"
    init = next(m for m in messages if m["type"] == "system")
    assert init["model"] == "other-model" and init["permission_mode"] == "auto-edit"
    assert (
        next(m for m in messages if m["type"] == "assistant")["message"]["model"] == "other-model"
    )


def test_direct_mode_refuses_control_requests_but_interrupt(tmp_path: Path) -> None:
    stdin = jsonl(user("hi"), control("a", "set_model", model="x"), control("b", "interrupt"))
    proc = run_cli(["--model", "scripted:done", *SESSION], tmp_path, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    by_id = {
        m["response"]["request_id"]: m["response"]
        for m in proc.lines()
        if m["type"] == "control_response"
    }
    assert by_id["a"]["subtype"] == "error" and "direct mode" in by_id["a"]["error"]
    assert by_id["b"]["subtype"] == "success"


def test_direct_mode_denies_tools_that_need_approval(tmp_path: Path) -> None:
    proc = run_cli(["--model", "scripted:demo", *SESSION], tmp_path, stdin=jsonl(user("go")))
    messages = proc.lines()
    assert not [m for m in messages if m["type"] == "control_request"]
    assert messages[-1]["permission_denials"][0]["tool_name"] == "run_shell_command"


def test_a_client_that_stops_reading_ends_the_session_cleanly(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"delay_s": 0.3, "tool": "run_shell_command", "args": {"command": "touch ran.txt"}},
            {"text": "done"},
        ],
    )
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--script", str(script), "--yolo", *SESSION],
        cwd=proj,
        env=env_for(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(jsonl(user("first"), user("second")))
    proc.stdin.flush()
    json.loads(proc.stdout.readline())  # system/init of the first turn
    proc.stdout.close()  # the client goes away while the turn runs; stdin stays open
    assert proc.wait(timeout=20) == 0
    stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr and "stdout closed" in stderr
    (recording,) = recordings(home)
    records = [json.loads(line) for line in recording.read_text().splitlines()]
    assert [r["type"] for r in records][-1] == "result"  # the running turn finished, recorded
    assert [r["type"] for r in records].count("user") == 1  # the queued turn was dropped
    assert (proj / "ran.txt").exists()
    proc.stdin.close()


def test_the_flags_the_sdks_pass_are_accepted(tmp_path: Path) -> None:
    qwen = [
        "--channel=SDK",
        "--model",
        "scripted:done",
        "--approval-mode",
        "yolo",
        "--max-session-turns",
        "5",
        "--system-prompt",
        "sys",
        "--append-system-prompt",
        "more",
        "--core-tools",
        "read_file,run_shell_command",
        "--exclude-tools",
        "write_file",
        "--allowed-tools",
        "read_file",
        "--auth-type",
        "openai",
        "--include-partial-messages",
        "--session-id",
        "11111111-2222-3333-4444-555555555555",
    ]
    proc = run_cli([*SESSION, *qwen], tmp_path, stdin=jsonl(control("i", "initialize"), user("x")))
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    assert messages[1]["session_id"] == "11111111-2222-3333-4444-555555555555"
    assert messages[1]["tools"] == ["read_file", "run_shell_command"]
    assert any(
        m["type"] == "stream_event" and m["event"]["type"] == "message_start" for m in messages
    )
    claude = [
        "--output-format",
        "stream-json",
        "--verbose",
        "--system-prompt",
        "",
        "--model",
        "scripted:done",
        "--permission-mode",
        "bypassPermissions",
        "--max-turns",
        "5",
        "--allowedTools",
        "read_file",
        "--disallowedTools",
        "edit",
        "--setting-sources=user,project",
        "--mcp-config",
        '{"mcpServers": {}}',
        "--permission-prompt-tool",
        "stdio",
        "--input-format",
        "stream-json",
    ]
    proc = run_cli(claude, tmp_path / "c", stdin=jsonl(control("i", "initialize"), user("x")))
    assert proc.returncode == 0, proc.stderr
    assert "not supported by headwire" in proc.stderr
    assert "--permission-prompt-tool" in proc.stderr and "--setting-sources" not in proc.stderr
    init = proc.lines()[1]
    assert init["permission_mode"] == "yolo" and "edit" not in init["tools"]


def test_thinking_blocks_get_a_signature_for_claude_clients(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"thinking": "hmm", "text": "ok"}])
    stdin = jsonl(user("x"))
    plain = run_cli(["--script", str(script), *SESSION], tmp_path, stdin=stdin)
    claude = run_cli(["--script", str(script), "--verbose", *SESSION], tmp_path, stdin=stdin)

    def thinking(stdout: list[dict[str, Any]]) -> dict[str, Any]:
        return next(
            b
            for m in stdout
            if m["type"] == "assistant"
            for b in m["message"]["content"]
            if b["type"] == "thinking"
        )

    assert "signature" not in thinking(plain.lines())  # Qwen Code omits it without a subject
    assert thinking(claude.lines())["signature"] == ""  # Claude's parser requires the key
