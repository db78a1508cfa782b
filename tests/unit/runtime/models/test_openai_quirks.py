"""OpenAI-compatible servers as they really behave: the quirk fixtures of ``tests/data/quirks``.

Each fixture is a whole event-stream body in the chunk shapes one server family sends (see the
README there), replayed byte for byte in 7-byte pieces by the fake server over real HTTP and
read by the real client.  Plus: servers without tool support, a server that ignores
``stream: true``, one that rejects ``stream_options``, and the opt-in text tool calls.
"""

from __future__ import annotations

from typing import Any

import pytest

from headwire.runtime.models.base import (
    Finished,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from headwire.runtime.models.openai import OpenAIModel
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import DATA
from tests.unit.runtime.models.test_openai import KEY, ok, run, text_of

QUIRKS = DATA / "quirks"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "command": {"type": "string"},
                    "timeout": {"type": "number"},
                },
            },
        },
    }
    for name in ("read_file", "run_shell_command", "list_directory")
]


def replay(
    name: str, *, parse_text: bool = False, notes: list[str] | None = None
) -> list[ModelEvent]:
    body = (QUIRKS / name).read_text(encoding="utf-8")
    with FakeOpenAI([{"raw_sse": body}]) as fake:
        model = OpenAIModel(
            fake.base_url,
            KEY,
            "fake-model",
            parse_text_tool_calls=parse_text,
            diagnostics=(notes if notes is not None else []).append,
            retry_base_delay_s=0.01,
        )
        return ok(model, ModelRequest("fake-model", [{"role": "user", "content": "hi"}], TOOLS))


def thinking_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ThinkingDelta))


def calls_of(events: list[ModelEvent]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(e.call_id, e.name, e.args) for e in events if isinstance(e, ToolCall)]


def test_every_fixture_has_a_test() -> None:
    tested = {name for name in globals() if name.startswith("test_")}
    fixtures = {p.stem.replace("-", "_") for p in QUIRKS.glob("*.sse")}
    assert {f for f in fixtures if not any(f in t for t in tested)} == set()


# -- reasoning fields ------------------------------------------------------------------------


def test_ollama_reasoning() -> None:
    events = replay("ollama-reasoning.sse")
    assert thinking_of(events) == "The user wants a greeting."
    assert text_of(events) == "Hello!"
    assert events[-1] == Finished(Usage(18, 25, 0, 43), "end_turn")


def test_llamacpp_reasoning_content() -> None:
    events = replay("llamacpp-reasoning-content.sse")
    assert thinking_of(events) == "Count to three."
    assert text_of(events) == "1, 2, 3"
    assert events[-1] == Finished(Usage(10, 12, 0, 22), "end_turn")  # usage inside the finish chunk


def test_deepseek_reasoning_cache_usage() -> None:
    events = replay("deepseek-reasoning-cache-usage.sse")
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ThinkingDelta", "TextDelta", "Finished"]
    assert thinking_of(events) == "Simple." and text_of(events) == "Yes."
    assert events[-1] == Finished(Usage(120, 9, 64, 129), "end_turn")


# -- tool-call arguments split in any way ----------------------------------------------------


def test_vllm_split_tool_arguments() -> None:
    events = replay("vllm-split-tool-arguments.sse")
    assert calls_of(events) == [
        ("chatcmpl-tool-1a2b", "read_file", {"path": "src/main.py", "limit": 20}),
        ("chatcmpl-tool-3c4d", "run_shell_command", {"command": "ls -la été"}),
    ]
    assert events[-1] == Finished(Usage(310, 41, 0, 351), "tool_use")


def test_tool_call_without_index() -> None:
    events = replay("tool-call-without-index.sse")
    assert calls_of(events) == [
        ("call_x1", "read_file", {"path": "notes.md"}),
        ("call_x2", "list_directory", {}),
    ]


def test_ollama_tool_calls_same_index() -> None:
    events = replay("ollama-tool-calls-same-index.sse")
    assert calls_of(events) == [
        ("call_a8k2", "read_file", {"path": "a.txt"}),
        ("call_q1z9", "read_file", {"path": "b.txt"}),
    ]
    assert events[-1] == Finished(None, "end_turn")  # this server sent no usage


def test_cumulative_tool_arguments() -> None:
    notes: list[str] = []
    events = replay("cumulative-tool-arguments.sse", notes=notes)
    assert calls_of(events) == [("call_cu", "read_file", {"path": "a.txt"})]
    assert notes == []  # recovered without complaint


# -- missing finish reason, no usage, framing --------------------------------------------------


def test_missing_finish_reason() -> None:
    events = replay("missing-finish-reason.sse")
    assert text_of(events) == "All good." and isinstance(events[-1], Finished)


def test_missing_finish_reason_tool_call() -> None:
    events = replay("missing-finish-reason-tool-call.sse")
    assert calls_of(events) == [("call_mlx", "list_directory", {"path": "."})]


def test_no_usage() -> None:
    events = replay("no-usage.sse")
    assert text_of(events) == "Sure." and events[-1] == Finished(None, "end_turn")


def test_raw_unicode_line_separators() -> None:
    """JSON may carry U+2028, U+2029 and U+0085 unescaped; they do not end an SSE line."""
    events = replay("raw-unicode-line-separators.sse")
    assert text_of(events) == "line one\u2028line two \u0085end\u2029\x1c."


def test_crlf_comments_batched_events() -> None:
    events = replay("crlf-comments-batched-events.sse")
    assert text_of(events) == "Hi there"


# -- tool calls written as text (opt-in) -----------------------------------------------------


def test_text_tool_call_hermes() -> None:
    plain = replay("text-tool-call-hermes.sse")
    assert calls_of(plain) == [] and "<tool_call>" in text_of(plain)  # off by default
    events = replay("text-tool-call-hermes.sse", parse_text=True)
    ((call_id, name, args),) = calls_of(events)
    assert (name, args) == ("read_file", {"path": "a.txt"}) and call_id.startswith("call_")
    assert text_of(events) == "I will read the file."
    assert events[-1] == Finished(Usage(50, 30, 0, 80), "end_turn")
    first_call = next(i for i, e in enumerate(events) if isinstance(e, ToolCall))
    assert all(isinstance(e, TextDelta) for e in events[:first_call])


def test_text_tool_call_qwen3_coder_xml() -> None:
    events = replay("text-tool-call-qwen3-coder-xml.sse", parse_text=True)
    assert [(n, a) for _, n, a in calls_of(events)] == [
        ("run_shell_command", {"command": "ls -la", "timeout": 300})
    ]
    assert text_of(events) == ""


def test_text_tool_call_json() -> None:
    events = replay("text-tool-call-json.sse", parse_text=True)
    assert [(n, a) for _, n, a in calls_of(events)] == [("read_file", {"path": "a.txt"})]
    assert text_of(events) == "Let me check."


def test_text_streams_while_no_call_is_in_sight() -> None:
    text = "plain words " * 40
    with FakeOpenAI([{"text": text}]) as fake:
        model = OpenAIModel(fake.base_url, KEY, "m", parse_text_tool_calls=True)
        events = ok(model, ModelRequest("m", [{"role": "user", "content": "hi"}], TOOLS))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert text_of(events) == text and len(deltas) >= 3  # streamed, not held to the end


def test_text_naming_no_offered_tool_stays_text() -> None:
    text = 'Use {"name": "rm_rf", "arguments": {}} carefully.'
    with FakeOpenAI([{"text": text}]) as fake:
        model = OpenAIModel(fake.base_url, KEY, "m", parse_text_tool_calls=True)
        events = ok(model, ModelRequest("m", [{"role": "user", "content": "hi"}], TOOLS))
    assert text_of(events) == text and calls_of(events) == []


# -- endpoints without tool support, odd answers -----------------------------------------------


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "registry.ollama.ai/library/gemma3:4b does not support tools"),
        (400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'),
        (500, "tools param requires --jinja flag"),
        (500, "Unsupported param: tools"),
        (404, 'No endpoints found that support tool use. Try disabling "read_file".'),
    ],
    ids=["ollama", "vllm", "llamacpp-jinja", "llamacpp-old", "openrouter"],
)
def test_a_server_without_tool_support_is_one_clear_error(status: int, message: str) -> None:
    reply = {"error_status": status, "message": message}
    with FakeOpenAI([reply, {"repeat_last": True}]) as fake:
        events, error = run(
            OpenAIModel(fake.base_url, KEY, "m", retry_base_delay_s=0.01),
            ModelRequest("m", [{"role": "user", "content": "hi"}], TOOLS),
        )
        assert len(fake.requests) == 1  # not retried, even the 500
    assert events == [] and error is not None and not error.retryable
    assert error.message.startswith("Model server does not support tool calls for m")
    assert message.split(" ")[-1] in error.message


def test_a_json_answer_instead_of_a_stream_is_read() -> None:
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Reading.",
                    "tool_calls": [
                        {
                            "id": "call_j",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "x"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
    }
    with FakeOpenAI([{"raw_json": answer}]) as fake:
        events = ok(OpenAIModel(fake.base_url, KEY, "m"))
    assert text_of(events) == "Reading."
    assert calls_of(events) == [("call_j", "read_file", {"path": "x"})]
    assert events[-1] == Finished(Usage(7, 2, 0, 9), "tool_use")


def test_a_server_rejecting_stream_options_is_asked_again_without() -> None:
    notes: list[str] = []
    message = "Unrecognized request argument supplied: stream_options"
    reply = {"error_status": 400, "message": message}
    with FakeOpenAI([reply, {"text": "ok", "usage": None}, {"text": "again"}]) as fake:
        model = OpenAIModel(fake.base_url, KEY, "m", diagnostics=notes.append)
        events = ok(model)
        second = ok(model)
        bodies = list(fake.requests)
    assert text_of(events) == "ok" and text_of(second) == "again"
    assert "stream_options" in bodies[0]
    assert "stream_options" not in bodies[1] and "stream_options" not in bodies[2]
    assert len(notes) == 1
