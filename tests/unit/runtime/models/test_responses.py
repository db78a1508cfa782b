"""The OpenAI Responses client against the scripted Responses server, over real HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

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
from headwire.runtime.models.responses import ResponsesModel, responses_input, responses_tools
from headwire.runtime.models.select import cache_key_for
from tests.fakes.fake_responses import FakeResponses
from tests.unit.runtime.models.conversations import conversations

KEY = "sk-resp-test-SECRET-0123456789"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "object"}}},
        },
    },
    {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}},
]
HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]


def make(base_url: str, **kw: Any) -> ResponsesModel:
    kw.setdefault("retry_base_delay_s", 0.01)
    kw.setdefault("diagnostics", [].append)
    return ResponsesModel(base_url, KEY, "gpt-r", **kw)


def run(
    model: ResponsesModel, messages: list[dict[str, Any]] | None = None
) -> tuple[list[ModelEvent], ModelError | None]:
    async def go() -> tuple[list[ModelEvent], ModelError | None]:
        events: list[ModelEvent] = []
        try:
            async for event in model.stream(ModelRequest("", messages or HELLO, TOOLS)):
                events.append(event)
        except ModelError as exc:
            return events, exc
        finally:
            await model.aclose()
        return events, None

    return asyncio.run(go())


def test_text_usage_and_the_request() -> None:
    with FakeResponses([{"text": "hello there"}]) as fake:
        events, error = run(make(fake.base_url, cache_key=cache_key_for("s-1")))
        body, headers = fake.requests[0], fake.request_headers[0]
    assert error is None
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello there"
    assert events[-1] == Finished(Usage(10, 5, 2, 15), "end_turn")
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"type": "message", "role": "user", "content": "hi"}]
    assert body["model"] == "gpt-r" and body["stream"] is True and body["store"] is False
    assert body["prompt_cache_key"] == cache_key_for("s-1") != cache_key_for("s-2")
    assert "s-1" not in body["prompt_cache_key"] and len(body["prompt_cache_key"]) <= 64
    assert headers["Authorization"] == f"Bearer {KEY}"
    read, ls = body["tools"]
    assert read == {
        "type": "function",
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "object", "properties": {}}},
        },
    }
    assert ls == {
        "type": "function",
        "name": "ls",
        "parameters": {"type": "object", "properties": {}},
    }
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("auto", True)
    assert "reasoning" not in body and "include" not in body


def test_reasoning_and_calls_and_the_reasoning_sent_back() -> None:
    first = {
        "thinking": "I should look",
        "tools": [{"name": "ls", "args": {}}, {"name": "read_file", "args": {"path": "a"}}],
    }
    with FakeResponses([first, {"text": "done"}]) as fake:
        model = make(
            fake.base_url,
            reasoning={"effort": "low"},
            sampling_params={"temperature": 0.2, "max_tokens": 300, "seed": 3},
            extra_body={"service_tier": "flex"},
        )

        async def go() -> tuple[list[ModelEvent], list[ModelEvent]]:
            one = [e async for e in model.stream(ModelRequest("", HELLO, TOOLS))]
            calls = [e for e in one if isinstance(e, ToolCall)]
            turn = [
                *HELLO,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": c.call_id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.args)},
                        }
                        for c in calls
                    ],
                },
                *({"role": "tool", "tool_call_id": c.call_id, "content": "ok"} for c in calls),
            ]
            two = [e async for e in model.stream(ModelRequest("", turn, TOOLS))]
            await model.aclose()
            return one, two

        one, two = asyncio.run(go())
        first_body, second_body = fake.requests
    thinking = [e.text for e in one if isinstance(e, ThinkingDelta)]
    assert len(thinking) == 2 and "".join(thinking) == "I should look"
    assert [e for e in one if isinstance(e, ToolCall)] == [
        ToolCall("call_1_0", "ls", {}),
        ToolCall("call_1_1", "read_file", {"path": "a"}),
    ]
    assert isinstance(one[-1], Finished) and one[-1].stop_reason == "tool_use"
    assert first_body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert first_body["include"] == ["reasoning.encrypted_content"]
    assert (first_body["temperature"], first_body["max_output_tokens"]) == (0.2, 300)
    assert "seed" not in first_body and first_body["service_tier"] == "flex"
    assert [i["type"] for i in second_body["input"]] == [
        "message",
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    reasoning = second_body["input"][1]
    assert reasoning["encrypted_content"] == "enc-1" and reasoning["id"] == "rs_1"
    assert second_body["input"][3]["arguments"] == '{"path": "a"}'
    assert "".join(e.text for e in two if isinstance(e, TextDelta)) == "done"


def test_refused_reasoning_is_dropped_and_the_request_sent_again() -> None:
    call = {"thinking": "hm", "tool": "ls", "args": {}}
    refusal = {"error_status": 400, "message": "The encrypted content could not be verified."}
    with FakeResponses([call, refusal, {"text": "done"}, {"error_status": 400}]) as fake:
        notes: list[str] = []
        model = make(fake.base_url, reasoning={"effort": "low"}, diagnostics=notes.append)

        async def go() -> tuple[list[ModelEvent], ModelError | None]:
            one = [e async for e in model.stream(ModelRequest("", HELLO, TOOLS))]
            (tool,) = [e for e in one if isinstance(e, ToolCall)]
            turn = [
                *HELLO,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": tool.call_id, "function": {"name": "ls", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": tool.call_id, "content": "a b"},
            ]
            two = [e async for e in model.stream(ModelRequest("", turn, TOOLS))]
            try:  # a 400 with nothing to drop is the error it is
                [e async for e in model.stream(ModelRequest("", turn, TOOLS))]
            except ModelError as error:
                return two, error
            finally:
                await model.aclose()
            return two, None

        two, error = asyncio.run(go())
        kinds = [[i["type"] for i in r["input"]] for r in fake.requests[1:]]
    assert "".join(e.text for e in two if isinstance(e, TextDelta)) == "done"
    assert kinds[0] == ["message", "reasoning", "function_call", "function_call_output"]
    assert kinds[1] == kinds[2] == ["message", "function_call", "function_call_output"]
    assert error is not None and error.status == 400
    assert any("refused the reasoning" in n for n in notes)


def test_incomplete_failed_and_refused_answers() -> None:
    with FakeResponses(
        [
            {"text": "cut", "incomplete": "max_output_tokens"},
            {"text": "no", "incomplete": "content_filter"},
            {"failed": "the model is overloaded"},
            {"error_status": 400, "message": "bad input"},
        ]
    ) as fake:
        cut, _ = run(make(fake.base_url))
        filtered, _ = run(make(fake.base_url))
        _, failed = run(make(fake.base_url, max_retries=0))
        _, refused = run(make(fake.base_url))
    assert isinstance(cut[-1], Finished) and cut[-1].stop_reason == "max_tokens"
    assert isinstance(filtered[-1], Finished) and filtered[-1].stop_reason == "refusal"
    assert failed is not None and "the model is overloaded" in failed.message
    assert refused is not None and refused.status == 400 and "bad input" in refused.message


def test_a_gateway_that_ignores_stream_is_read_whole() -> None:
    model = make("http://127.0.0.1:9/v1")
    body = {
        "status": "completed",
        "output": [
            {"type": "reasoning", "summary": [{"text": "hm"}], "encrypted_content": "e", "id": "r"},
            {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        ],
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    events = model._decode_json(
        json.dumps(body).encode(), model._prepare(ModelRequest("", HELLO, []))
    )
    assert events == [
        ThinkingDelta("hm"),
        TextDelta("hi"),
        ToolCall("c1", "ls", {}),
        Finished(Usage(3, 1, 0, 4), "tool_use"),
    ]


@given(conversations())
def test_converted_conversations_are_valid_input(messages: list[dict[str, Any]]) -> None:
    """The conversion's promises: system text only in the instructions, every call answered
    by one output right after its turn's calls and every output by a call before it, no empty
    message, arguments as JSON text."""
    instructions, items = responses_input(messages, {})
    systems = [m["content"] for m in messages if m["role"] == "system" and m["content"]]
    assert instructions == "\n".join(systems)
    seen: set[str] = set()
    for item in items:
        if item["type"] == "function_call":
            assert isinstance(json.loads(item["arguments"]), dict)
            seen.add(item["call_id"])
        elif item["type"] == "function_call_output":
            assert item["call_id"] in seen
        else:
            assert item["type"] == "message" and item["content"]
    calls = [i["call_id"] for i in items if i["type"] == "function_call"]
    outputs = [i["call_id"] for i in items if i["type"] == "function_call_output"]
    assert sorted(calls) == sorted(outputs)


def test_tools_without_a_name_are_left_out() -> None:
    assert responses_tools([{"type": "function", "function": {"description": "x"}}]) == []


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_KINDS = st.sampled_from(
    [
        "response.output_text.delta",
        "response.reasoning_summary_text.delta",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.output_item.done",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "error",
        "response.created",
    ]
)
_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "delta": _JSON,
        "output_index": _JSON,
        "item": st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["function_call", "reasoning", "message"]) | _JSON,
                "name": _JSON,
                "call_id": _JSON,
                "arguments": _JSON,
                "encrypted_content": _JSON,
                "summary": _JSON,
                "content": _JSON,
            },
        ),
        "response": _JSON,
        "error": _JSON,
    },
)


@given(st.lists(st.tuples(_KINDS, _FIELDS), max_size=8))
def test_any_events_decode_or_fail_as_a_model_error(events: list[tuple[str, Any]]) -> None:
    """Whatever a server streams, in any order and shape, the decoder yields model events or
    raises a model error (retried or not), never anything else; the same for a whole answer."""
    from headwire.errors import ModelServerError
    from headwire.runtime.models.responses import _State

    model = make("http://127.0.0.1:9/v1")
    state = _State()
    try:
        for kind, data in events:
            for event in model._apply(state, kind, dict(data)):
                assert isinstance(event, TextDelta | ThinkingDelta)
        finished = model._finish(state)
        assert isinstance(finished[-1], Finished)
        assert all(isinstance(e, ToolCall) for e in finished[:-1])
    except ModelServerError:
        pass
    body = {"status": "completed", "output": [d.get("item", d) for _, d in events]}
    prepared = model._prepare(ModelRequest("", HELLO, []))
    try:
        whole = model._decode_json(json.dumps(body).encode(), prepared)
        assert isinstance(whole[-1], Finished)
    except ModelServerError:
        pass
