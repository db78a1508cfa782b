"""Gemini API client (``streamGenerateContent``), behind the same model seam as the others.

On the wire: ``POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`` with
``x-goog-api-key: <key>`` (never in the URL, so it cannot reach a log line) and the body
``{"contents", "systemInstruction"?, "tools"?, "generationConfig"?}`` built by
:mod:`headwire.runtime.models.gemini_convert`.  ``base_url`` defaults to
``https://generativelanguage.googleapis.com`` (``GOOGLE_GEMINI_BASE_URL`` replaces it; a
base ending in ``/v1beta`` or ``/v1`` is used as is).  Each SSE ``data:`` event is one
``GenerateContentResponse``; from candidate 0's ``content.parts``:

* ``text`` becomes :class:`TextDelta`, or :class:`ThinkingDelta` when the part has
  ``thought: true``; both are yielded as they arrive;
* ``functionCall`` parts become :class:`ToolCall` events once the answer is complete; the
  call's ``id`` is Gemini's when it gives one, else a fresh ``call_…``; its
  ``thoughtSignature`` is kept to send the turn back;
* ``usageMetadata`` (cumulative; the last one counts) becomes the usage: ``promptTokenCount``
  (input), ``candidatesTokenCount`` + ``thoughtsTokenCount`` (output),
  ``cachedContentTokenCount`` (cache read) and ``totalTokenCount``.

The answer is complete at a ``finishReason``; a stream that closes before one is a dropped
connection.  ``SAFETY``-like finish reasons and a blocked prompt with no content are clear,
non-retried errors.  HTTP 429 waits ``Retry-After`` or the body's ``RetryInfo.retryDelay``.
Thoughts are asked for (``includeThoughts``) on the thinking models (``gemini-2.5*``,
``gemini-3*`` and later) or when ``thinking_budget`` is set.
"""

from __future__ import annotations

import re
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import quote

import orjson

from headwire.records import dataclass, field
from headwire.runtime.http_body import Answer
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
from headwire.runtime.models.gemini_convert import convert_contents, convert_tools
from headwire.runtime.models.http_base import (
    Prepared,
    StreamingHttpModel,
    Transient,
    error_field_text,
    int_field,
)
from headwire.runtime.models.reasoning import Reasoning, gemini_thinking
from headwire.runtime.models.sse import sse_events
from headwire.wire import dumps, loads

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
_SAMPLING_KEYS = {
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "max_tokens": "maxOutputTokens",
}
"""``samplingParams`` keys and their names in Gemini's ``generationConfig``."""
_THINKING_MODEL = re.compile(r"gemini-(?:2\.5|[3-9]|\d{2,})", re.IGNORECASE)
_SIGNED_MODEL = re.compile(r"gemini-(?:[3-9]|\d{2,})", re.IGNORECASE)
_FINE_FINISH = frozenset({"STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED"})
_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)s\s*$")
_REMEMBERED = 256
"""Call ids whose signature (or Gemini-given id) is remembered for sending back."""


@dataclass(slots=True)
class _State:
    calls: list[ToolCall] = field(default_factory=list)
    finish: str | None = None
    usage: dict[str, Any] | None = None
    said_something: bool = False


class GeminiModel(StreamingHttpModel):
    """A :class:`~headwire.runtime.models.base.Model` speaking the Gemini API."""

    provider = "gemini"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        thinking_budget: int | None = None,
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
        super().__init__(
            base_url,
            api_key,
            model.removeprefix("models/"),
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
        self.thinking_budget = thinking_budget
        self.reasoning_thinking = gemini_thinking(reasoning)
        """``thinkingConfig`` from ``generationConfig.reasoning`` (``None``: not set); a
        ``thinking_budget`` given wins."""
        sampling = dict(sampling_params or {})
        self.sampling = {
            gemini: sampling[key]
            for key, gemini in _SAMPLING_KEYS.items()
            if sampling.get(key) is not None
        }
        """``samplingParams`` under Gemini's names, for the body's ``generationConfig``."""
        last = self.base_url.rsplit("/", 1)[-1]
        self._api_root = (
            self.base_url
            if last in ("v1beta", "v1", "v1alpha")
            else f"{self.base_url}/{API_VERSION}"
        )
        self._signatures: OrderedDict[str, str] = OrderedDict()
        self._native_ids: OrderedDict[str, None] = OrderedDict()

    def _models_url(self) -> str:
        return f"{self._api_root}/models?pageSize=1000"

    @staticmethod
    def _model_ids(data: Any) -> list[str]:
        """Gemini's ``{"models": [{"name": "models/..."}]}``, without ``models/``."""
        items = data.get("models") if isinstance(data, dict) else None
        return [
            str(m.get("name")).removeprefix("models/")
            for m in items or []
            if isinstance(m, dict) and m.get("name")
        ]

    # -- request ---------------------------------------------------------------------------

    def _prepare(self, request: ModelRequest) -> Prepared:
        model = (request.model or self.name).removeprefix("models/")
        system, contents = convert_contents(
            request.messages,
            signatures=self._signatures,
            native_ids=self._native_ids,
            placeholder_signatures=bool(_SIGNED_MODEL.search(model)),
        )
        body: dict[str, Any] = {"contents": contents}
        if system:
            body["systemInstruction"] = system
        tools = convert_tools(request.tools)
        if tools:
            body["tools"] = tools
        generation: dict[str, Any] = dict(self.sampling)
        # a budget given wins, then generationConfig.reasoning, then the model's own default
        if self.thinking_budget is not None:
            thinking = {"includeThoughts": True, "thinkingBudget": self.thinking_budget}
        elif self.reasoning_thinking is not None:
            thinking = dict(self.reasoning_thinking)
        elif _THINKING_MODEL.search(model):
            thinking = {"includeThoughts": True}
        else:
            thinking = {}
        if thinking:
            generation["thinkingConfig"] = thinking
        if generation:
            body["generationConfig"] = generation
        url = f"{self._api_root}/models/{quote(model, safe='')}:streamGenerateContent?alt=sse"
        return Prepared(url, dumps(body), self._headers(), bool(tools))

    def _headers(self) -> dict[str, str]:
        headers = self._base_headers()
        if self._api_key:
            headers["x-goog-api-key"] = self._api_key
        headers.update(self._extra_headers)
        return headers

    def _body_retry_after_s(self, body: bytes) -> float | None:
        """``RetryInfo.retryDelay`` (``"23s"``) from a Gemini error body."""
        try:
            data = loads(body)
        except orjson.JSONDecodeError:
            return None
        if isinstance(data, list) and data:
            data = data[0]
        error = data.get("error") if isinstance(data, dict) else None
        details = error.get("details") if isinstance(error, dict) else None
        for detail in details if isinstance(details, list) else []:
            delay = detail.get("retryDelay") if isinstance(detail, dict) else None
            match = _DURATION.match(delay) if isinstance(delay, str) else None
            if match:
                return float(match.group(1))
        return None

    # -- streamed answer -------------------------------------------------------------------

    async def _decode(self, response: Answer, prepared: Prepared) -> AsyncIterator[ModelEvent]:
        state = _State()
        async for event in sse_events(response):
            try:
                chunk = loads(event.text)
            except orjson.JSONDecodeError:
                raise self.malformed(event.text) from None
            for item in chunk if isinstance(chunk, list) else [chunk]:
                for model_event in self._apply(state, item, event.text):
                    yield model_event
        for model_event in self._finish(state):
            yield model_event

    def _decode_json(self, body: bytes, prepared: Prepared) -> list[ModelEvent]:
        """A server that ignored ``alt=sse``: one response, or the JSON array of them."""
        try:
            data = loads(body)
        except orjson.JSONDecodeError:
            return super()._decode_json(body, prepared)
        items = data if isinstance(data, list) else [data]
        if not items or not all(isinstance(i, dict) and "candidates" in i for i in items):
            return super()._decode_json(body, prepared)
        state = _State()
        events: list[ModelEvent] = []
        for item in items:
            events += self._apply(state, item, "")
        return events + self._finish(state)

    def _finish(self, state: _State) -> list[ModelEvent]:
        """The end of an answer: checks, then its calls and ``Finished``."""
        if state.finish is None:
            raise self.dropped()
        if state.finish not in _FINE_FINISH:
            if not state.said_something and not state.calls:
                raise self._error(f"Gemini ended the answer without content ({state.finish})")
            self._note(f"the answer ended with finishReason {state.finish}")
        usage = _usage(state.usage) if state.usage else None
        return [*state.calls, Finished(usage, stop_reason_of(state.finish))]

    def _apply(self, state: _State, chunk: Any, raw: str) -> list[ModelEvent]:
        if not isinstance(chunk, dict):
            raise self.malformed(raw)
        if chunk.get("error"):
            raise Transient(
                self._error(
                    "Model server reported an error mid-stream: "
                    + error_field_text(chunk["error"]),
                    retryable=True,
                )
            )
        if isinstance(chunk.get("usageMetadata"), dict):
            state.usage = chunk["usageMetadata"]
        candidates = chunk.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = chunk.get("promptFeedback")
            blocked = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if blocked:
                raise self._error(f"Gemini blocked the prompt ({blocked})")
            return []
        candidate = candidates[0] if isinstance(candidates[0], dict) else {}
        events: list[ModelEvent] = []
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict):
                events += self._part(state, part)
        finish = candidate.get("finishReason")
        if isinstance(finish, str) and finish:
            state.finish = finish
        return events

    def _part(self, state: _State, part: dict[str, Any]) -> list[ModelEvent]:
        call = part.get("functionCall")
        if isinstance(call, dict):
            given = call.get("id")
            call_id = given if isinstance(given, str) and given else f"call_{uuid.uuid4().hex[:24]}"
            args = call.get("args")
            if not isinstance(args, dict):
                args = {}
            name = call.get("name")
            if not isinstance(name, str) or not name:
                raise self._error("Malformed streaming response: a functionCall has no name")
            state.calls.append(ToolCall(call_id, name, args))
            signature = part.get("thoughtSignature")
            if isinstance(signature, str) and signature:
                _remember(self._signatures, call_id, signature)
            if call_id == given:
                _remember(self._native_ids, call_id, None)
            return []
        text = part.get("text")
        if not isinstance(text, str) or not text:
            return []
        state.said_something = True
        return [ThinkingDelta(text) if part.get("thought") is True else TextDelta(text)]


def _remember(memory: OrderedDict[str, Any], key: str, value: Any) -> None:
    memory[key] = value
    memory.move_to_end(key)
    while len(memory) > _REMEMBERED:
        memory.popitem(last=False)


def _usage(raw: dict[str, Any]) -> Usage:
    """Gemini ``usageMetadata`` as :class:`Usage` (thoughts count as output)."""
    prompt = int_field(raw.get("promptTokenCount"))
    output = int_field(raw.get("candidatesTokenCount")) + int_field(raw.get("thoughtsTokenCount"))
    cached = int_field(raw.get("cachedContentTokenCount"))
    total = int_field(raw.get("totalTokenCount")) or prompt + output
    return Usage(
        input_tokens=prompt, output_tokens=output, cached_tokens=cached, total_tokens=total
    )
