"""What every HTTP model provider shares: one streamed POST per call, retries, clean errors.

A provider subclasses :class:`StreamingHttpModel` and supplies the request (:meth:`_prepare`)
and the decoding of its streamed answer (:meth:`_decode`); this module does the rest, the same
way for OpenAI chat completions, Anthropic Messages and Gemini ``streamGenerateContent``:

* Before any event has been yielded, HTTP 408/429/5xx (and 529), connection errors, timeouts
  and a stream that ends before its end marker are retried with exponential backoff
  (``retry_base_delay_s`` times 1, 2, 4, ...), honouring ``retry-after-ms``, ``Retry-After``
  (seconds or an HTTP date) and a provider's own hint (Gemini's ``RetryInfo``) up to
  ``max_retry_after_s``; a server's ``x-should-retry`` header overrides the status rule.
* After an event has been yielded nothing is retried: a dropped connection raises
  ``ModelError("Connection closed mid-stream")`` rather than truncating silently.
* Every error message is one line for the user and never holds the API key (any occurrence in
  server text becomes ``***``) nor a password of the base URL; it is cut to
  :data:`~headwire.runtime.models.base.MAX_ERROR_CHARS` characters where every model error is
  made (:class:`~headwire.runtime.models.base.ModelError`).
* Every body is bounded as it arrives (:mod:`headwire.runtime.http_body`): a stream's lines and
  events (:mod:`headwire.runtime.models.sse`; past the cap the stream is closed with a clear
  error), an error body (only its first :data:`MAX_ERROR_BODY_BYTES` are read, then the
  connection is dropped) and a JSON answer (:data:`MAX_JSON_BODY_BYTES`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import re
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit, urlunsplit

import orjson

from headwire import __version__
from headwire.errors import ModelServerError
from headwire.io.stdio import warn
from headwire.records import dataclass
from headwire.runtime.environment import register_secret
from headwire.runtime.http_body import (
    ACCEPT_ENCODING,
    Answer,
    BodyTooLarge,
    BodyUndecodable,
    HeaderFields,
    read_body,
    read_head,
)
from headwire.runtime.models import http_client
from headwire.runtime.models.base import ModelError, ModelEvent, ModelRequest
from headwire.runtime.models.generation import DEFAULT_MAX_RETRY_DELAY_S, expand_headers
from headwire.runtime.models.sse import MAX_EVENT_BYTES, StreamEventTooLarge
from headwire.runtime.redact import redact
from headwire.runtime.telemetry import request_traceparent
from headwire.wire import dumps, loads

SNIPPET_CHARS = 200
"""How much of a malformed event a message quotes."""
MAX_ERROR_BODY_BYTES = 64 * 1024
"""How much of an error answer's body is read (the message quotes far less)."""
MAX_JSON_BODY_BYTES = MAX_EVENT_BYTES
"""The largest JSON document read (an answer not streamed, a model list)."""

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|cookie|session", re.IGNORECASE)
"""Header names whose values are credentials (``Authorization``, ``X-Api-Key``...): registered
as secrets, so no tool sees them and no output carries them."""
RETRYABLE_STATUSES = frozenset({408, 429, 529})
"""Retried besides every 5xx (529 is Anthropic's "overloaded")."""


class Transient(ModelServerError):
    """A failure worth retrying if nothing was yielded yet (raised inside an attempt)."""

    def __init__(self, error: ModelError, retry_after_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class Prepared:
    """One request ready to send: where, what and with which headers."""

    url: str
    body: bytes
    headers: dict[str, str]
    has_tools: bool = False


class StreamingHttpModel:
    """A :class:`~headwire.runtime.models.base.Model` over one streamed HTTP POST per call.

    ``timeout_s`` bounds connecting, sending and the wait for the answer's first bytes;
    ``stream_idle_timeout_s`` (``None``: ``timeout_s``) each later wait for the next bytes of
    the answer (an idle gap), not the whole stream; ``math.inf`` is no limit.  ``max_retries``
    is the number of retries after the first attempt, the first after ``retry_base_delay_s``,
    doubled each time up to ``max_retry_delay_s`` (``None``:
    :data:`DEFAULT_MAX_RETRY_DELAY_S`); a server's ``Retry-After`` is waited instead when it is
    at most ``max_retry_after_s`` or ``max_retry_delay_s``.  ``extra_headers`` may hold
    ``${session_id}``, filled with ``session_id`` (a header without one is left out); a header
    holding the id is no credential header (not registered as a secret).
    ``diagnostics`` receives one-line notes (retries, dropped tool arguments); by default they
    go to stderr.
    """

    provider = "model"
    """The provider's name in messages."""

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
        stream_idle_timeout_s: float | None = None,
        max_retry_delay_s: float | None = None,
        session_id: str | None = None,
    ) -> None:
        self.name = model
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.stream_idle_timeout_s = (
            timeout_s if stream_idle_timeout_s is None else stream_idle_timeout_s
        )
        self.max_retries = max(0, max_retries)
        self.retry_base_delay_s = retry_base_delay_s
        self.max_retry_delay_s = (
            DEFAULT_MAX_RETRY_DELAY_S if max_retry_delay_s is None else max_retry_delay_s
        )
        # a server's own delay is waited up to the larger of the two maximums
        self.max_retry_after_s = max(max_retry_after_s, max_retry_delay_s or 0.0)
        self._api_key = api_key or None
        register_secret(self._api_key)  # kept out of the shell's and MCP servers' environment
        self._extra_headers = expand_headers(extra_headers or {}, session_id)
        for name, value in self._extra_headers.items():
            if session_id and session_id in value:
                continue  # a header made around the session's id: an identifier, no secret
            if _CREDENTIAL_HEADER.search(name):  # a gateway's token: a secret like the key
                register_secret(value)
                register_secret(value.rpartition(" ")[2])  # the token of "Bearer <token>"
        self._diagnostics = diagnostics
        self._display = display_url(self.base_url)
        self._client: Any = None  # an http_client.HttpClient, or an httpx.AsyncClient
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._display!r}, model={self.name!r})"

    async def __aenter__(self) -> Self:
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

    @property
    def display_base_url(self) -> str:
        """The base URL without any password, for messages."""
        return self._display

    # -- the provider's part ---------------------------------------------------------------

    def _prepare(self, request: ModelRequest) -> Prepared:
        raise NotImplementedError

    def _decode(self, response: Answer, prepared: Prepared) -> AsyncIterator[ModelEvent]:
        """Decode one streamed answer; raise :class:`Transient` for a retryable failure."""
        raise NotImplementedError

    def _decode_json(self, body: bytes, prepared: Prepared) -> list[ModelEvent]:
        """A server that answered a streaming request with one JSON document."""
        raise self._error(
            "Model server did not stream its answer (got application/json): " + error_text(body)
        )

    def _status_message(self, status: int, reason: str, body: bytes, prepared: Prepared) -> str:
        """The one-line message for a non-2xx answer."""
        return f"Model server returned HTTP {status}{reason}: {error_text(body)}"

    def _is_retryable_status(self, status: int, body: bytes, prepared: Prepared) -> bool:
        return status in RETRYABLE_STATUSES or status >= 500

    def _body_retry_after_s(self, body: bytes) -> float | None:
        """A retry delay the provider puts in its error body (none by default)."""
        return None

    # -- the call --------------------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Run one model call, yielding deltas, then tool calls, then one ``Finished``."""
        prepared = self._prepare(request)
        attempt = 0
        while True:
            yielded = False
            try:
                async with contextlib.aclosing(self._attempt(prepared)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except Transient as failure:
                if yielded or attempt >= self.max_retries:
                    raise failure.error from failure.__cause__
                delay = self._retry_delay(attempt, failure.retry_after_s)
                attempt += 1
                self._note(
                    f"{failure.error.message}; retrying in {delay:.3g}s "
                    f"(attempt {attempt + 1} of {self.max_retries + 1})"
                )
                await asyncio.sleep(delay)

    async def _attempt(self, prepared: Prepared) -> AsyncGenerator[ModelEvent, None]:
        client = self._get_client()
        responded = False
        headers = prepared.headers
        traceparent = request_traceparent()  # telemetry with propagateTraceContext: the span
        if traceparent is not None:
            headers = {**headers, "traceparent": traceparent}
        try:
            async with client.stream(
                "POST", prepared.url, content=prepared.body, headers=headers
            ) as response:
                responded = True
                if not response.is_success:
                    await self._fail_status(response, prepared)
                content_type = response.headers.get("content-type", "")
                if "json" in content_type and "event-stream" not in content_type:
                    body = await read_body(response, MAX_JSON_BODY_BYTES)
                    for event in self._decode_json(body, prepared):
                        yield event
                    return
                async for event in self._decode(response, prepared):
                    yield event
        except (StreamEventTooLarge, BodyTooLarge, BodyUndecodable) as exc:
            # leaving ``client.stream`` above closed the response: nothing more is read
            what = str(exc) if not isinstance(exc, BodyTooLarge) else f"a JSON answer {exc}"
            raise self._error(
                f"Model server sent an unusable answer: {what}; it was closed"
            ) from None
        except Exception as exc:
            kind = transport_failure(exc)
            if kind is None:
                raise
            if kind == "invalid":  # nothing was sent, and a retry would not send it either
                raise self._error(
                    "Model request not sent: a header (the API key?) or the URL holds a "
                    "character HTTP does not allow, such as a line break"
                ) from None
            if kind == "connect":
                message = f"Cannot reach model server at {self._display}: {exc_text(exc)}"
            elif kind == "timeout":
                waited = self.stream_idle_timeout_s if responded else self.timeout_s
                message = f"Model server timed out (no data for {waited:g}s)"
            elif kind == "closed":
                message = (
                    "Connection closed mid-stream"
                    if responded
                    else f"Model server at {self._display} closed the connection: {exc_text(exc)}"
                )
            else:
                message = f"Model request failed: {exc_text(exc)}"
            raise Transient(self._error(message, retryable=True)) from exc

    async def _fail_status(self, response: Any, prepared: Prepared) -> None:
        """Raise the error for a non-2xx answer: transient when retryable."""
        status = response.status_code
        body = await read_head(response, MAX_ERROR_BODY_BYTES)
        should = response.headers.get("x-should-retry", "").strip().lower()
        if should in ("true", "false"):
            retryable = should == "true"
        else:
            retryable = self._is_retryable_status(status, body, prepared)
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        error = self._error(
            self._status_message(status, reason, body, prepared),
            status=status,
            retryable=retryable,
        )
        if retryable:
            hint = retry_after_s(response.headers)
            raise Transient(error, hint if hint is not None else self._body_retry_after_s(body))
        raise error

    def malformed(self, data: str) -> ModelError:
        """The error for an event that is not what the API sends."""
        snippet = data if len(data) <= SNIPPET_CHARS else data[:SNIPPET_CHARS] + "..."
        return self._error(f"Malformed streaming response: {snippet!r}")

    def dropped(self) -> Transient:
        """The failure for a stream that ended before its end marker."""
        return Transient(self._error("Connection closed mid-stream", retryable=True))

    # -- plumbing --------------------------------------------------------------------------

    async def server_window(self) -> int | None:
        """The context window the server's model listing states for this model (vLLM's
        ``max_model_len``, ``context_length``, ``max_input_tokens``, ``inputTokenLimit`` ...);
        ``None`` when it does not say."""
        from headwire.runtime.compaction import window_from_listing

        _, data = await self.get_json(self._models_url(), self._headers())
        return window_from_listing(data, self.name)

    async def list_models(self) -> tuple[int, list[str]]:
        """The status of the server's model listing and the model ids it lists."""
        status, data = await self.get_json(self._models_url(), self._headers())
        return status, self._model_ids(data)

    def _models_url(self) -> str:
        """Where the server lists its models: OpenAI's ``GET {base_url}/models``."""
        return f"{self.base_url}/models"

    @staticmethod
    def _model_ids(data: Any) -> list[str]:
        """The ids of a model listing: OpenAI's ``{"data": [{"id": ...}]}``."""
        items = data.get("data") if isinstance(data, dict) else None
        return [str(m.get("id")) for m in items or [] if isinstance(m, dict) and m.get("id")]

    def _headers(self) -> dict[str, str]:
        """The headers of a request to this server: the key as OpenAI's ``Authorization:
        Bearer`` (a provider with its own scheme overrides this), then the custom headers."""
        headers = self._base_headers()
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        headers.update(self._extra_headers)
        return headers

    def _base_headers(self) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "Accept-Encoding": ACCEPT_ENCODING,
            "User-Agent": f"headwire/{__version__}",
        }

    def _get_client(self) -> Any:
        """This event loop's connection pool: an
        :class:`~headwire.runtime.models.http_client.HttpClient`, or ``httpx``'s when a proxy
        variable applies (``httpx`` speaks to proxies)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # A pool made under another event loop cannot be reused (or closed) here.
            parts = urlsplit(self.base_url)
            local = (parts.hostname or "") in _LOOPBACK_HOSTS
            connect_s = min(self.timeout_s, 10.0)
            if local or not http_client.proxied(self.base_url):
                self._client = http_client.HttpClient(
                    timeout_s=self.timeout_s,
                    connect_timeout_s=connect_s,
                    trust_env=not local,
                    idle_timeout_s=self.stream_idle_timeout_s,
                )
            else:
                from headwire.runtime.models.httpx_lite import httpx

                # httpx has one read timeout, for the answer's head and each gap alike
                read_s = max(self.timeout_s, self.stream_idle_timeout_s)
                self._client = httpx.AsyncClient(
                    timeout=httpx.Timeout(
                        _finite(self.timeout_s),
                        connect=connect_s,
                        read=_finite(read_s),
                    ),
                    verify=not _plain_http(parts.scheme, local),
                )
            self._client_loop = loop
        return self._client

    async def get_json(self, url: str, headers: dict[str, str]) -> tuple[int, Any]:
        """``GET url``: the status and the JSON body (``None`` when not JSON); raises
        :class:`ModelError` when the server cannot be reached."""
        headers = {"Accept-Encoding": ACCEPT_ENCODING, **headers}
        try:
            async with self._get_client().stream("GET", url, headers=headers) as response:
                try:
                    body = await read_body(response, MAX_JSON_BODY_BYTES)
                except (BodyTooLarge, BodyUndecodable):
                    return response.status_code, None
        except Exception as exc:
            if transport_failure(exc) is None:
                raise
            raise self._error(
                f"Cannot reach model server at {self._display}: {exc_text(exc)}", retryable=True
            ) from exc
        try:
            return response.status_code, loads(body)
        except orjson.JSONDecodeError:
            return response.status_code, None

    def _retry_delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and 0 <= retry_after <= self.max_retry_after_s:
            return retry_after
        return float(min(self.retry_base_delay_s * (2 ** min(attempt, 64)), self.max_retry_delay_s))

    def _error(
        self, message: str, *, status: int | None = None, retryable: bool = False
    ) -> ModelError:
        return ModelError(self._redact(message), status=status, retryable=retryable)

    def _redact(self, text: str) -> str:
        """``text`` without the key, any registered secret or a fragment of one at a cut."""
        return redact(text.replace(self._api_key, "***") if self._api_key else text)

    def _note(self, message: str) -> None:
        line = f"headwire: model {self.name}: {self._redact(message)}"
        if self._diagnostics is not None:
            self._diagnostics(line)
        else:
            warn(line)


def _plain_http(scheme: str, local: bool) -> bool:
    """Whether no TLS can be involved: an ``http://`` URL reached directly (a local server, or
    no proxy variable set).  Then no certificate store is loaded (200+ ms at startup)."""
    if scheme != "http":
        return False
    proxies = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
    return local or not any(os.environ.get(name) for name in proxies)


def error_text(body: bytes) -> str:
    """The server's error message: ``{"error": {"message": ...}}`` when present, else the body,
    as one line scrubbed of registered secrets (the :class:`ModelError` that quotes it cuts it
    to :data:`~headwire.runtime.models.base.MAX_ERROR_CHARS`)."""
    try:
        data = loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, list) and len(data) == 1:  # Gemini wraps some errors in a list
        data = data[0]
    if isinstance(data, dict):
        for key in ("error", "message", "detail"):
            if data.get(key):
                return error_field_text(data[key])
    text = redact(body.decode("utf-8", "replace").strip())
    if not text:
        return "(empty response body)"
    return " ".join(text.split())


def error_field_text(error: Any) -> str:
    """The message of an ``error`` field: its ``message``, or the value itself (cut where the
    :class:`ModelError` quoting it is made)."""
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return " ".join(redact(message).split())
    if isinstance(error, str):
        return " ".join(redact(error).split())
    return redact(dumps(error).decode())


def exc_text(exc: BaseException) -> str:
    """An exception as a short message (its class name when it has no text)."""
    text = str(exc).strip()
    return text or type(exc).__name__


def transport_failure(exc: BaseException) -> str | None:
    """What kind of transport failure ``exc`` is, from either client: ``"invalid"`` (the
    request cannot be sent), ``"connect"`` (never reached the server), ``"timeout"``,
    ``"closed"`` (the connection failed or the server broke HTTP), ``"other"``; ``None`` when
    it is not a transport failure."""
    if isinstance(exc, http_client.InvalidRequest | UnicodeEncodeError):  # httpx's too
        return "invalid"
    if isinstance(exc, http_client.ConnectError):
        return "connect"
    if isinstance(exc, http_client.ReadTimeout | http_client.WriteTimeout):
        return "timeout"
    if isinstance(exc, http_client.ReadError | http_client.RemoteProtocolError):
        return "closed"
    if isinstance(exc, http_client.HttpError):
        return "other"
    httpx: Any = sys.modules.get("httpx")  # only a proxied request loads it
    if httpx is None or not isinstance(exc, httpx.HTTPError):
        return None
    if isinstance(exc, httpx.LocalProtocolError):  # its text quotes the header: never shown
        return "invalid"
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return "connect"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return "closed"
    return "other"


def retry_after_s(headers: HeaderFields) -> float | None:
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
    import email.utils  # an HTTP date in Retry-After is rare; most runs never load ``email``

    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    return None


def display_url(url: str) -> str:
    """``url`` without user:password, for messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def int_field(value: Any) -> int:
    """A token count from JSON: a positive int, else 0 (booleans and junk count as 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _finite(seconds: float) -> float | None:
    """A timeout for ``httpx``: ``None`` is its "no limit"."""
    return None if math.isinf(seconds) else seconds
