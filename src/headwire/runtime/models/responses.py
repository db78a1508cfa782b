"""OpenAI Responses API client (streaming): a ``modelProviders`` entry with ``wireApi:
"responses"`` (or the ``openai-responses`` provider), as Qwen Code 0.24.4 speaks it.

On the wire: ``POST {base_url}/responses`` with ``Authorization: Bearer <key>`` and the body
``{"model", "input", "instructions"?, "tools"?, "stream": true, "prompt_cache_key"?,
"store": false, "tool_choice": "auto", "parallel_tool_calls": true, "reasoning"?,
"include"?, "temperature"?, "top_p"?, "max_output_tokens"?}``:

* the conversation (kept in chat-completions form, :mod:`.chat_form`) becomes ``input``
  items: system messages the ``instructions``; user text a ``message`` (one text: a string,
  several: ``input_text`` parts); an assistant turn a ``message`` with its text, then one
  ``function_call`` per call (``call_id``, ``name``, ``arguments`` as JSON text); a tool result a
  ``function_call_output``.  A call without its output, or an output without its call, is left
  out (the API refuses either);
* a ``reasoning`` item the server sent with ``encrypted_content`` is sent back before the calls
  of its turn (``store: false`` keeps nothing on the server, so this is how a reasoning model
  keeps its reasoning across tool calls);
* ``generationConfig.reasoning`` with an effort sends ``reasoning: {effort, summary: "auto"}``
  and asks for ``include: ["reasoning.encrypted_content"]``; ``samplingParams``' ``temperature``
  and ``top_p`` go as they are and its ``max_tokens`` as ``max_output_tokens``; ``extra_body``
  keys are added where the body has none of that name.

The answer is Server-Sent Events: ``response.output_text.delta`` (and ``refusal.delta``) become
:class:`TextDelta`; ``reasoning_summary_text.delta`` and ``reasoning_text.delta``
:class:`ThinkingDelta`; each ``function_call`` item a :class:`ToolCall` (its arguments from
the deltas, else the item's), yielded in order once the answer is complete;
``response.completed`` ends the answer with its
usage (``input_tokens`` with ``input_tokens_details.cached_tokens``), ``response.incomplete``
with ``max_tokens`` (or ``refusal`` for a content filter); ``response.failed`` and ``error``
are model errors (a server error retried, as an HTTP 500 would be).  A request whose
reasoning items the server refuses is sent once more without them.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from typing import Any

import orjson

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
)
from headwire.runtime.models.chat_form import text_of
from headwire.runtime.models.generation import check_body_keys
from headwire.runtime.models.http_base import (
    Prepared,
    StreamingHttpModel,
    Transient,
    error_field_text,
    int_field,
)
from headwire.runtime.models.reasoning import Reasoning
from headwire.runtime.models.sse import sse_events
from headwire.wire import dumps, loads

_REPLAY_TURNS = 32
"""Assistant turns whose reasoning items are remembered for sending back."""
_CACHE_KEY_CHARS = 64
"""The longest ``prompt_cache_key`` OpenAI takes."""
_RETRYABLE = frozenset({"server_error", "rate_limit_exceeded", "internal_error", "overloaded"})


@dataclass(slots=True)
class _Call:
    call_id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _State:
    calls: dict[int, _Call] = field(default_factory=dict)
    done: list[ToolCall] = field(default_factory=list)
    reasoning: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None
    stop_reason: str | None = None
    finished: bool = False


class ResponsesModel(StreamingHttpModel):
    """A :class:`~headwire.runtime.models.base.Model` speaking the OpenAI Responses API."""

    provider = "openai"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        sampling_params: Mapping[str, Any] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        reasoning: Reasoning = None,
        cache_key: str | None = None,
        **transport: Any,
    ) -> None:
        """``transport``: the base's timeouts, retries, headers and diagnostics
        (:class:`~headwire.runtime.models.http_base.StreamingHttpModel`)."""
        super().__init__(base_url, api_key, model, **transport)
        self.sampling_params = dict(sampling_params or {})
        self.extra_body = dict(extra_body or {})
        check_body_keys("sampling_params", self.sampling_params)
        check_body_keys("extra_body", self.extra_body)
        self.reasoning = reasoning
        """``generationConfig.reasoning``: an effort turns on ``reasoning`` (see above)."""
        self.cache_key = (cache_key or "")[:_CACHE_KEY_CHARS]
        """``prompt_cache_key`` (``""``: none), the same for a session's requests
        (:func:`~headwire.runtime.models.select.cache_key_for`)."""
        self._replay: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._url = f"{self.base_url}/responses"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Run one call (see the module docstring).  A server that refuses the reasoning items
        sent back (HTTP 400 naming them: another organisation's, or expired) is asked once more
        without any, as Qwen Code does; the items are forgotten."""
        yielded = False
        try:
            async for event in super().stream(request):
                yielded = True
                yield event
        except ModelError as error:
            refused = error.status == 400 and re.search(
                r"reasoning|encrypted", error.message, re.IGNORECASE
            )
            if yielded or not refused or not self._replays(request):
                raise
            self._replay.clear()
            self._note("the server refused the reasoning sent back; asking again without it")
            async for event in super().stream(request):
                yield event

    def _replays(self, request: ModelRequest) -> bool:
        """Whether ``request`` would send back a remembered reasoning item."""
        return any(
            str(call.get("id") or "") in self._replay
            for message in request.messages
            if message.get("role") == "assistant"
            for call in message.get("tool_calls") or []
            if isinstance(call, dict)
        )

    # -- request ---------------------------------------------------------------------------

    def _prepare(self, request: ModelRequest) -> Prepared:
        instructions, items = responses_input(request.messages, self._replay)
        body: dict[str, Any] = {"model": request.model or self.name, "input": items}
        if instructions:
            body["instructions"] = instructions
        tools = responses_tools(request.tools)
        if tools:
            body["tools"] = tools
        body["stream"] = True
        if self.cache_key:
            body["prompt_cache_key"] = self.cache_key
        body["store"] = False
        if tools:
            body["tool_choice"] = "auto"
            body["parallel_tool_calls"] = True
        effort = self.reasoning.get("effort") if isinstance(self.reasoning, Mapping) else None
        if isinstance(effort, str) and effort:
            body["reasoning"] = {"effort": effort, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        for key in ("temperature", "top_p"):
            if self.sampling_params.get(key) is not None:
                body[key] = self.sampling_params[key]
        most = self.sampling_params.get("max_tokens")
        if type(most) is int and most > 0:
            body["max_output_tokens"] = most
        for key, value in self.extra_body.items():
            body.setdefault(key, value)
        return Prepared(self._url, dumps(body), self._headers(), bool(tools))

    # -- streamed answer -------------------------------------------------------------------

    async def _decode(self, response: Answer, prepared: Prepared) -> AsyncIterator[ModelEvent]:
        state = _State()
        async for event in sse_events(response):
            if event.text.strip() == "[DONE]":
                break
            try:
                data = loads(event.text)
            except orjson.JSONDecodeError:
                raise self.malformed(event.text) from None
            if not isinstance(data, dict):
                raise self.malformed(event.text)
            for model_event in self._apply(state, str(data.get("type") or event.name), data):
                yield model_event
            if state.finished:
                break
        if not state.finished:
            raise self.dropped()
        for model_event in self._finish(state):
            yield model_event

    def _decode_json(self, body: bytes, prepared: Prepared) -> list[ModelEvent]:
        """A gateway that ignored ``stream``: one ``response`` object, read item by item."""
        try:
            data = loads(body)
        except orjson.JSONDecodeError:
            data = None
        output = data.get("output") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(output, list):
            return super()._decode_json(body, prepared)
        state, events = _State(), list[ModelEvent]()
        for index, item in enumerate(i for i in output if isinstance(i, dict)):
            if item.get("type") == "message":
                events += map(TextDelta, _texts(item.get("content")))
            elif item.get("type") == "reasoning":
                events += map(ThinkingDelta, _texts(item.get("summary")))
            self._item_done(state, index, item)
        kind = "response.incomplete" if data.get("status") == "incomplete" else "response.completed"
        self._apply(state, kind, {"response": data})
        return [*events, *self._finish(state)]

    def _finish(self, state: _State) -> list[ModelEvent]:
        """The end of a whole answer: its tool calls in order (as every provider yields them),
        then ``Finished``; the turn's reasoning items are kept for sending back."""
        if state.done and state.reasoning:
            self._remember(state.done[0].call_id, state.reasoning)
        stop = state.stop_reason or ("tool_use" if state.done else "end_turn")
        return [*state.done, Finished(state.usage, stop)]

    def _apply(self, state: _State, kind: str, data: dict[str, Any]) -> list[ModelEvent]:
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            delta = data.get("delta")
            return [TextDelta(delta)] if isinstance(delta, str) and delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = data.get("delta")
            return [ThinkingDelta(delta)] if isinstance(delta, str) and delta else []
        index = data.get("output_index")
        index = index if isinstance(index, int) else 0
        item = data.get("item")
        item = item if isinstance(item, dict) else {}
        if kind == "response.output_item.added" and item.get("type") == "function_call":
            call = _Call(str(item.get("call_id") or ""), str(item.get("name") or ""))
            state.calls[index] = call
        elif kind == "response.function_call_arguments.delta":
            delta = data.get("delta")
            if index in state.calls and isinstance(delta, str):
                state.calls[index].parts.append(delta)
        elif kind == "response.output_item.done":
            self._item_done(state, index, item)
        elif kind == "response.completed":
            state.usage = _usage(_envelope(data).get("usage"))
            state.finished = True
        elif kind == "response.incomplete":
            envelope = _envelope(data)
            details = envelope.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            state.usage = _usage(envelope.get("usage"))
            state.stop_reason = "refusal" if reason == "content_filter" else "max_tokens"
            state.finished = True
        elif kind in ("response.failed", "error"):
            error = _envelope(data).get("error") if kind == "response.failed" else data
            if isinstance(error, dict) and isinstance(error.get("error"), dict):
                error = error["error"]
            code = error.get("code") if isinstance(error, dict) else None
            message = f"Model server reported an error mid-stream: {error_field_text(error)}"
            failure = self._error(message, retryable=code in _RETRYABLE)
            if code in _RETRYABLE:
                raise Transient(failure)
            raise failure
        return []

    def _item_done(self, state: _State, index: int, item: dict[str, Any]) -> None:
        """A finished output item: a reasoning item kept, a function call settled."""
        kind = item.get("type")
        if kind == "reasoning" and isinstance(item.get("encrypted_content"), str):
            kept: dict[str, Any] = {"type": "reasoning"}
            kept.update((k, item[k]) for k in ("id", "encrypted_content") if k in item)
            summary = item.get("summary")
            kept["summary"] = summary if isinstance(summary, list) else []
            state.reasoning.append(kept)
            return
        if kind != "function_call":
            return
        streamed = state.calls.pop(index, None) or _Call()
        name = streamed.name or str(item.get("name") or "")
        if not name:
            raise self._error("Malformed streaming response: a function_call item has no name")
        call_id = streamed.call_id or str(item.get("call_id") or "") or f"call_{len(state.done)}"
        raw = "".join(streamed.parts) or str(item.get("arguments") or "")
        args = _object(raw)
        if args is None:
            args = _object(str(item.get("arguments") or ""))
        if args is None:
            self._note(
                f"tool call {name!r}: arguments are not a JSON object ({len(raw)} chars); "
                "using {}"
            )
            args = {}
        state.done.append(ToolCall(call_id, name, args))

    def _remember(self, call_id: str, items: list[dict[str, Any]]) -> None:
        self._replay[call_id] = items
        while len(self._replay) > _REPLAY_TURNS:
            self._replay.popitem(last=False)


def responses_input(
    messages: list[dict[str, Any]], replay: Mapping[str, list[dict[str, Any]]]
) -> tuple[str, list[dict[str, Any]]]:
    """``(instructions, input items)`` for chat-completions ``messages``; ``replay`` maps the
    first call id of an assistant turn to the reasoning items sent before its calls."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            text = text_of(content)
            if text:
                instructions.append(text)
        elif role == "user":
            parts = _user_parts(content)
            if parts:
                only = parts[0].get("text") if len(parts) == 1 else None
                items.append(
                    {"type": "message", "role": "user", "content": only if only else parts}
                )
        elif role == "assistant":
            calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            if calls:
                items += replay.get(str(calls[0].get("id") or ""), [])
            text = text_of(content)
            if text:
                items.append({"type": "message", "role": "assistant", "content": text})
            for call in calls:
                function = call.get("function")
                function = function if isinstance(function, dict) else {}
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    arguments = dumps(arguments if arguments is not None else {}).decode()
                items.append(
                    {
                        "type": "function_call",
                        "call_id": str(call.get("id") or ""),
                        "name": str(function.get("name") or ""),
                        "arguments": arguments,
                    }
                )
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id") or ""),
                    "output": text_of(content),
                }
            )
    return "\n".join(instructions), _paired(items)


def _user_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str) and part:
            parts.append({"type": "input_text", "text": part})
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
            parts.append({"type": "input_text", "text": part["text"]})
        elif isinstance(part, dict) and part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            if isinstance(url, str):
                parts.append({"type": "input_image", "image_url": url})
    return parts


def _paired(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` without a ``function_call`` that has no output or an output without its call."""
    calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
    return [
        i
        for i in items
        if not (i.get("type") == "function_call" and i["call_id"] not in outputs)
        and not (i.get("type") == "function_call_output" and i["call_id"] not in calls)
    ]


def responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions tool schemas as Responses ``function`` tools (an object schema without
    ``properties`` gets an empty one, which the API requires)."""
    out = []
    for tool in tools:
        function = tool.get("function")
        if not isinstance(function, dict) or not function.get("name"):
            continue
        entry: dict[str, Any] = {"type": "function", "name": function["name"]}
        if function.get("description") is not None:
            entry["description"] = function["description"]
        parameters = function.get("parameters")
        if isinstance(parameters, dict):
            entry["parameters"] = _with_properties(parameters)
        out.append(entry)
    return out


def _with_properties(node: Any) -> Any:
    if isinstance(node, list):
        return [_with_properties(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = dict(node)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _with_properties(v) for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = _with_properties(out["items"])
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = [_with_properties(n) for n in out[key]]
    if out.get("type") == "object" and "properties" not in out:
        out["properties"] = {}
    return out


def _texts(parts: Any) -> list[str]:
    """The non-empty ``text`` of each part of a message's ``content`` or a ``summary``."""
    texts = (p.get("text") for p in parts if isinstance(p, dict)) if isinstance(parts, list) else ()
    return [t for t in texts if isinstance(t, str) and t]


def _envelope(data: dict[str, Any]) -> dict[str, Any]:
    response = data.get("response")
    return response if isinstance(response, dict) else data


def _object(raw: str) -> dict[str, Any] | None:
    if not raw.strip():
        return {}
    try:
        value = loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _usage(raw: Any) -> Usage | None:
    """Responses ``usage`` as :class:`Usage` (``None`` when the server sent none)."""
    if not isinstance(raw, dict):
        return None
    prompt = int_field(raw.get("input_tokens"))
    output = int_field(raw.get("output_tokens"))
    details = raw.get("input_tokens_details")
    cached = int_field(details.get("cached_tokens")) if isinstance(details, dict) else 0
    total = int_field(raw.get("total_tokens")) or prompt + output
    return Usage(
        input_tokens=prompt, output_tokens=output, cached_tokens=cached, total_tokens=total
    )
