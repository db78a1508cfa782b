"""Unit tests of ``headwire.sdk``: message parsing, line splitting, argv, stderr tail."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.sdk import (
    AssistantMessage,
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    MessageParseError,
    Options,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    UnknownMessage,
    UserMessage,
    build_args,
    parse_message,
)
from headwire.sdk.transport import StderrTail, resolve_command, split_lines
from tests.e2e.helpers import ROOT
from tests.shapes import SAMPLES


def test_parses_every_message_of_the_upstream_capture() -> None:
    path = SAMPLES / "shell-persistent-sdk.stdout.jsonl"
    if not path.exists():
        pytest.skip("upstream samples not available")
    import json

    kinds = [
        type(parse_message(json.loads(line))).__name__ for line in path.read_text().splitlines()
    ]
    assert kinds == [
        "ControlResponse",
        "SystemMessage",
        "StreamEvent",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]


def test_system_init() -> None:
    msg = parse_message(
        {
            "type": "system",
            "subtype": "init",
            "uuid": "s",
            "session_id": "s",
            "cwd": "/w",
            "tools": ["read_file"],
            "mcp_servers": [],
            "model": "m",
            "permission_mode": "default",
            "slash_commands": [],
            "qwen_code_version": "0.24.4",
            "agents": [],
            "new_field": 1,
        }
    )
    assert isinstance(msg, SystemMessage)
    assert (msg.subtype, msg.model, msg.version, msg.tools) == (
        "init",
        "m",
        "0.24.4",
        ["read_file"],
    )
    assert msg.raw["new_field"] == 1
    event = parse_message({"type": "system", "subtype": "task_started", "data": {"task_id": "t"}})
    assert isinstance(event, SystemMessage) and event.data == {"task_id": "t"}


def test_assistant_blocks() -> None:
    msg = parse_message(
        {
            "type": "assistant",
            "uuid": "a",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {
                "id": "a",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [
                    {"type": "text", "text": "hi "},
                    {"type": "thinking", "thinking": "t"},
                    {"type": "tool_use", "id": "c", "name": "n", "input": {"x": 1}},
                    {"type": "text", "text": "there"},
                    {"type": "image", "data": "..."},
                ],
                "stop_reason": None,
                "usage": {"input_tokens": 1},
            },
        }
    )
    assert isinstance(msg, AssistantMessage)
    assert msg.model == "m" and msg.text == "hi there" and msg.usage == {"input_tokens": 1}
    kinds = [type(b) for b in msg.content]
    assert kinds == [TextBlock, ThinkingBlock, ToolUseBlock, TextBlock, UnknownBlock]
    assert isinstance(msg.content[1], ThinkingBlock) and msg.content[1].signature is None
    assert isinstance(msg.content[2], ToolUseBlock) and msg.content[2].input == {"x": 1}


def test_user_tool_result_and_echo() -> None:
    msg = parse_message(
        {
            "type": "user",
            "uuid": "u",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c", "is_error": True}],
            },
        }
    )
    assert isinstance(msg, UserMessage)
    (block,) = msg.tool_results
    assert block == ToolResultBlock("c", True, None, raw=block.raw)
    echo = parse_message({"type": "user", "message": {"role": "user", "content": "hello"}})
    assert isinstance(echo, UserMessage) and echo.content == "hello" and echo.tool_results == []


def test_results() -> None:
    ok = parse_message(
        {
            "type": "result",
            "subtype": "success",
            "uuid": "r",
            "session_id": "s",
            "is_error": False,
            "duration_ms": 5,
            "duration_api_ms": 1,
            "num_turns": 2,
            "result": "done",
            "usage": {},
            "permission_denials": [{"tool_name": "t", "tool_use_id": "c", "tool_input": {"a": 1}}],
        }
    )
    assert isinstance(ok, ResultMessage) and ok.result == "done" and ok.error is None
    assert ok.permission_denials[0].tool_input == {"a": 1}
    bad = parse_message(
        {
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "session_id": "s",
            "error": {"message": "Operation cancelled."},
        }
    )
    assert isinstance(bad, ResultMessage) and bad.error == "Operation cancelled."
    assert bad.result is None and bad.num_turns == 0


def test_control_and_other_messages() -> None:
    req = parse_message(
        {
            "type": "control_request",
            "request_id": "r",
            "request": {"subtype": "can_use_tool", "tool_name": "x"},
        }
    )
    assert isinstance(req, ControlRequest) and req.subtype == "can_use_tool"
    resp = parse_message(
        {
            "type": "control_response",
            "response": {"subtype": "error", "request_id": "r", "error": {"message": "nope"}},
        }
    )
    assert isinstance(resp, ControlResponse) and resp.error == "nope" and resp.response is None
    cancel = parse_message({"type": "control_cancel_request"})
    assert isinstance(cancel, ControlCancelRequest) and cancel.request_id is None
    event = parse_message({"type": "stream_event", "event": {"type": "message_stop"}})
    assert isinstance(event, StreamEvent) and event.event_type == "message_stop"
    unknown = parse_message({"type": "transcript_mirror", "entries": []})
    assert isinstance(unknown, UnknownMessage) and unknown.type == "transcript_mirror"
    with pytest.raises(MessageParseError):
        parse_message([1, 2])


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    chunks, start = [], 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        chunks.append(data[start:cut])
        start = cut
    chunks.append(data[start:])
    pieces = [c for c in chunks if c]

    async def collect() -> list[bytes]:
        it = iter(pieces)

        async def read(_n: int) -> bytes:
            return next(it, b"")

        return [line async for line in split_lines(read)]

    return asyncio.run(collect())


@given(
    st.lists(st.binary(max_size=50).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    st.booleans(),
)
def test_split_lines_reassembles_any_chunking(
    lines: list[bytes], cuts: list[int], final_newline: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected = data.split(b"\n")
    if expected and expected[-1] == b"":
        expected.pop()
    assert _split(data, cuts) == expected


def test_stderr_tail_is_bounded() -> None:
    tail = StderrTail(limit=100)
    for n in range(1000):
        tail.add(f"line {n}".encode())
    assert tail.size <= 100 and tail.text().endswith("line 999") and tail.dropped > 900
    tail.add(b"x" * 1000)
    assert tail.text() == "x" * 99 and tail.size == 100


def test_build_args_use_qwen_code_flags() -> None:
    opts = Options(
        model="m",
        approval_mode="yolo",
        max_session_turns=3,
        core_tools=["a", "b"],
        allowed_tools=["c"],
        include_partial_messages=True,
        session_id="sid",
        system_prompt="s",
        extra_args=["--debug"],
    )
    assert build_args(opts) == [
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--channel=SDK",
        "--model",
        "m",
        "--system-prompt",
        "s",
        "--approval-mode",
        "yolo",
        "--max-session-turns",
        "3",
        "--core-tools",
        "a,b",
        "--allowed-tools",
        "c",
        "--include-partial-messages",
        "--session-id",
        "sid",
        "--debug",
    ]
    assert build_args(Options(resume="r", session_id="ignored"))[-2:] == ["--resume", "r"]
    assert build_args(Options(continue_session=True))[-1] == "--continue"


def test_resolve_command() -> None:
    assert resolve_command(None) == [sys.executable, "-m", "headwire"]
    assert resolve_command("/x/cli.py") == [sys.executable, str(Path("/x/cli.py").resolve())]
    assert resolve_command("/x/cli.mjs")[0] == "node"
    assert resolve_command(["a", "b"]) == ["a", "b"]
    assert resolve_command(str(ROOT / "README.md")) == [str(ROOT / "README.md")]
    assert resolve_command("surely-not-on-path-xyz") == ["surely-not-on-path-xyz"]


def test_compaction_messages_are_typed() -> None:
    from headwire.protocol import messages as m
    from headwire.sdk import CompactMetadata, SystemMessage

    started = parse_message(
        m.compaction_status(
            uuid="u1", session_id="s", parent_tool_use_id=None, trigger="auto", pre_tokens=900
        )
    )
    ended = parse_message(
        m.compact_boundary(
            uuid="u2",
            session_id="s",
            parent_tool_use_id="call_1",
            trigger="manual",
            pre_tokens=900,
            post_tokens=300,
            duration_ms=12,
        )
    )
    assert isinstance(started, SystemMessage) and started.status == "compacting"
    assert started.compact_metadata == CompactMetadata("auto", 900)
    assert isinstance(ended, SystemMessage) and ended.subtype == "compact_boundary"
    assert ended.compact_metadata == CompactMetadata("manual", 900, 300, 12)
    assert ended.parent_tool_use_id == "call_1"
