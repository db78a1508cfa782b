"""The Anthropic Messages client against the fake Anthropic server, over real HTTP."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.models.anthropic import AnthropicModel
from headwire.runtime.models.anthropic_convert import convert_messages, tool_use_id
from headwire.runtime.models.base import (
    Finished,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.unit.runtime.models.conversations import conversations

KEY = "sk-ant-test-SECRET-0123456789"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "ls", "parameters": {"properties": {}}}},
]
HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]


def make(base_url: str, notes: list[str] | None = None, **kw: Any) -> AnthropicModel:
    kw.setdefault("retry_base_delay_s", 0.01)
    return AnthropicModel(
        base_url, KEY, "fake-model", diagnostics=(notes if notes is not None else []).append, **kw
    )


def run(
    model: AnthropicModel, messages: list[dict[str, Any]] | None = None, tools: Any = None
) -> tuple[list[ModelEvent], ModelError | None]:
    async def go() -> tuple[list[ModelEvent], ModelError | None]:
        events: list[ModelEvent] = []
        try:
            request = ModelRequest(
                "fake-model", messages or HELLO, TOOLS if tools is None else tools
            )
            async for event in model.stream(request):
                events.append(event)
        except ModelError as exc:
            return events, exc
        finally:
            await model.aclose()
        return events, None

    return asyncio.run(go())


def ok(model: AnthropicModel, messages: list[dict[str, Any]] | None = None) -> list[ModelEvent]:
    events, error = run(model, messages)
    assert error is None, error.message
    assert sum(isinstance(e, Finished) for e in events) == 1 and isinstance(events[-1], Finished)
    return events


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_request_shape_and_streamed_text() -> None:
    with FakeAnthropic([{"text": "hello there"}]) as fake:
        events = ok(make(fake.base_url + "/v1/"))  # a base with /v1 works too
        body, headers, path = fake.requests[0], fake.request_headers[0], fake.request_paths[0]
    assert text_of(events) == "hello there" and len(events) > 2
    assert path == "/v1/messages"
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
    assert headers["Authorization"] == f"Bearer {KEY}"  # not *.anthropic.com: gateways want it
    assert body["model"] == "fake-model" and body["stream"] is True
    assert body["max_tokens"] == 8192 and "thinking" not in body
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert body["tools"] == [
        {
            "name": "read_file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "description": "Read a file.",
        },
        {
            "name": "ls",
            "input_schema": {"properties": {}, "type": "object"},
            "cache_control": {"type": "ephemeral"},
        },
    ]


def test_tool_calls_come_after_the_text_once_the_message_is_complete() -> None:
    reply = {
        "text": "Looking.",
        "tools": [{"name": "read_file", "args": {"path": "a"}, "id": "toolu_1"}, {"name": "ls"}],
    }
    with FakeAnthropic([reply]) as fake:
        events = ok(make(fake.base_url))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls == [
        ToolCall("toolu_1", "read_file", {"path": "a"}),
        ToolCall("toolu_fake_1_1", "ls", {}),
    ]
    first = events.index(calls[0])
    assert all(isinstance(e, TextDelta) for e in events[:first])


def test_usage_counts_cache_reads_and_writes() -> None:
    usage = {
        "input_tokens": 5,
        "output_tokens": 7,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    }
    with FakeAnthropic([{"text": "a", "usage": usage}, {"text": "b", "usage": None}, {}]) as fake:
        first, second, third = (ok(make(fake.base_url)) for _ in range(3))
    assert first[-1] == Finished(Usage(125, 7, 100, 132, 20), "end_turn")
    assert second[-1] == Finished(None, "end_turn")
    assert third[-1] == Finished(Usage(11, 3, 0, 14), "end_turn")


def test_thinking_is_shown_and_sent_back_with_its_signature() -> None:
    reply = {
        "thinking": "Let me look.",
        "tool": "read_file",
        "args": {"path": "a"},
        "signature": "S1",
    }
    with FakeAnthropic([reply, {"text": "done"}]) as fake:
        model = make(fake.base_url, thinking_budget=2048)
        events = ok(model)
        assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Let me look."
        (call,) = [e for e in events if isinstance(e, ToolCall)]
        follow = [
            *HELLO,
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Let me look.",
                "tool_calls": [
                    {
                        "id": call.call_id,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call.call_id, "content": "text of a"},
        ]
        ok(model, follow)
        first, second = fake.requests
        headers = fake.request_headers[1]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] >= 2048 + 1024
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assistant = second["messages"][1]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Let me look.",
        "signature": "S1",
    }
    assert assistant["content"][1]["type"] == "tool_use"
    assert second["messages"][2]["content"][0]["tool_use_id"] == call.call_id
    assert "thinking" in second


def test_a_turn_whose_thinking_was_not_seen_is_sent_without_thinking() -> None:
    resumed = [
        *HELLO,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call:9", "function": {"name": "ls", "arguments": ""}}],
        },
        {"role": "tool", "tool_call_id": "call:9", "content": "Tool call interrupted"},
    ]
    with FakeAnthropic([{"text": "ok"}]) as fake:
        ok(make(fake.base_url, thinking_budget=4096), resumed)
        body = fake.requests[0]
    assert "thinking" not in body
    use = body["messages"][1]["content"][0]
    assert use == {"type": "tool_use", "id": "call_9", "name": "ls", "input": {}}
    assert body["messages"][2]["content"][0]["tool_use_id"] == "call_9"


def test_invalid_tool_input_becomes_empty_with_a_note() -> None:
    notes: list[str] = []
    with FakeAnthropic([{"tool": "read_file", "args": '{"path": '}]) as fake:
        events = ok(make(fake.base_url, notes))
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall("toolu_fake_1_0", "read_file", {})
    ]
    assert any("not a JSON object" in n for n in notes)


def test_retries_529_and_an_overloaded_event_then_succeeds() -> None:
    notes: list[str] = []
    script = [
        {"error_status": 529, "message": "Overloaded"},
        {"error_event": "Overloaded"},
        {"drop_after_chunks": 2},
        {"text": "ok"},
    ]
    with FakeAnthropic(script) as fake:
        events = ok(make(fake.base_url, notes))
        assert len(fake.requests) == 4
    assert text_of(events) == "ok"
    assert "HTTP 529" in notes[0] and "overloaded_error" in notes[1]
    assert "Connection closed mid-stream" in notes[2]


def test_retry_after_is_honoured() -> None:
    with FakeAnthropic([{"error_status": 429, "retry_after": "0.3"}, {"text": "ok"}]) as fake:
        started = time.monotonic()
        ok(make(fake.base_url, retry_base_delay_s=0.001))
    assert time.monotonic() - started >= 0.3


def test_a_drop_after_text_is_not_retried() -> None:
    with FakeAnthropic([{"text": "abcdefghi", "drop_after_chunks": 5}, {"text": "no"}]) as fake:
        events, error = run(make(fake.base_url))
        assert len(fake.requests) == 1
    assert text_of(events) == "abcdef"  # two of the three text deltas arrived
    assert error is not None and error.message == "Connection closed mid-stream"


def test_malformed_event_and_bad_key() -> None:
    with FakeAnthropic([{"malformed": True}]) as fake:
        _, error = run(make(fake.base_url))
    assert error is not None and error.message.startswith("Malformed streaming response")
    with FakeAnthropic([{"text": "x"}], require_api_key="sk-right") as fake:
        _, error = run(make(fake.base_url))
        assert len(fake.requests) == 1
    assert error is not None and error.status == 401 and not error.retryable
    assert KEY not in error.message and "invalid x-api-key: ***" in error.message


def test_models_are_listed() -> None:
    with FakeAnthropic([], model="claude-test") as fake:
        model = make(fake.base_url)

        async def go() -> tuple[int, list[str]]:
            try:
                return await model.list_models()
            finally:
                await model.aclose()

        assert asyncio.run(go()) == (200, ["claude-test"])


@given(conversations())
def test_converted_conversations_are_valid_requests(messages: list[dict[str, Any]]) -> None:
    """The conversion's promises: roles alternate starting with the user, no empty text, every
    tool_result answers a tool_use of the turn before, ids use [A-Za-z0-9_-] only, and at most
    one cache breakpoint sits in the messages."""
    system, out = convert_messages(messages)
    assert system is None or system[0]["text"]
    assert [m["role"] for m in out][:1] in ([], ["user"])
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(out))
    marks = 0
    for position, message in enumerate(out):
        for block in message["content"]:
            marks += "cache_control" in block
            if block["type"] == "text":
                assert block["text"].strip()
            if block["type"] == "tool_use":
                assert block["id"] == tool_use_id(block["id"])
            if block["type"] == "tool_result":
                previous = out[position - 1]["content"]
                assert block["tool_use_id"] in {b.get("id") for b in previous} or not any(
                    b["type"] == "tool_use" for b in previous
                )
    assert marks <= 1


@given(st.text(max_size=20))
def test_tool_use_ids_are_valid_and_stable(call_id: str) -> None:
    converted = tool_use_id(call_id)
    assert converted and all(c.isascii() and (c.isalnum() or c in "_-") for c in converted)
    assert tool_use_id(converted) == converted


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            ]
        ),
        st.integers(0, 10**7),
    )
)
def test_the_prompt_counts_cached_parts_too(raw: dict[str, int]) -> None:
    """``input_tokens`` on the wire is the whole prompt (cache reads and writes included);
    reads and writes are kept apart; total is input plus output."""
    from headwire.runtime.models.anthropic import _usage

    usage = _usage(raw)
    read, written = raw.get("cache_read_input_tokens", 0), raw.get("cache_creation_input_tokens", 0)
    assert usage.input_tokens == raw.get("input_tokens", 0) + read + written
    assert (usage.cached_tokens, usage.cache_write_tokens) == (read, written)
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


def test_a_message_answered_as_json_is_read() -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Hmm.", "signature": "S"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_j", "name": "read_file", "input": {"path": "x"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 4, "output_tokens": 2},
    }
    with FakeAnthropic([{"raw_json": message}, {"raw_json": {"type": "error"}}]) as fake:
        events = ok(make(fake.base_url))
        _, error = run(make(fake.base_url))
    assert [type(e).__name__ for e in events] == [
        "ThinkingDelta",
        "TextDelta",
        "ToolCall",
        "Finished",
    ]
    assert events[2] == ToolCall("toolu_j", "read_file", {"path": "x"})
    assert events[-1] == Finished(Usage(4, 2, 0, 6))
    assert error is not None and "did not stream" in error.message
