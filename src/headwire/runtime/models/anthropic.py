"""Anthropic Messages API client (streaming), behind the same model seam as the others.

On the wire: ``POST {base_url}/v1/messages`` with ``x-api-key: <key>`` (plus ``Authorization:
Bearer <key>`` for hosts other than ``*.anthropic.com``, which Anthropic-compatible gateways
expect), ``anthropic-version: 2023-06-01`` and the body ``{"model", "max_tokens", "system"?,
"messages", "tools"?, "stream": true, "thinking"?}`` built by
:mod:`headwire.runtime.models.anthropic_convert`.  The answer is Server-Sent Events:

* ``content_block_delta`` ``text_delta`` becomes :class:`TextDelta` and ``thinking_delta``
  :class:`ThinkingDelta`, yielded as they arrive; ``signature_delta`` and
  ``redacted_thinking`` blocks are kept (not shown) to send the turn back unchanged;
* ``tool_use`` blocks (``input_json_delta`` fragments) become :class:`ToolCall` events once
  the message is complete (``message_delta`` with its ``stop_reason``, or ``message_stop``);
* usage: ``message_start``'s ``usage`` updated by ``message_delta``'s.  ``input_tokens`` on
  the wire is the whole prompt: Anthropic's ``input_tokens`` plus ``cache_read_input_tokens``
  plus ``cache_creation_input_tokens``, like upstream; cache reads and writes are kept apart;
* an ``error`` event (``overloaded_error``…) before any output is retried like HTTP 529.

``thinking_budget`` (``None``: off) turns on extended thinking with that many tokens; a turn
whose thinking blocks this process did not see (a resumed session) is sent without thinking.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson

from headwire.records import dataclass, field
from headwire.runtime.http_body import Answer
from headwire.runtime.models.anthropic_convert import (
    convert_messages,
    convert_tools,
    last_tool_turn_lacks_thinking,
    tool_use_id,
)
from headwire.runtime.models.base import (
    Finished,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
    stop_reason_of,
)
from headwire.runtime.models.http_base import (
    Prepared,
    StreamingHttpModel,
    Transient,
    error_field_text,
    int_field,
)
from headwire.runtime.models.reasoning import ANTHROPIC_EFFORT_BETA, Reasoning, anthropic_options
from headwire.runtime.models.sse import sse_events
from headwire.wire import dumps, loads

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` when none is configured: every current Claude model allows at least this."""
_SAMPLING_KEYS = ("temperature", "top_p", "top_k")
"""The ``samplingParams`` keys the Messages API takes as they are (``max_tokens`` besides)."""
_RETRYABLE_ERRORS = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
)
_REPLAY_TURNS = 32
"""Assistant turns whose thinking blocks are remembered for sending back."""


@dataclass(slots=True)
class _Block:
    kind: str
    call_id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    data: str = ""


@dataclass(slots=True)
class _State:
    blocks: dict[int, _Block] = field(default_factory=dict)
    calls: list[ToolCall] = field(default_factory=list)
    thinking: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None
    stopped: bool = False


class AnthropicModel(StreamingHttpModel):
    """A :class:`~headwire.runtime.models.base.Model` speaking the Anthropic Messages API."""

    provider = "anthropic"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking_budget: int | None = None,
        prompt_caching: bool = True,
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
        reasoning: Reasoning = None,
    ) -> None:
        base = base_url.rstrip("/")
        base = base.removesuffix("/v1")
        super().__init__(
            base,
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
        sampling = dict(sampling_params or {})
        self.sampling = {k: sampling[k] for k in _SAMPLING_KEYS if sampling.get(k) is not None}
        """``temperature``, ``top_p`` and ``top_k`` from ``samplingParams``, sent as they are."""
        configured = sampling.get("max_tokens")
        self.max_tokens = (
            configured if type(configured) is int and configured > 0 else max_tokens  # not a bool
        )
        budget, effort, off = anthropic_options(reasoning)
        self.effort = effort
        """``output_config.effort`` from ``generationConfig.reasoning.effort``, or ``None``."""
        if thinking_budget is None:  # --max-thinking-tokens and model.thinkingBudget win
            thinking_budget = None if off else budget
        self.thinking_budget = thinking_budget if thinking_budget and thinking_budget > 0 else None
        """Extended thinking's budget (``None``: off)."""
        self.prompt_caching = prompt_caching
        host = (urlsplit(self.base_url).hostname or "").lower()
        self._native = host == "api.anthropic.com" or host.endswith(".anthropic.com")
        self._replay: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def _models_url(self) -> str:
        return f"{self.base_url}/v1/models?limit=1000"

    # -- request ---------------------------------------------------------------------------

    def _prepare(self, request: ModelRequest) -> Prepared:
        system, messages = convert_messages(
            request.messages, self._replay, cache=self.prompt_caching
        )
        body: dict[str, Any] = {"model": request.model or self.name, "max_tokens": self.max_tokens}
        body.update(self.sampling)
        if system:
            body["system"] = system
        body["messages"] = messages
        tools = convert_tools(request.tools, cache=self.prompt_caching)
        if tools:
            body["tools"] = tools
        body["stream"] = True
        headers = self._headers()
        if self.thinking_budget and not last_tool_turn_lacks_thinking(messages):
            budget = max(1024, self.thinking_budget)
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = max(self.max_tokens, budget + 1024)
            _add_beta(headers, "interleaved-thinking-2025-05-14")
        if self.effort is not None:
            body["output_config"] = {"effort": self.effort}
            _add_beta(headers, ANTHROPIC_EFFORT_BETA)
        return Prepared(f"{self.base_url}/v1/messages", dumps(body), headers, bool(tools))

    def _headers(self) -> dict[str, str]:
        headers = self._base_headers()
        headers["anthropic-version"] = API_VERSION
        if self._api_key:
            headers["x-api-key"] = self._api_key
            if not self._native:
                headers["Authorization"] = f"Bearer {self._api_key}"
        headers.update(self._extra_headers)
        return headers

    # -- streamed answer -------------------------------------------------------------------

    async def _decode(self, response: Answer, prepared: Prepared) -> AsyncIterator[ModelEvent]:
        state = _State()
        async for event in sse_events(response):
            try:
                data = loads(event.text)
            except orjson.JSONDecodeError:
                raise self.malformed(event.text) from None
            if not isinstance(data, dict):
                raise self.malformed(event.text)
            for model_event in self._apply(state, str(data.get("type") or event.name), data):
                yield model_event
            if state.stopped:
                break
        for model_event in self._finish(state):
            yield model_event

    def _decode_json(self, body: bytes, prepared: Prepared) -> list[ModelEvent]:
        """A gateway that ignored ``stream``: one ``message`` object, read block by block."""
        try:
            data = loads(body)
        except orjson.JSONDecodeError:
            data = None
        content = data.get("content") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or data.get("type") != "message"
            or not isinstance(content, list)
        ):
            return super()._decode_json(body, prepared)
        state = _State()
        events: list[ModelEvent] = []
        _merge_usage(state.usage, data.get("usage"))
        for index, block in enumerate(b for b in content if isinstance(b, dict)):
            events += self._apply(
                state, "content_block_start", {"index": index, "content_block": block}
            )
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                events += self._delta(
                    state, {"index": index, "delta": {"type": "text_delta", "text": block["text"]}}
                )
            elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                delta = {"type": "thinking_delta", "thinking": block["thinking"]}
                events += self._delta(state, {"index": index, "delta": delta})
            self._apply(state, "content_block_stop", {"index": index})
        state.stopped = True
        return events + self._finish(state)

    def _finish(self, state: _State) -> list[ModelEvent]:
        """The end of a message: its tool calls, then ``Finished``."""
        if not state.stopped and state.stop_reason is None:
            raise self.dropped()
        if state.calls and state.thinking:
            self._remember(state.calls[0].call_id, state.thinking)
        usage = _usage(state.usage) if state.usage else None
        return [*state.calls, Finished(usage, stop_reason_of(state.stop_reason))]

    def _apply(self, state: _State, kind: str, data: dict[str, Any]) -> list[ModelEvent]:
        if kind == "content_block_delta":
            return self._delta(state, data)
        if kind == "message_start":
            message = data.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            _merge_usage(state.usage, usage)
        elif kind == "content_block_start":
            block = data.get("content_block")
            if isinstance(block, dict):
                state.blocks[_index(data)] = self._start(block)
        elif kind == "content_block_stop":
            self._stop(state, state.blocks.pop(_index(data), None))
        elif kind == "message_delta":
            delta = data.get("delta")
            reason = delta.get("stop_reason") if isinstance(delta, dict) else None
            if isinstance(reason, str) and reason:
                state.stop_reason = reason
            _merge_usage(state.usage, data.get("usage"))
        elif kind == "message_stop":
            state.stopped = True
        elif kind == "error":
            error = data.get("error")
            kind_of = error.get("type") if isinstance(error, dict) else None
            message = f"Model server reported an error mid-stream: {error_field_text(error)}"
            if kind_of:
                message = f"{message} ({kind_of})"
            retryable = kind_of in _RETRYABLE_ERRORS
            failure = self._error(message, retryable=retryable)
            if retryable:
                raise Transient(failure)
            raise failure
        return []  # ping and unknown events

    @staticmethod
    def _start(block: dict[str, Any]) -> _Block:
        kind = str(block.get("type") or "text")
        started = _Block(kind, str(block.get("id") or ""), str(block.get("name") or ""))
        if kind == "tool_use" and isinstance(block.get("input"), dict) and block["input"]:
            started.parts.append(dumps(block["input"]).decode())  # gateways send it whole
        elif kind == "thinking" and isinstance(block.get("signature"), str):
            started.signature.append(block["signature"])
        elif kind == "redacted_thinking":
            started.data = str(block.get("data") or "")
        return started

    def _delta(self, state: _State, data: dict[str, Any]) -> list[ModelEvent]:
        delta = data.get("delta")
        if not isinstance(delta, dict):
            return []
        block = state.blocks.get(_index(data))
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            return [TextDelta(text)] if isinstance(text, str) and text else []
        if kind == "thinking_delta":
            text = delta.get("thinking")
            if not isinstance(text, str) or not text:
                return []
            if block is not None:
                block.parts.append(text)
            return [ThinkingDelta(text)]
        if block is None:
            return []
        if kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            block.parts.append(delta["partial_json"])
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            block.signature.append(delta["signature"])
        return []

    def _stop(self, state: _State, block: _Block | None) -> None:
        if block is None:
            return
        if block.kind == "tool_use":
            raw = "".join(block.parts).strip()
            args: Any = {}
            if raw:
                try:
                    args = loads(raw)
                except orjson.JSONDecodeError:
                    args = None
            if not isinstance(args, dict):
                self._note(
                    f"tool call {block.name!r}: arguments are not a JSON object "
                    f"({len(raw)} chars); using {{}}"
                )
                args = {}
            if not block.name:
                raise self._error("Malformed streaming response: a tool_use block has no name")
            state.calls.append(
                ToolCall(block.call_id or f"toolu_{len(state.calls)}", block.name, args)
            )
        elif block.kind == "thinking":
            state.thinking.append(
                {
                    "type": "thinking",
                    "thinking": "".join(block.parts),
                    "signature": "".join(block.signature),
                }
            )
        elif block.kind == "redacted_thinking":
            state.thinking.append({"type": "redacted_thinking", "data": block.data})

    def _remember(self, call_id: str, blocks: list[dict[str, Any]]) -> None:
        self._replay[tool_use_id(call_id)] = blocks
        while len(self._replay) > _REPLAY_TURNS:
            self._replay.popitem(last=False)


def _index(data: dict[str, Any]) -> int:
    index = data.get("index")
    return index if isinstance(index, int) else 0


def _merge_usage(into: dict[str, int], usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    for key in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        if isinstance(usage.get(key), int) and not isinstance(usage.get(key), bool):
            into[key] = int_field(usage[key])


def _usage(raw: dict[str, int]) -> Usage:
    """Anthropic usage as :class:`Usage`: the prompt counts cache reads and writes too."""
    read = raw.get("cache_read_input_tokens", 0)
    written = raw.get("cache_creation_input_tokens", 0)
    prompt = raw.get("input_tokens", 0) + read + written
    output = raw.get("output_tokens", 0)
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cached_tokens=read,
        total_tokens=prompt + output,
        cache_write_tokens=written,
    )


def _add_beta(headers: dict[str, str], flag: str) -> None:
    """Add ``flag`` to the request's ``anthropic-beta`` list (a ``customHeaders`` value kept)."""
    key = next((k for k in headers if k.lower() == "anthropic-beta"), "anthropic-beta")
    flags = [f.strip() for f in headers.get(key, "").split(",") if f.strip()]
    if flag not in flags:
        flags.append(flag)
    headers[key] = ",".join(flags)
