"""The OpenAI-compatible client against the scripted fake server, over real HTTP (no mocks)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
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
from headwire.runtime.models.openai import (
    DEFAULT_BASE_URL,
    OpenAIConfigError,
    OpenAIModel,
    resolve_openai_config,
)
from tests.fakes.fake_openai import FakeOpenAI, Script, ScriptError, build_events
from tests.paths import ROOT

KEY = "sk-test-SECRET-0123456789"
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def request(tools: list[dict[str, Any]] | None = None) -> ModelRequest:
    return ModelRequest("fake-model", [{"role": "user", "content": "hi"}], tools or [])


def make_model(base_url: str, notes: list[str] | None = None, **kwargs: Any) -> OpenAIModel:
    kwargs.setdefault("retry_base_delay_s", 0.01)
    sink = notes if notes is not None else []
    return OpenAIModel(base_url, KEY, "fake-model", diagnostics=sink.append, **kwargs)


def run(
    model: OpenAIModel, req: ModelRequest | None = None
) -> tuple[list[ModelEvent], ModelError | None]:
    """All events of one call, and the error that ended it (if any)."""

    async def go() -> tuple[list[ModelEvent], ModelError | None]:
        events: list[ModelEvent] = []
        try:
            async for event in model.stream(req or request()):
                events.append(event)
        except ModelError as exc:
            return events, exc
        finally:
            await model.aclose()
        return events, None

    return asyncio.run(go())


def ok(model: OpenAIModel, req: ModelRequest | None = None) -> list[ModelEvent]:
    events, error = run(model, req)
    assert error is None, error.message
    assert isinstance(events[-1], Finished)
    assert sum(isinstance(e, Finished) for e in events) == 1
    return events


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- happy paths ---------------------------------------------------------------------------


def test_text_streams_in_several_deltas_and_request_shape() -> None:
    with FakeOpenAI([{"text": "hello there, world"}]) as fake:
        events = ok(make_model(fake.base_url + "/"))  # trailing slash is stripped
        body = fake.requests[0]
        headers = fake.request_headers[0]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert text_of(events) == "hello there, world"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "fake-model"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in body  # an empty tools list is not sent
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert fake.log[0]["roles"] == ["user"]


def test_usage_from_final_chunk() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "total_tokens": 105,
        "prompt_tokens_details": {"cached_tokens": 40},
    }
    with FakeOpenAI(
        [{"text": "a"}, {"text": "b", "usage": usage}, {"text": "c", "usage": None}]
    ) as f:
        first, second, third = (ok(make_model(f.base_url)) for _ in range(3))
    assert first[-1] == Finished(Usage(11, 3, 0, 14), "end_turn")
    assert second[-1] == Finished(Usage(100, 5, 40, 105), "end_turn")
    assert third[-1] == Finished(None, "end_turn")


def test_tool_call_with_fragmented_arguments() -> None:
    args = {"path": "/tmp/some/long/path/name.txt", "offset": 10, "nested": {"a": [1, 2, "x"]}}
    reply = {"tool": "read_file", "args": args, "id": "call_abc"}
    fragments = [e for e in build_events(reply, 1, "m") if b'"arguments"' in e]
    assert len(fragments) >= 4  # the header chunk plus several argument pieces
    with FakeOpenAI([reply]) as fake:
        events = ok(make_model(fake.base_url), request(TOOLS))
        assert fake.requests[0]["tools"] == TOOLS
    assert events == [
        ToolCall("call_abc", "read_file", args),
        Finished(Usage(11, 3, 0, 14), "tool_use"),
    ]


def test_text_then_several_tool_calls_in_index_order() -> None:
    reply = {
        "text": "Let me look.",
        "tools": [
            {"name": "read_file", "args": {"path": "a"}},
            {"name": "run_shell_command", "args": {"command": "ls -la"}},
            {"name": "list_directory", "args": {}},
        ],
    }
    with FakeOpenAI([reply]) as fake:
        events = ok(make_model(fake.base_url), request(TOOLS))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert text_of(events) == "Let me look."
    assert [(c.name, c.args) for c in calls] == [
        ("read_file", {"path": "a"}),
        ("run_shell_command", {"command": "ls -la"}),
        ("list_directory", {}),
    ]
    assert len({c.call_id for c in calls}) == 3
    first_call = next(i for i, e in enumerate(events) if isinstance(e, ToolCall))
    assert all(isinstance(e, TextDelta) for e in events[:first_call])


def test_invalid_tool_arguments_become_empty_with_a_note() -> None:
    notes: list[str] = []
    with FakeOpenAI([{"tool": "read_file", "args": '{"path": "a"'}]) as fake:
        events = ok(make_model(fake.base_url, notes))
    assert events[0] == ToolCall("call_fake_1_0", "read_file", {})
    assert any("not a JSON object" in n for n in notes)


def test_reasoning_becomes_thinking_before_text() -> None:
    with FakeOpenAI([{"thinking": "The user greets me.", "text": "Hello!"}]) as fake:
        events = ok(make_model(fake.base_url))
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("TextDelta") > kinds.index("ThinkingDelta")
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "The user greets me."
    assert text_of(events) == "Hello!"


# -- retries -------------------------------------------------------------------------------


def test_500_then_success_is_retried() -> None:
    notes: list[str] = []
    with FakeOpenAI([{"error_status": 500, "message": "overloaded"}, {"text": "ok"}]) as fake:
        events = ok(make_model(fake.base_url, notes))
        assert len(fake.requests) == 2
    assert text_of(events) == "ok"
    assert len(notes) == 1 and "HTTP 500" in notes[0] and "retrying" in notes[0]


def test_5xx_exhausting_retries_is_a_retryable_error() -> None:
    with FakeOpenAI([{"error_status": 503, "message": "busy"}, {"repeat_last": True}]) as fake:
        events, error = run(make_model(fake.base_url, max_retries=2))
        assert len(fake.requests) == 3
    assert events == []
    assert error is not None and error.status == 503 and error.retryable
    assert "busy" in error.message


def test_429_honours_small_retry_after() -> None:
    with FakeOpenAI([{"error_status": 429, "retry_after": "0.3"}, {"text": "ok"}]) as fake:
        start = time.monotonic()
        events = ok(make_model(fake.base_url, retry_base_delay_s=0.001))
        elapsed = time.monotonic() - start
    assert text_of(events) == "ok"
    assert elapsed >= 0.3


def test_429_with_huge_retry_after_falls_back_to_backoff() -> None:
    with FakeOpenAI([{"error_status": 429, "retry_after": "3600"}, {"text": "ok"}]) as fake:
        start = time.monotonic()
        events = ok(make_model(fake.base_url, retry_base_delay_s=0.001))
    assert text_of(events) == "ok" and time.monotonic() - start < 5


def test_400_is_not_retried_and_carries_the_server_message() -> None:
    message = "Invalid schema for function 'read_file'"
    with FakeOpenAI([{"error_status": 400, "message": message}, {"text": "never"}]) as fake:
        events, error = run(make_model(fake.base_url))
        assert len(fake.requests) == 1
    assert events == []
    assert error is not None and error.status == 400 and not error.retryable
    assert error.message == f"Model server returned HTTP 400 Bad Request: {message}"


def test_non_json_error_body_is_quoted() -> None:
    with FakeOpenAI([{"error_status": 404, "error_body": "<html>no such route</html>"}]) as fake:
        _, error = run(make_model(fake.base_url))
    assert error is not None and error.status == 404
    assert "<html>no such route</html>" in error.message


# -- broken streams ------------------------------------------------------------------------


@pytest.mark.parametrize("clean_close", [False, True])
def test_drop_after_text_raises_instead_of_truncating(clean_close: bool) -> None:
    reply = {"text": "abcdefghi", "drop_after_chunks": 3, "clean_close": clean_close}
    with FakeOpenAI([reply, {"text": "must not be fetched"}]) as fake:
        events, error = run(make_model(fake.base_url))
        assert len(fake.requests) == 1  # text was already yielded: no retry
    assert text_of(events) == "abcdef"
    assert not any(isinstance(e, Finished) for e in events)
    assert error is not None and error.message == "Connection closed mid-stream"


def test_drop_before_any_event_is_retried() -> None:
    with FakeOpenAI([{"text": "lost", "drop_after_chunks": 1}, {"text": "ok"}]) as fake:
        events = ok(make_model(fake.base_url))
        assert len(fake.requests) == 2
    assert text_of(events) == "ok"


def test_drop_of_tool_call_arguments_yields_no_call() -> None:
    reply = {"tool": "read_file", "args": {"path": "abcdefgh"}, "drop_after_chunks": 3}
    with FakeOpenAI([reply, {"repeat_last": True}]) as fake:
        events, error = run(make_model(fake.base_url, max_retries=1))
        assert len(fake.requests) == 2  # nothing was yielded, so it was retried once
    assert events == []
    assert error is not None and error.message == "Connection closed mid-stream"


def test_malformed_sse_data() -> None:
    with FakeOpenAI([{"malformed": True}, {"text": "never"}]) as fake:
        events, error = run(make_model(fake.base_url))
        assert len(fake.requests) == 1
    assert events == []
    assert error is not None and error.message.startswith("Malformed streaming response: ")
    assert "this is not JSON" in error.message


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    notes: list[str] = []
    start = time.monotonic()
    events, error = run(make_model(url, notes, max_retries=2))
    assert time.monotonic() - start < 5
    assert events == []
    assert error is not None and error.retryable
    assert error.message.startswith(f"Cannot reach model server at {url}: ")
    assert len(notes) == 2
    assert KEY not in error.message and not any(KEY in n for n in notes)


def test_read_timeout_is_reported() -> None:
    with FakeOpenAI([{"text": "slow", "delay_s": 1.0}]) as fake:
        _, error = run(make_model(fake.base_url, timeout_s=0.2, max_retries=0))
    assert error is not None and "timed out" in error.message


# -- credentials and configuration ----------------------------------------------------------


def test_api_key_is_sent_but_never_echoed_in_errors() -> None:
    with FakeOpenAI([{"text": "ok"}], require_api_key="sk-the-right-one") as fake:
        events, error = run(make_model(fake.base_url, extra_headers={"X-Trace": "t1"}))
        sent = fake.request_headers[0]
    assert events == []
    assert sent["Authorization"] == f"Bearer {KEY}"
    assert sent["X-Trace"] == "t1"
    assert error is not None and error.status == 401 and not error.retryable
    assert "Incorrect API key provided" in error.message
    assert KEY not in error.message and "***" in error.message
    assert KEY not in repr(make_model(fake.base_url))


def test_right_api_key_passes() -> None:
    with FakeOpenAI([{"text": "ok"}], require_api_key=KEY) as fake:
        assert text_of(ok(make_model(fake.base_url))) == "ok"


def test_no_api_key_sends_no_authorization() -> None:
    with FakeOpenAI([{"text": "ok"}]) as fake:
        ok(OpenAIModel(fake.base_url, None, "fake-model"))
        assert "Authorization" not in fake.request_headers[0]


def test_resolve_openai_config() -> None:
    env = {
        "OPENAI_BASE_URL": "http://env:1/v1/",
        "OPENAI_API_KEY": "k-env",
        "OPENAI_MODEL": "m-env",
    }
    assert resolve_openai_config(env, None, None, None) == ("http://env:1/v1", "k-env", "m-env")
    assert resolve_openai_config(env, "http://flag/v1", "k-flag", "m-flag") == (
        "http://flag/v1",
        "k-flag",
        "m-flag",
    )
    assert resolve_openai_config({"OPENAI_MODEL": "m"}, None, "", None) == (
        DEFAULT_BASE_URL,
        None,
        "m",
    )
    with pytest.raises(OpenAIConfigError, match="OPENAI_MODEL"):
        resolve_openai_config({"OPENAI_MODEL": ""}, None, None, None)
    with pytest.raises(OpenAIConfigError, match="http"):
        resolve_openai_config({}, "ftp://x", None, "m")


# -- the fake itself -------------------------------------------------------------------------


def test_script_defaults_and_validation() -> None:
    script = Script([{"text": "a"}, {"text": "b"}, {"repeat_last": True}])
    assert [script.next()[1]["text"] for _ in range(4)] == ["a", "b", "b", "b"]
    assert Script([]).next() == (-1, {"text": "done"})
    assert Script({"replies": [], "default": {"text": "bye"}}).next() == (-1, {"text": "bye"})
    with pytest.raises(ScriptError, match="unknown keys"):
        Script([{"txt": "typo"}])


def test_fake_as_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool": "read_file", "args": {"path": "x"}}]))
    port_file, log = tmp_path / "port", tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.fake_openai",
            "--script",
            str(script),
            "--port-file",
            str(port_file),
            "--log",
            str(log),
            "--model",
            "sub-model",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        assert int(port_file.read_text()) == port
        base_url = f"http://127.0.0.1:{port}/v1"
        models = httpx.get(f"{base_url}/models").json()
        assert models["data"][0]["id"] == "sub-model"
        first = ok(make_model(base_url))
        second = ok(make_model(base_url))
    finally:
        proc.terminate()
        assert proc.wait(timeout=5) == 0
    assert first[0] == ToolCall("call_fake_1_0", "read_file", {"path": "x"})
    assert text_of(second) == "done"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["method"] for e in entries] == ["GET", "POST", "POST"]
    assert entries[1]["reply_index"] == 0 and entries[2]["reply_index"] == -1


@given(
    st.lists(
        st.dictionaries(
            st.text(max_size=5),
            st.one_of(
                st.integers(-(2**53), 2**53),
                st.text(max_size=8),
                st.lists(st.booleans(), max_size=2),
            ),
            max_size=3,
        ),
        min_size=1,
        max_size=3,
    ),
    st.booleans(),
    st.data(),
)
def test_tool_call_fragments_split_anywhere_reassemble(
    calls: list[dict[str, Any]], with_index: bool, data: st.DataObject
) -> None:
    """Arguments split at any points, with or without ``index``, give back each call whole."""
    from headwire.runtime.models.openai_calls import CallSlots, call_arguments, merge_call

    state = CallSlots()
    for number, args in enumerate(calls):
        raw = json.dumps(args)
        cuts = sorted(set(data.draw(st.lists(st.integers(0, len(raw)), max_size=5))))
        pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
        head: dict[str, Any] = {"id": f"call_{number}", "function": {"name": "read_file"}}
        for position, piece in enumerate(pieces):
            fragment: dict[str, Any] = head if position == 0 else {}
            fragment = {
                **fragment,
                "function": {**fragment.get("function", {}), "arguments": piece},
            }
            if with_index:
                fragment["index"] = number
            merge_call(state, fragment)
    assert [c.call_id for c in state.calls] == [f"call_{n}" for n in range(len(calls))]
    assert [call_arguments(c.arguments) for c in state.calls] == calls


def test_a_key_holding_a_newline_is_refused_unsent_and_unquoted() -> None:
    """A key pasted with a line break cannot become a second header: nothing is sent, nothing
    is retried, and the error does not quote the key."""
    secret = "sk-pasted-with-a-break\nX-Injected: 1"
    notes: list[str] = []
    with FakeOpenAI([{"text": "never"}]) as fake:
        model = OpenAIModel(fake.base_url, secret, "fake-model", diagnostics=notes.append)
        events, error = run(model)
        assert fake.requests == []
    assert events == [] and notes == []
    assert error is not None and not error.retryable
    assert "not sent" in error.message and "sk-pasted" not in error.message
