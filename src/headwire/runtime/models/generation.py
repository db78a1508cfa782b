"""``model.generationConfig``'s request controls (Qwen Code's keys), as a provider client's options.

What each key does to a model request, for every provider unless said:

* ``timeout`` (ms, default 120,000; ``0``: none): connecting, sending the request and waiting
  for the answer's first bytes.  ``QWEN_CODE_API_TIMEOUT_MS`` (digits only) wins over it, as in
  Qwen Code.
* ``streamIdleTimeoutMs`` (ms, default 240,000; ``0``: none): each wait for the next bytes of a
  streamed answer.  It wins over ``QWEN_STREAM_IDLE_TIMEOUT_MS``, as in Qwen Code.
* ``maxRetries`` (default 3): how many times a call that failed before any output (HTTP
  408/429/5xx, a dropped or refused connection, a timeout) is sent again.
* ``retryInitialDelayMs`` (default 500) and ``retryMaxDelayMs`` (default 300,000): the first
  wait before a retry, doubled for each next one and never above the maximum; a server's
  ``Retry-After`` up to the maximum (at least 60 s) is waited instead.
* ``customHeaders``: headers added to every request (they win over headwire's own); a name HTTP
  does not allow, a value with a line break and the headers that frame the exchange
  (:data:`FRAMING_HEADERS`: ``Host``, ``Content-Length``...) are refused.
* ``samplingParams``: OpenAI: its keys go into the request body as they are (``temperature``,
  ``top_p``, ``max_tokens``, ``max_completion_tokens``...).  Anthropic: ``temperature``,
  ``top_p``, ``top_k`` and ``max_tokens``.  Gemini: ``temperature``, ``top_p`` (``topP``),
  ``top_k`` (``topK``) and ``max_tokens`` (``maxOutputTokens``) in its ``generationConfig``.
* ``extra_body`` (OpenAI only): more keys for the request body, after ``samplingParams``; the
  keys headwire writes itself (``model``, ``messages``, ``tools``, ``stream``,
  ``stream_options``) are refused in both.
* ``enableCacheControl`` (default ``true``; Anthropic only): ``false`` sends no
  ``cache_control`` marks (headwire marks none on OpenAI-compatible or Gemini requests).
* ``reasoning``: ``false`` or ``{effort, budget_tokens}``, in each provider's form
  (:mod:`headwire.runtime.models.reasoning`).
* ``toolResultContentFormat`` (OpenAI only): ``parts`` sends a tool message's text as one text
  part, ``string`` (headwire's default) as the text.
* ``contextWindowSize``: read by the context keeper, not sent.
* ``modalities``, ``splitToolMedia``, ``enableRequestMetadata``, ``schemaCompliance``
  (:data:`INERT_KEYS`): read and kept, with nothing to do in headwire.
* a ``customHeaders`` value's ``${session_id}`` is the session's id when the user consents
  (``outboundCorrelation.allowDynamicHeaderValues``); otherwise that header is not sent.

One object is read per model: ``model.generationConfig``, or a ``modelProviders`` entry's
whole (:func:`headwire.runtime.models.select.model_options`).

Nothing here reads the environment or a file: :meth:`GenerationConfig.client_options` is given
the environment.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from headwire.errors import ConfigError
from headwire.records import dataclass, field

__all__ = [
    "DEFAULT_MAX_RETRY_DELAY_S",
    "DEFAULT_STREAM_IDLE_TIMEOUT_S",
    "FRAMING_HEADERS",
    "RESERVED_BODY_KEYS",
    "GenerationConfig",
    "GenerationConfigError",
    "check_body_keys",
    "check_headers",
    "expand_headers",
]

DEFAULT_STREAM_IDLE_TIMEOUT_S = 240.0
"""Each wait for the next bytes of a streamed answer (Qwen Code's ``streamIdleTimeoutMs``)."""
DEFAULT_MAX_RETRY_DELAY_S = 300.0
"""The longest wait before a retry (Qwen Code's ``retryMaxDelayMs`` default)."""
RESERVED_BODY_KEYS = frozenset({"model", "messages", "tools", "stream", "stream_options"})
"""OpenAI body keys headwire writes itself: ``samplingParams`` and ``extra_body`` cannot."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class GenerationConfigError(ConfigError):
    """A ``model.generationConfig`` value headwire cannot use; ``str()`` is the message."""


def _seconds(milliseconds: int | None) -> float | None:
    """``None`` stays unset, ``0`` is no limit (infinite), else seconds."""
    if milliseconds is None:
        return None
    return math.inf if milliseconds == 0 else milliseconds / 1000


def _env_milliseconds(env: Mapping[str, str], name: str) -> int | None:
    """A variable of digits only, as Qwen Code reads it; anything else is ignored."""
    raw = (env.get(name) or "").strip()
    return int(raw) if raw.isascii() and raw.isdigit() else None


FRAMING_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "upgrade",
        "te",
        "trailer",
        "expect",
    }
)
"""Headers that frame the HTTP exchange itself: ``customHeaders`` cannot set them."""
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BAD_VALUE = re.compile(r"[^\t\x20-\x7e]")
"""A control character (a line break) or one outside ASCII, which HTTP/1.1 clients refuse."""


def check_headers(name: str, headers: Mapping[str, str]) -> None:
    """Raise :class:`GenerationConfigError` when ``headers`` (``name`` in the message) holds a
    name HTTP does not allow, a value with a control character (a line break) or a character
    outside ASCII, or one of :data:`FRAMING_HEADERS`."""
    for header, value in headers.items():
        if not _TOKEN.fullmatch(header):
            raise GenerationConfigError(f"{name}: {header!r} is not an HTTP header name")
        if header.lower() in FRAMING_HEADERS:
            raise GenerationConfigError(
                f"{name}: {header} frames the HTTP request: headwire sets it itself"
            )
        if _BAD_VALUE.search(value):
            raise GenerationConfigError(
                f"{name}: the value of {header} holds a control character (a line break?) "
                "or a character outside ASCII"
            )


def check_body_keys(name: str, values: Mapping[str, Any]) -> None:
    """Raise :class:`GenerationConfigError` when ``values`` (``name`` in the message) holds a
    key of :data:`RESERVED_BODY_KEYS`."""
    taken = sorted(RESERVED_BODY_KEYS.intersection(values))
    if taken:
        verb = "is" if len(taken) == 1 else "are"
        raise GenerationConfigError(
            f"{name}: {', '.join(taken)} {verb} written by headwire itself "
            "(the model is chosen with --model or model.name)"
        )


SESSION_ID_PLACEHOLDER = "${session_id}"
"""In a ``customHeaders`` value: the session's id, with the user's consent."""


def expand_headers(headers: Mapping[str, str], session_id: str | None) -> dict[str, str]:
    """``headers`` as sent: :data:`SESSION_ID_PLACEHOLDER` replaced by ``session_id``, or the
    header left out when there is none (never sent with the placeholder); every value then
    checked (:func:`check_headers`: the id holds nothing HTTP refuses)."""
    out = {
        name: value.replace(SESSION_ID_PLACEHOLDER, session_id or "")
        for name, value in headers.items()
        if SESSION_ID_PLACEHOLDER not in value or session_id
    }
    check_headers("customHeaders", out)
    return out


INERT_KEYS = ("modalities", "splitToolMedia", "enableRequestMetadata", "schemaCompliance")
"""Qwen Code keys read and kept, with nothing to do in headwire: no media reaches a model (its
prompts and tool results are text), no DashScope tracing object is sent, and Gemini's tool
schemas go as JSON Schema (``schemaCompliance: "auto"``, the one value taken)."""


def _reasoning(value: Any) -> Mapping[str, Any] | bool | None:
    """``reasoning`` as kept: ``False``, a frozen object, or ``None``."""
    if value is False:
        return False
    return MappingProxyType(dict(value)) if isinstance(value, Mapping) else None


@dataclass(frozen=True, slots=True)
class GenerationConfig:
    """The values of ``model.generationConfig`` (``None``/empty: not set)."""

    timeout_ms: int | None = None
    stream_idle_timeout_ms: int | None = None
    max_retries: int | None = None
    retry_initial_delay_ms: int | None = None
    retry_max_delay_ms: int | None = None
    custom_headers: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    sampling_params: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    extra_body: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    enable_cache_control: bool | None = None
    context_window: int | None = None
    """``contextWindowSize``: the model's window in tokens (read by the context keeper, not
    sent)."""
    reasoning: Mapping[str, Any] | bool | None = None
    """``reasoning``: ``False`` (thinking off) or an object (``effort``, ``budget_tokens``),
    sent in each provider's form (:mod:`headwire.runtime.models.reasoning`)."""
    tool_result_format: str | None = None
    """``toolResultContentFormat``: ``parts`` or ``string`` (OpenAI's tool messages)."""
    inert: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """The :data:`INERT_KEYS` set, as read."""

    @classmethod
    def from_mapping(cls, where: str, values: Mapping[str, Any]) -> GenerationConfig:
        """The values of one ``generationConfig`` object (``where`` names it in messages:
        ``model.generationConfig``, ``modelProviders.openai[0].generationConfig``), already
        checked against the settings schema; raises :class:`GenerationConfigError` for a
        header HTTP does not allow or a body key headwire writes itself."""
        config = cls(
            timeout_ms=values.get("timeout"),
            stream_idle_timeout_ms=values.get("streamIdleTimeoutMs"),
            max_retries=values.get("maxRetries"),
            retry_initial_delay_ms=values.get("retryInitialDelayMs"),
            retry_max_delay_ms=values.get("retryMaxDelayMs"),
            custom_headers=MappingProxyType(dict(values.get("customHeaders") or {})),
            sampling_params=MappingProxyType(dict(values.get("samplingParams") or {})),
            extra_body=MappingProxyType(dict(values.get("extra_body") or {})),
            enable_cache_control=values.get("enableCacheControl"),
            context_window=values.get("contextWindowSize"),
            reasoning=_reasoning(values.get("reasoning")),
            tool_result_format=values.get("toolResultContentFormat"),
            inert=MappingProxyType({k: values[k] for k in INERT_KEYS if k in values}),
        )
        check_headers(f"{where}.customHeaders", config.custom_headers)
        check_body_keys(f"{where}.samplingParams", config.sampling_params)
        check_body_keys(f"{where}.extra_body", config.extra_body)
        return config

    def dynamic_headers(self) -> list[str]:
        """The ``customHeaders`` names whose value holds :data:`SESSION_ID_PLACEHOLDER`."""
        return [k for k, v in self.custom_headers.items() if SESSION_ID_PLACEHOLDER in v]

    def client_options(
        self, env: Mapping[str, str], *, session_id: str | None = None
    ) -> dict[str, Any]:
        """Keywords for a provider client's constructor: what is set, and the idle timeout
        always (:data:`DEFAULT_STREAM_IDLE_TIMEOUT_S` unless set), ``env`` giving
        ``QWEN_CODE_API_TIMEOUT_MS`` and ``QWEN_STREAM_IDLE_TIMEOUT_MS``.

        A ``customHeaders`` value holding ``${session_id}`` is sent with ``session_id`` in its
        place when one is given (the user consented: ``outboundCorrelation.
        allowDynamicHeaderValues``), and not at all otherwise: never with the placeholder
        (:func:`expand_headers`).  The id is passed on too, so that the client does not take
        it for part of a credential header's secret."""
        options: dict[str, Any] = {}
        timeout = _env_milliseconds(env, "QWEN_CODE_API_TIMEOUT_MS")
        timeout_s = _seconds(timeout if timeout is not None else self.timeout_ms)
        if timeout_s is not None:
            options["timeout_s"] = timeout_s
        idle = self.stream_idle_timeout_ms
        if idle is None:
            idle = _env_milliseconds(env, "QWEN_STREAM_IDLE_TIMEOUT_MS")
        idle_s = _seconds(idle)
        options["stream_idle_timeout_s"] = (
            DEFAULT_STREAM_IDLE_TIMEOUT_S if idle_s is None else idle_s
        )
        if self.max_retries is not None:
            options["max_retries"] = self.max_retries
        if self.retry_initial_delay_ms is not None:
            options["retry_base_delay_s"] = self.retry_initial_delay_ms / 1000
        if self.retry_max_delay_ms is not None:
            options["max_retry_delay_s"] = self.retry_max_delay_ms / 1000
        headers = expand_headers(self.custom_headers, session_id)
        if headers:
            options["extra_headers"] = headers
        if session_id is not None and self.dynamic_headers():
            options["session_id"] = session_id  # the client knows the id is no credential
        if self.sampling_params:
            options["sampling_params"] = dict(self.sampling_params)
        if self.extra_body:
            options["extra_body"] = dict(self.extra_body)
        if self.enable_cache_control is not None:
            options["prompt_caching"] = self.enable_cache_control
        if self.reasoning is not None:
            options["reasoning"] = self.reasoning
        if self.tool_result_format is not None:
            options["tool_result_format"] = self.tool_result_format
        return options
