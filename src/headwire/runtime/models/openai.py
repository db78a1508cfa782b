"""OpenAI-compatible chat-completions client (streaming only).

On the wire: ``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>`` and the
JSON body ``{"model", "messages", "tools"?, "stream": true, "stream_options":
{"include_usage": true}}``.  The server answers with Server-Sent Events, one ``data: <chunk>``
event per ``chat.completion.chunk`` and a final ``data: [DONE]``.  From the chunks of choice 0:

* ``delta.content`` becomes :class:`TextDelta` (yielded as it arrives);
* ``delta.reasoning_content`` (or ``delta.reasoning``) becomes :class:`ThinkingDelta`;
* ``delta.tool_calls[i]`` fragments are accumulated by ``index`` (``id`` and ``function.name``
  usually come first, ``function.arguments`` arrives in string fragments) and yielded as
  :class:`ToolCall` events, in index order, once the stream has ended;
* ``usage`` (normally in a last chunk with ``choices: []``) becomes the :class:`Finished` usage.

Tool-call arguments that are not a JSON object (invalid JSON, a truncated fragment, a list)
become ``{}`` with a one-line note on stderr: the tool then reports its missing parameters to
the model, which can retry; the raw text is not kept because it is usually a broken prefix.

Failures are :class:`ModelError`.  Before any event has been yielded, HTTP 408/429/5xx,
connection errors and timeouts are retried with exponential backoff (``retry_base_delay_s``
times 1, 2, 4, ...), honouring ``Retry-After``/``retry-after-ms`` up to ``max_retry_after_s``.
After an event has been yielded nothing is retried: a dropped connection raises
``ModelError("Connection closed mid-stream")`` rather than truncating silently.
``ModelError.retryable`` says the failure is transient (the same request may succeed later).
The API key never appears in a message: any occurrence in server text is replaced by ``***``.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import sys
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from headwire import __version__
from headwire.errors import ConfigError, ModelServerError
from headwire.runtime.environment import register_secret
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
from headwire.runtime.redact import redact
from headwire.wire import LineSplitter, dumps, loads

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where requests go when neither ``--openai-base-url`` nor ``OPENAI_BASE_URL`` is given."""

_SNIPPET_CHARS = 200
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


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
            f"Invalid OpenAI base URL {_display_url(base_url)!r}: it must start with http:// or https://"
        )
    model = pick(model_flag, "OPENAI_MODEL")
    if model is None:
        raise OpenAIConfigError("No model given: pass --model or set OPENAI_MODEL")
    return base_url, pick(api_key_flag, "OPENAI_API_KEY"), model


class _Transient(ModelServerError):
    """Internal: a failure worth retrying if nothing was yielded yet."""

    def __init__(self, error: ModelError, retry_after_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after_s = retry_after_s


@dataclass(slots=True)
class _PartialCall:
    """One tool call being assembled from ``delta.tool_calls`` fragments."""

    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _StreamState:
    """What one streamed answer has accumulated so far."""

    calls: dict[int, _PartialCall] = field(default_factory=dict)
    last_index: int | None = None
    finish_reason: str | None = None
    usage: Usage | None = None


class OpenAIModel:
    """A :class:`~headwire.runtime.models.base.Model` speaking OpenAI chat completions.

    ``timeout_s`` bounds connecting, sending and each wait for the next bytes of the answer
    (an idle gap), not the whole stream.  ``max_retries`` is the number of retries after the
    first attempt.  ``diagnostics`` receives one-line notes (retries, dropped tool arguments);
    by default they go to stderr.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        timeout_s: float = 120,
        max_retries: int = 3,
        extra_headers: dict[str, str] | None = None,
        retry_base_delay_s: float = 0.5,
        max_retry_after_s: float = 60.0,
        diagnostics: Callable[[str], None] | None = None,
    ) -> None:
        self.name = model
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.retry_base_delay_s = retry_base_delay_s
        self.max_retry_after_s = max_retry_after_s
        self._api_key = api_key or None
        register_secret(self._api_key)  # kept out of the shell's and MCP servers' environment
        self._extra_headers = dict(extra_headers or {})
        self._diagnostics = diagnostics
        self._url = f"{self.base_url}/chat/completions"
        self._display = _display_url(self.base_url)
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAIModel(base_url={self._display!r}, model={self.name!r})"

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connection pool (a later call opens a new one)."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Run one chat completion, yielding deltas, then tool calls, then one ``Finished``.

        The body's ``model`` is ``request.model``, or this provider's ``name`` when that is empty;
        ``tools`` is left out when the request offers none (some servers reject ``[]``).
        """
        payload = self._payload(request)
        attempt = 0
        while True:
            yielded = False
            try:
                async with contextlib.aclosing(self._attempt(payload)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except _Transient as failure:
                if yielded or attempt >= self.max_retries:
                    raise failure.error from failure.__cause__
                delay = self._retry_delay(attempt, failure.retry_after_s)
                attempt += 1
                self._note(
                    f"{failure.error.message}; retrying in {delay:.3g}s "
                    f"(attempt {attempt + 1} of {self.max_retries + 1})"
                )
                await asyncio.sleep(delay)

    # -- one attempt ---------------------------------------------------------------------

    async def _attempt(self, payload: bytes) -> AsyncGenerator[ModelEvent, None]:
        client = self._get_client()
        responded = False
        try:
            async with client.stream(
                "POST", self._url, content=payload, headers=self._headers()
            ) as response:
                responded = True
                if not response.is_success:
                    await self._fail_status(response)
                content_type = response.headers.get("content-type", "")
                if "json" in content_type and "event-stream" not in content_type:
                    body = await response.aread()
                    raise self._error(
                        "Model server did not stream its answer (got application/json): "
                        + _error_text(body, self._redact)
                    )
                async for event in self._events(response):
                    yield event
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise _Transient(
                self._error(
                    f"Cannot reach model server at {self._display}: {_exc_text(exc)}",
                    retryable=True,
                )
            ) from exc
        except httpx.TimeoutException as exc:
            raise _Transient(
                self._error(
                    f"Model server timed out (no data for {self.timeout_s:g}s)", retryable=True
                )
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            message = (
                "Connection closed mid-stream"
                if responded
                else f"Model server at {self._display} closed the connection: {_exc_text(exc)}"
            )
            raise _Transient(self._error(message, retryable=True)) from exc
        except httpx.HTTPError as exc:
            raise _Transient(
                self._error(f"Model request failed: {_exc_text(exc)}", retryable=True)
            ) from exc

    async def _fail_status(self, response: httpx.Response) -> None:
        """Raise the error for a non-2xx answer: transient for 408/429/5xx."""
        status = response.status_code
        body = await response.aread()
        retryable = status in (408, 429) or status >= 500
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        error = self._error(
            f"Model server returned HTTP {status}{reason}: {_error_text(body, self._redact)}",
            status=status,
            retryable=retryable,
        )
        if retryable:
            raise _Transient(error, _retry_after_s(response.headers))
        raise error

    async def _events(self, response: httpx.Response) -> AsyncIterator[ModelEvent]:
        """Decode the SSE body into events; the end of the stream settles the tool calls."""
        state = _StreamState()
        data_lines: list[str] = []
        done = False
        splitter = LineSplitter()  # CR/LF only: a raw U+2028 in a JSON string is not a line end
        async with contextlib.aclosing(_lines(response, splitter)) as lines:
            async for line in lines:
                if line:
                    name, _, value = line.partition(":")
                    if name == "data":
                        data_lines.append(value[1:] if value.startswith(" ") else value)
                    continue  # comments (": keep-alive") and event/id/retry fields are ignored
                if not data_lines:
                    continue
                data, data_lines = data_lines, []
                if self._is_done(data):
                    done = True
                    break
                for event in self._feed(state, data):
                    yield event
        if data_lines and not done:  # a last event without its blank line
            if self._is_done(data_lines):
                done = True
            else:
                for event in self._feed(state, data_lines):
                    yield event
        if not done and state.finish_reason is None:
            raise _Transient(self._error("Connection closed mid-stream", retryable=True))
        for call in self._settle_calls(state):
            yield call
        yield Finished(state.usage)

    @staticmethod
    def _is_done(data_lines: list[str]) -> bool:
        return len(data_lines) == 1 and data_lines[0].strip() == "[DONE]"

    def _feed(self, state: _StreamState, data_lines: list[str]) -> list[ModelEvent]:
        """Apply one SSE event (its ``data`` lines) to ``state``; return the deltas to yield."""
        chunks: list[Any] = []
        try:
            chunks.append(loads("\n".join(data_lines)))
        except orjson.JSONDecodeError:
            if len(data_lines) == 1:
                raise self._malformed(data_lines[0]) from None
            # Leniency for servers that put several chunks in one event without blank lines.
            for line in data_lines:
                if line.strip() == "[DONE]":
                    continue
                try:
                    chunks.append(loads(line))
                except orjson.JSONDecodeError:
                    raise self._malformed(line) from None
        events: list[ModelEvent] = []
        for chunk in chunks:
            events += self._apply_chunk(state, chunk)
        return events

    def _malformed(self, data: str) -> ModelError:
        snippet = data if len(data) <= _SNIPPET_CHARS else data[:_SNIPPET_CHARS] + "..."
        return self._error(f"Malformed streaming response: {snippet!r}")

    def _apply_chunk(self, state: _StreamState, chunk: Any) -> list[ModelEvent]:
        if not isinstance(chunk, dict):
            raise self._malformed(dumps(chunk).decode())
        error = chunk.get("error")
        if error:
            raise _Transient(
                self._error(
                    "Model server reported an error mid-stream: "
                    + _error_field_text(error, self._redact),
                    retryable=True,
                )
            )
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            state.usage = _usage(usage)
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
                    events.append(TextDelta(content))
                tool_calls = delta.get("tool_calls")
                for fragment in tool_calls if isinstance(tool_calls, list) else []:
                    if isinstance(fragment, dict):
                        _merge_call(state, fragment)
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                state.finish_reason = finish
        return events

    def _settle_calls(self, state: _StreamState) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for index in sorted(state.calls):
            partial = state.calls[index]
            if not partial.name:
                raise self._error(f"Malformed streaming response: tool call {index} has no name")
            raw = "".join(partial.arguments).strip()
            args: dict[str, Any] = {}
            if raw:
                try:
                    parsed = loads(raw)
                except orjson.JSONDecodeError:
                    parsed = None
                if isinstance(parsed, dict):
                    args = parsed
                else:
                    self._note(
                        f"tool call {partial.name!r}: arguments are not a JSON object "
                        f"({len(raw)} chars); using {{}}"
                    )
            call_id = partial.call_id or f"call_{uuid.uuid4().hex[:24]}"
            calls.append(ToolCall(call_id=call_id, name=partial.name, args=args))
        return calls

    # -- plumbing ------------------------------------------------------------------------

    def _payload(self, request: ModelRequest) -> bytes:
        body: dict[str, Any] = {
            "model": request.model or self.name,
            "messages": request.messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = request.tools
        return dumps(body)

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "User-Agent": f"headwire/{__version__}",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        headers.update(self._extra_headers)
        return headers

    def _get_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # A pool made under another event loop cannot be reused (or closed) here.
            host = urlsplit(self.base_url).hostname or ""
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 10.0)),
                trust_env=host not in _LOOPBACK_HOSTS,  # no proxy for a local server
            )
            self._client_loop = loop
        return self._client

    def _retry_delay(self, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None and 0 <= retry_after_s <= self.max_retry_after_s:
            return retry_after_s
        return float(self.retry_base_delay_s * (2**attempt))

    def _error(
        self, message: str, *, status: int | None = None, retryable: bool = False
    ) -> ModelError:
        return ModelError(self._redact(message), status=status, retryable=retryable)

    def _redact(self, text: str) -> str:
        """``text`` without the key, any registered secret or a fragment of one at a cut."""
        text = text.replace(self._api_key, "***") if self._api_key else text
        return redact(text)

    def _note(self, message: str) -> None:
        line = f"headwire: model {self.name}: {self._redact(message)}"
        if self._diagnostics is not None:
            self._diagnostics(line)
        else:
            print(line, file=sys.stderr, flush=True)


async def _lines(response: httpx.Response, splitter: LineSplitter) -> AsyncGenerator[str, None]:
    """The SSE body's lines, split by ``splitter`` as the bytes arrive."""
    async for chunk in response.aiter_bytes():
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.close():
        yield line


def _merge_call(state: _StreamState, fragment: dict[str, Any]) -> None:
    """Fold one ``delta.tool_calls[]`` fragment into the call with the same ``index``.

    Without an ``index``, a fragment with a new ``id`` opens a new call and any other continues
    the last one.  Name fragments are concatenated unless a server repeats the whole name.
    """
    call_id = fragment.get("id")
    index = fragment.get("index")
    if not isinstance(index, int):
        known = {c.call_id for c in state.calls.values()}
        if state.last_index is None or (
            isinstance(call_id, str) and call_id and call_id not in known
        ):
            index = max(state.calls, default=-1) + 1
        else:
            index = state.last_index
    state.last_index = index
    partial = state.calls.setdefault(index, _PartialCall())
    if isinstance(call_id, str) and call_id and not partial.call_id:
        partial.call_id = call_id
    function = fragment.get("function")
    if not isinstance(function, dict):
        return
    name = function.get("name")
    if isinstance(name, str) and name and name != partial.name:
        partial.name += name
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        partial.arguments.append(arguments)
    elif isinstance(arguments, dict):  # some servers send the object itself
        partial.arguments.append(dumps(arguments).decode())


def _usage(raw: dict[str, Any]) -> Usage:
    """Map OpenAI ``usage`` (with ``prompt_tokens_details.cached_tokens``) to :class:`Usage`."""
    prompt = _int(raw.get("prompt_tokens"))
    completion = _int(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    if not cached:
        cached = _int(raw.get("prompt_cache_hit_tokens"))  # DeepSeek's spelling
    total = _int(raw.get("total_tokens")) or prompt + completion
    return Usage(
        input_tokens=prompt, output_tokens=completion, cached_tokens=cached, total_tokens=total
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _error_text(body: bytes, scrub: Callable[[str], str]) -> str:
    """The server's error message: ``{"error": {"message": ...}}`` when present, else the body,
    scrubbed by ``scrub`` *before* it is cut to 500 characters (a cut through an echoed key
    would leave a fragment no later scrub recognises as the key)."""
    try:
        data = loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        for key in ("error", "message", "detail"):
            if data.get(key):
                return _error_field_text(data[key], scrub)
    text = scrub(body.decode("utf-8", "replace").strip())
    if not text:
        return "(empty response body)"
    return text if len(text) <= 500 else text[:500] + "..."


def _error_field_text(error: Any, scrub: Callable[[str], str]) -> str:
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return scrub(message)
    if isinstance(error, str):
        return scrub(error)
    return scrub(dumps(error).decode())[:500]


def _exc_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


def _retry_after_s(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``Retry-After`` secs or date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        with contextlib.suppress(ValueError):
            return float(millis) / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return float(value)
    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    return None


def _display_url(url: str) -> str:
    """``url`` without user:password, for messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
