"""OpenAI-compatible chat-completions client (streaming), robust to how servers really behave.

On the wire: ``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>`` and the
JSON body ``{"model", "messages", "tools"?, "stream": true, "stream_options":
{"include_usage": true}}``.  The server answers with Server-Sent Events, one ``data: <chunk>``
event per ``chat.completion.chunk`` and a final ``data: [DONE]``.  From the chunks of choice 0:

* ``delta.content`` becomes :class:`TextDelta` (yielded as it arrives);
* ``delta.reasoning_content`` (vLLM, llama.cpp, DeepSeek) or ``delta.reasoning`` (Ollama,
  OpenRouter) becomes :class:`ThinkingDelta`;
* ``delta.tool_calls[i]`` fragments are accumulated and yielded as :class:`ToolCall` events,
  in order of first appearance, once the stream has ended.  Fragments are matched by ``index``;
  without one, a new ``id`` opens a call and anything else continues the last one; a new
  ``id`` on an index already holding another call opens a new call.  The name may come whole,
  repeated, split or cumulative; the arguments split anywhere, as an object, or repeated whole;
* ``usage`` (in a last chunk with ``choices: []``, or in the chunk of the finish reason)
  becomes the :class:`Finished` usage; a server that sends none gives ``Finished(None)``.

A missing ``finish_reason`` is fine when ``[DONE]`` arrives.  A stream that ends with neither
is a dropped connection (see :mod:`headwire.runtime.models.http_base` for retries).  A server
that answers with one ``chat.completion`` JSON document instead of a stream is read as one.
A server rejecting ``stream_options`` is asked once more without it (and reports no usage).

Tool-call arguments that are not a JSON object become ``{}`` with a one-line note on stderr:
the tool then reports its missing parameters to the model, which can retry.

``parse_text_tool_calls`` (off by default) also reads tool calls the model wrote as text
(:mod:`headwire.runtime.models.text_tools`) when the answer has no structured ones.  A server
that refuses tools (Ollama's "does not support tools", vLLM without a tool parser, llama.cpp
without ``--jinja``) is a clear, non-retried error naming the cause.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson

from headwire.errors import ConfigError
from headwire.records import dataclass, field
from headwire.runtime.http_body import Answer
from headwire.runtime.models.base import (
    Finished,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
    error_message,
    stop_reason_of,
)
from headwire.runtime.models.generation import check_body_keys
from headwire.runtime.models.http_base import (
    Prepared,
    StreamingHttpModel,
    Transient,
    display_url,
    error_field_text,
    error_text,
)
from headwire.runtime.models.openai_calls import (
    CallSlots,
    call_arguments,
    chat_usage,
    merge_call,
)
from headwire.runtime.models.reasoning import Reasoning, openai_keys
from headwire.runtime.models.sse import sse_events
from headwire.wire import dumps, loads

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where requests go when neither ``--openai-base-url`` nor ``OPENAI_BASE_URL`` is given."""

_NO_TOOL_SUPPORT = (
    r"(?:does not|doesn't|do not) support tools|not support(?:ed)? (?:for )?tool|"
    r"tools? (?:param|parameter)s? requires?|tool choice requires|"
    r"unsupported param(?:eter)?:? ?['\"]?tools|no endpoints found that support tool"
)
"""Error texts of servers that cannot take ``tools`` (Ollama, vLLM, llama.cpp, OpenRouter):
searched with ``re``'s cache (compiled at the first error, not at every start)."""


class OpenAIConfigError(ConfigError):
    """The OpenAI provider settings are incomplete or invalid; ``str()`` is the user message."""


def resolve_openai_config(
    env: Mapping[str, str],
    base_url_flag: str | None,
    api_key_flag: str | None,
    model_flag: str | None,
) -> tuple[str, str | None, str]:
    """Return ``(base_url, api_key, model)``: flags win over ``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY`` and ``OPENAI_MODEL``; empty values count as unset.

    ``base_url`` defaults to :data:`DEFAULT_BASE_URL` and loses a trailing slash; ``api_key``
    may be ``None`` (local servers often need none); a missing model raises
    :class:`OpenAIConfigError`.
    """

    def pick(flag: str | None, var: str) -> str | None:
        for value in (flag, env.get(var)):
            if value is not None and value.strip():
                return value.strip()
        return None

    base_url = (pick(base_url_flag, "OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    if urlsplit(base_url).scheme not in ("http", "https"):
        raise OpenAIConfigError(
            f"Invalid OpenAI base URL {display_url(base_url)!r}: it must start with http:// or https://"
        )
    model = pick(model_flag, "OPENAI_MODEL")
    if model is None:
        raise OpenAIConfigError("No model given: pass --model or set OPENAI_MODEL")
    return base_url, pick(api_key_flag, "OPENAI_API_KEY"), model


@dataclass(slots=True)
class _StreamState(CallSlots):
    """What one streamed answer has accumulated so far."""

    finish_reason: str | None = None
    usage: Usage | None = None
    unsent: str = ""
    held: list[str] = field(default_factory=list)


class OpenAIModel(StreamingHttpModel):
    """A :class:`~headwire.runtime.models.base.Model` speaking OpenAI chat completions."""

    provider = "openai"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        parse_text_tool_calls: bool = False,
        timeout_s: float = 120,
        max_retries: int = 3,
        extra_headers: dict[str, str] | None = None,
        retry_base_delay_s: float = 0.5,
        max_retry_after_s: float = 60.0,
        diagnostics: Callable[[str], None] | None = None,
        stream_idle_timeout_s: float | None = None,
        max_retry_delay_s: float | None = None,
        session_id: str | None = None,
        sampling_params: Mapping[str, Any] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        reasoning: Reasoning = None,
        tool_result_format: str | None = None,
    ) -> None:
        super().__init__(
            base_url,
            api_key,
            model,
            timeout_s=timeout_s,
            max_retries=max_retries,
            extra_headers=extra_headers,
            retry_base_delay_s=retry_base_delay_s,
            max_retry_after_s=max_retry_after_s,
            diagnostics=diagnostics,
            stream_idle_timeout_s=stream_idle_timeout_s,
            max_retry_delay_s=max_retry_delay_s,
            session_id=session_id,
        )
        self.parse_text_tool_calls = parse_text_tool_calls
        self.sampling_params = dict(sampling_params or {})
        """Body keys from ``model.generationConfig.samplingParams``, sent as they are."""
        self.extra_body = dict(extra_body or {})
        """Body keys from ``model.generationConfig.extra_body``, sent after the sampling ones."""
        check_body_keys("sampling_params", self.sampling_params)
        check_body_keys("extra_body", self.extra_body)
        self.reasoning = reasoning
        """``generationConfig.reasoning``, sent in this server's form (``openai_keys``)."""
        self.tool_parts = tool_result_format == "parts"
        """``toolResultContentFormat: "parts"``: a tool message's text as one text part."""
        self._include_usage = True
        self._url = f"{self.base_url}/chat/completions"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Run one chat completion, yielding deltas, then tool calls, then one ``Finished``.

        The body's ``model`` is ``request.model``, or this provider's ``name`` when that is empty;
        ``tools`` is left out when the request offers none (some servers reject ``[]``).
        """
        yielded = False
        try:
            async for event in super().stream(request):
                yielded = True
                yield event
        except ModelError as error:
            rejected = error.status == 400 and re.search(
                "stream_options", error.message, re.IGNORECASE
            )
            if yielded or not self._include_usage or not rejected:
                raise
            self._include_usage = False
            self._note("the server rejects stream_options; asking again without usage")
            async for event in super().stream(request):
                yield event

    # -- request ---------------------------------------------------------------------------

    def _prepare(self, request: ModelRequest) -> Prepared:
        messages = request.messages
        if self.tool_parts:
            messages = [_as_parts(m) if m.get("role") == "tool" else m for m in messages]
        body: dict[str, Any] = {
            "model": request.model or self.name,
            "messages": messages,
            **self.sampling_params,
            "stream": True,
        }
        if self._include_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = request.tools
        thinking = openai_keys(self.reasoning, body["model"], self.base_url, self.sampling_params)
        for key, value in thinking.items():
            body.setdefault(key, value)  # a sampling key of the same name wins
        body.update(self.extra_body)  # neither holds a key written above (check_body_keys)
        tools = {
            str(t["function"]["name"]): t["function"].get("parameters") or {}
            for t in request.tools
            if isinstance(t.get("function"), dict) and t["function"].get("name")
        }
        return _OpenAIPrepared(self._url, dumps(body), self._headers(), bool(request.tools), tools)

    def _status_message(self, status: int, reason: str, body: bytes, prepared: Prepared) -> str:
        text = error_text(body)
        if prepared.has_tools and re.search(_NO_TOOL_SUPPORT, text, re.IGNORECASE):
            return (
                f"Model server does not support tool calls for {self.name} "
                f"(HTTP {status}: {error_message(text, 200)}); use a model and server with "
                "tool support, "
                "see 'headwire doctor'"
            )
        return f"Model server returned HTTP {status}{reason}: {text}"

    def _is_retryable_status(self, status: int, body: bytes, prepared: Prepared) -> bool:
        if prepared.has_tools and re.search(_NO_TOOL_SUPPORT, error_text(body), re.IGNORECASE):
            return False  # llama.cpp answers 500 for "tools param requires --jinja flag"
        return super()._is_retryable_status(status, body, prepared)

    # -- streamed answer -------------------------------------------------------------------

    async def _decode(self, response: Answer, prepared: Prepared) -> AsyncIterator[ModelEvent]:
        """Decode the SSE body into events; the end of the stream settles the tool calls."""
        state = _StreamState()
        done = False
        async for event in sse_events(response):
            if self._is_done(event.data):
                done = True
                break
            for model_event in self._feed(state, event.data, prepared):
                yield model_event
        if not done and state.finish_reason is None:
            raise self.dropped()
        for model_event in self._settle(state, prepared):
            yield model_event

    def _decode_json(self, body: bytes, prepared: Prepared) -> list[ModelEvent]:
        """A ``chat.completion`` document (a server that ignored ``stream``)."""
        try:
            data = loads(body)
        except orjson.JSONDecodeError:
            data = None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(choices, list):
            return super()._decode_json(body, prepared)
        state = _StreamState()
        events: list[ModelEvent] = []
        chunk = {**data, "choices": []}
        for choice in choices:
            if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                message = dict(choice["message"])
                calls = message.get("tool_calls")
                if isinstance(calls, list):
                    message["tool_calls"] = [
                        {**c, "index": c.get("index", i)} if isinstance(c, dict) else c
                        for i, c in enumerate(calls)
                    ]
                chunk["choices"].append({**choice, "delta": message})
        events += self._apply_chunk(state, chunk, prepared)
        state.finish_reason = state.finish_reason or "stop"
        return events + self._settle(state, prepared)

    @staticmethod
    def _is_done(data_lines: list[str]) -> bool:
        return len(data_lines) == 1 and data_lines[0].strip() == "[DONE]"

    def _feed(
        self, state: _StreamState, data_lines: list[str], prepared: Prepared
    ) -> list[ModelEvent]:
        """Apply one SSE event (its ``data`` lines) to ``state``; return the deltas to yield."""
        chunks: list[Any] = []
        try:
            chunks.append(loads("\n".join(data_lines)))
        except orjson.JSONDecodeError:
            if len(data_lines) == 1:
                raise self.malformed(data_lines[0]) from None
            # Leniency for servers that put several chunks in one event without blank lines.
            for line in data_lines:
                if line.strip() == "[DONE]":
                    continue
                try:
                    chunks.append(loads(line))
                except orjson.JSONDecodeError:
                    raise self.malformed(line) from None
        events: list[ModelEvent] = []
        for chunk in chunks:
            events += self._apply_chunk(state, chunk, prepared)
        return events

    def _apply_chunk(self, state: _StreamState, chunk: Any, prepared: Prepared) -> list[ModelEvent]:
        if not isinstance(chunk, dict):
            raise self.malformed(dumps(chunk).decode())
        error = chunk.get("error")
        if error:
            raise Transient(
                self._error(
                    f"Model server reported an error mid-stream: {error_field_text(error)}",
                    retryable=True,
                )
            )
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            state.usage = chat_usage(usage)
        events: list[ModelEvent] = []
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    events.append(ThinkingDelta(reasoning))
                content = delta.get("content")
                if isinstance(content, str) and content:
                    events += self._text(state, content, prepared)
                tool_calls = delta.get("tool_calls")
                for fragment in tool_calls if isinstance(tool_calls, list) else []:
                    if isinstance(fragment, dict):
                        merge_call(state, fragment)
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                state.finish_reason = finish
        return events

    def _text(self, state: _StreamState, content: str, prepared: Prepared) -> list[ModelEvent]:
        """Text to show now; with text tool calls on, what may start a call is held back."""
        if not self._parses_text(prepared):
            return [TextDelta(content)]
        if state.held:
            state.held.append(content)
            return []
        from headwire.runtime.models.text_tools import marker_start, safe_prefix_length

        pending = state.unsent + content  # (text tool calls are off by default: loaded here)
        start = marker_start(pending)
        if start is not None:
            shown = len(pending[:start].rstrip())  # the whitespace before a call goes with it
            state.unsent, state.held = "", [pending[shown:]]
            return [TextDelta(pending[:shown])] if shown else []
        cut = safe_prefix_length(pending)
        state.unsent = pending[cut:]
        return [TextDelta(pending[:cut])] if cut else []

    def _parses_text(self, prepared: Prepared) -> bool:
        return (
            self.parse_text_tool_calls
            and isinstance(prepared, _OpenAIPrepared)
            and bool(prepared.tools)
        )

    def _settle(self, state: _StreamState, prepared: Prepared) -> list[ModelEvent]:
        """The held-back text, the tool calls, then ``Finished``."""
        events: list[ModelEvent] = []
        calls = self._settle_calls(state)
        held = state.unsent + "".join(state.held)
        if held and not calls and state.held and isinstance(prepared, _OpenAIPrepared):
            from headwire.runtime.models.text_tools import extract_text_tool_calls

            text, found = extract_text_tool_calls(held, prepared.tools)
            if found:
                held = text
                calls = [
                    ToolCall(f"call_{uuid.uuid4().hex[:24]}", call.name, call.args)
                    for call in found
                ]
        if held:
            events.append(TextDelta(held))
        return [*events, *calls, Finished(state.usage, stop_reason_of(state.finish_reason))]

    def _settle_calls(self, state: _StreamState) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for number, partial in enumerate(state.calls):
            if not partial.name:
                raise self._error(f"Malformed streaming response: tool call {number} has no name")
            args = call_arguments(partial.arguments)
            if args is None:
                raw = "".join(partial.arguments).strip()
                self._note(
                    f"tool call {partial.name!r}: arguments are not a JSON object "
                    f"({len(raw)} chars); using {{}}"
                )
                args = {}
            call_id = partial.call_id or f"call_{uuid.uuid4().hex[:24]}"
            calls.append(ToolCall(call_id=call_id, name=partial.name, args=args))
        return calls


@dataclass(frozen=True, slots=True)
class _OpenAIPrepared(Prepared):
    """A prepared request plus the offered tools' schemas (for text tool calls)."""

    tools: dict[str, Any] = field(default_factory=dict)


def _as_parts(message: dict[str, Any]) -> dict[str, Any]:
    """A tool message whose text content is one ``{"type": "text"}`` part."""
    content = message.get("content")
    if not isinstance(content, str):
        return message
    return {**message, "content": [{"type": "text", "text": content}]}
