"""The Gemini client against the fake Gemini server, over real HTTP."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from hypothesis import given

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
from headwire.runtime.models.gemini import GeminiModel
from headwire.runtime.models.gemini_convert import UNKNOWN_SIGNATURE, convert_contents
from tests.fakes.fake_gemini import FakeGemini
from tests.unit.runtime.models.conversations import conversations

KEY = "AIza-test-SECRET-0123456789"
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "additionalProperties": False,
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "description": "Read.", "parameters": SCHEMA},
    }
]
HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]


def make(
    base_url: str, notes: list[str] | None = None, model: str = "fake-model", **kw: Any
) -> GeminiModel:
    kw.setdefault("retry_base_delay_s", 0.01)
    sink = notes if notes is not None else []
    return GeminiModel(base_url, KEY, model, diagnostics=sink.append, **kw)


def run(
    model: GeminiModel, messages: list[dict[str, Any]] | None = None
) -> tuple[list[ModelEvent], ModelError | None]:
    async def go() -> tuple[list[ModelEvent], ModelError | None]:
        events: list[ModelEvent] = []
        try:
            async for event in model.stream(ModelRequest("", messages or HELLO, TOOLS)):
                events.append(event)
        except ModelError as exc:
            return events, exc
        return events, None

    return asyncio.run(go())


def ok(model: GeminiModel, messages: list[dict[str, Any]] | None = None) -> list[ModelEvent]:
    events, error = run(model, messages)
    assert error is None, error.message
    assert sum(isinstance(e, Finished) for e in events) == 1 and isinstance(events[-1], Finished)
    return events


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def answer(call: ToolCall) -> list[dict[str, Any]]:
    return [
        *HELLO,
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {"id": call.call_id, "function": {"name": call.name, "arguments": '{"path": "a"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": call.call_id, "content": "text of a"},
    ]


def test_request_shape_and_streamed_text() -> None:
    with FakeGemini([{"text": "hello there"}]) as fake:
        events = ok(make(fake.base_url))
        body, headers, path = fake.requests[0], fake.request_headers[0], fake.request_paths[0]
    assert text_of(events) == "hello there" and len(events) > 2
    assert path == "/v1beta/models/fake-model:streamGenerateContent?alt=sse"  # no key in the URL
    assert headers["x-goog-api-key"] == KEY
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "read_file", "description": "Read.", "parametersJsonSchema": SCHEMA}
                ]
            }
        ],
    }


def test_thinking_models_are_asked_for_their_thoughts() -> None:
    with FakeGemini([{"thinking": "Hmm.", "text": "ok"}, {}]) as fake:
        events = ok(make(fake.base_url, model="models/gemini-2.5-flash"))
        ok(make(fake.base_url, model="gemini-2.0-flash", thinking_budget=512))
        first, second = fake.requests
        paths = fake.request_paths
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Hmm."
    assert first["generationConfig"] == {"thinkingConfig": {"includeThoughts": True}}
    assert second["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 512
    assert paths[0].startswith("/v1beta/models/gemini-2.5-flash:")


def test_function_calls_and_their_signatures_go_back() -> None:
    reply = {
        "text": "Reading.",
        "tool": "read_file",
        "args": {"path": "a"},
        "thought_signature": "U0lH",
    }
    with FakeGemini([reply, {"text": "done"}]) as fake:
        model = make(fake.base_url)
        events = ok(model)
        (call,) = [e for e in events if isinstance(e, ToolCall)]
        assert call.name == "read_file" and call.args == {"path": "a"}
        assert call.call_id.startswith("call_")
        ok(model, answer(call))
        second = fake.requests[1]
    model_turn, reply_turn = second["contents"][1:]
    assert model_turn == {
        "role": "model",
        "parts": [
            {"text": "Reading."},
            {
                "functionCall": {"name": "read_file", "args": {"path": "a"}},
                "thoughtSignature": "U0lH",
            },
        ],
    }
    assert reply_turn == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "text of a"}}}],
    }


def test_ids_gemini_gives_are_sent_back() -> None:
    with FakeGemini([{"tool": "read_file", "args": {"path": "a"}, "id": "fc-7"}, {}]) as fake:
        model = make(fake.base_url)
        (call,) = [e for e in ok(model) if isinstance(e, ToolCall)]
        ok(model, answer(call))
        parts = [p for c in fake.requests[1]["contents"] for p in c["parts"]]
    assert call.call_id == "fc-7"
    assert parts[2]["functionCall"]["id"] == "fc-7" and parts[3]["functionResponse"]["id"] == "fc-7"


def test_unknown_signatures_get_the_documented_placeholder_on_gemini_3() -> None:
    call = ToolCall("call_old", "read_file", {"path": "a"})
    _, contents = convert_contents(answer(call)[1:], placeholder_signatures=True)
    assert contents[1]["parts"][1]["thoughtSignature"] == UNKNOWN_SIGNATURE
    _, contents = convert_contents(answer(call)[1:])
    assert "thoughtSignature" not in contents[1]["parts"][1]


def test_usage_metadata() -> None:
    usage = {
        "promptTokenCount": 100,
        "candidatesTokenCount": 5,
        "thoughtsTokenCount": 7,
        "cachedContentTokenCount": 60,
        "totalTokenCount": 112,
    }
    with FakeGemini([{"text": "a", "usage": usage}, {"text": "b", "usage": None}]) as fake:
        first, second = ok(make(fake.base_url)), ok(make(fake.base_url))
    assert first[-1] == Finished(Usage(100, 12, 60, 112), "end_turn")
    assert second[-1] == Finished(None, "end_turn")


def test_429_waits_for_the_retry_info_delay() -> None:
    notes: list[str] = []
    with FakeGemini([{"error_status": 429, "retry_delay": "0.3s", "message": "quota"}, {}]) as fake:
        started = time.monotonic()
        ok(make(fake.base_url, notes, retry_base_delay_s=0.001))
    assert time.monotonic() - started >= 0.3
    assert "HTTP 429" in notes[0] and "quota" in notes[0] and "retrying in 0.3s" in notes[0]


def test_drops_and_error_chunks() -> None:
    with FakeGemini(
        [{"drop_after_chunks": 0}, {"error_event": "overloaded"}, {"text": "ok"}]
    ) as fake:
        assert text_of(ok(make(fake.base_url))) == "ok"
        assert len(fake.requests) == 3
    with FakeGemini([{"text": "abcdef", "drop_after_chunks": 1}, {}]) as fake:
        events, error = run(make(fake.base_url))
        assert len(fake.requests) == 1
    assert text_of(events) == "ab"
    assert error is not None and error.message == "Connection closed mid-stream"


def test_blocked_answers_are_clear_errors() -> None:
    with FakeGemini([{"block_reason": "SAFETY"}, {"text": "", "finish_reason": "SAFETY"}]) as fake:
        _, blocked = run(make(fake.base_url))
        _, stopped = run(make(fake.base_url))
        assert len(fake.requests) == 2  # neither is retried
    assert blocked is not None and blocked.message == "Gemini blocked the prompt (SAFETY)"
    assert stopped is not None and "without content (SAFETY)" in stopped.message


def test_bad_key_and_base_urls() -> None:
    with FakeGemini([], require_api_key="right") as fake:
        _, error = run(make(fake.base_url))
        assert len(fake.requests) == 1
        _, again = run(make(fake.base_url + "/v1beta"))
        assert fake.request_paths[1].startswith("/v1beta/models/fake-model:")
    assert error is not None and error.status == 400 and not error.retryable
    assert "API key not valid" in error.message and KEY not in error.message
    assert again is not None and again.status == 400


def test_models_are_listed() -> None:
    with FakeGemini([], model="gemini-test") as fake:
        model = make(fake.base_url)

        async def go() -> tuple[int, list[str]]:
            try:
                return await model.list_models()
            finally:
                await model.aclose()

        assert asyncio.run(go()) == (200, ["gemini-test"])


@given(conversations())
def test_converted_conversations_are_valid_requests(messages: list[dict[str, Any]]) -> None:
    """Contents start with the user and alternate, no part is an empty text, and every
    functionResponse names the function of the call it answers, right after it."""
    _, contents = convert_contents(messages)
    assert [c["role"] for c in contents][:1] in ([], ["user"])
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(contents))
    for position, content in enumerate(contents):
        for part in content["parts"]:
            assert part.get("text", "x").strip()
            if "functionResponse" in part:
                called = {
                    p["functionCall"]["name"]
                    for p in contents[position - 1]["parts"]
                    if "functionCall" in p
                }
                assert part["functionResponse"]["name"] in called


def test_an_answer_as_a_json_array_is_read() -> None:
    answer = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Rea"}]}}]},
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"text": "d."}, {"functionCall": {"name": "read_file"}}],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
        },
    ]
    with FakeGemini([{"raw_json": answer}, {"raw_json": [{"candidates": []}]}]) as fake:
        events = ok(make(fake.base_url))
        _, error = run(make(fake.base_url, max_retries=0))
    assert text_of(events) == "Read."
    assert [(e.name, e.args) for e in events if isinstance(e, ToolCall)] == [("read_file", {})]
    assert events[-1] == Finished(Usage(3, 2, 0, 5), "end_turn")
    assert error is not None and error.message == "Connection closed mid-stream"
