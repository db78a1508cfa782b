"""What a model provider streams back to the agent loop.

The conversation is kept in OpenAI chat-completions form (a list of ``{"role": ...}`` dicts with
``tool_calls`` on assistant messages and ``tool_call_id`` on tool messages), which the OpenAI
provider sends as is and the scripted model reads only to know where it is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from headwire.errors import ModelServerError
from headwire.events import Usage as Usage
from headwire.records import dataclass, field
from headwire.runtime.redact import redact

MAX_ERROR_CHARS = 500
"""The longest model error message: a server's text (an error body, a mid-stream error event)
is quoted in it, and it reaches the ``result`` line, stderr and the recording."""
_SCANNED = MAX_ERROR_CHARS * 8
"""How much of a message is read to make the short one (runs of whitespace collapse)."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of assistant text (``text`` blocks, ``text_delta`` stream events)."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of reasoning text (``thinking`` blocks); ``subject`` becomes the signature."""

    text: str
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete tool call requested by the model (``tool_use`` blocks)."""

    call_id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Finished:
    """End of one model call, with the usage the provider reported (if any) and why the model
    stopped (:func:`stop_reason_of`: ``end_turn``, ``tool_use``, ``max_tokens``, ``refusal``;
    ``None`` when the provider did not say)."""

    usage: Usage | None = None
    stop_reason: str | None = None


_STOP_REASONS = {
    # OpenAI chat completions
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
    # Anthropic messages
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "pause_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
    # Gemini
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "BLOCKLIST": "refusal",
    "SPII": "refusal",
    "IMAGE_SAFETY": "refusal",
}


def stop_reason_of(raw: str | None) -> str | None:
    """A provider's finish reason in Claude Code's words: ``end_turn``, ``tool_use``,
    ``max_tokens`` (the answer was cut at the output limit) or ``refusal`` (the provider's
    safety system stopped it); ``None`` for a reason with no equivalent."""
    return _STOP_REASONS.get(raw) if raw else None


ModelEvent = TextDelta | ThinkingDelta | ToolCall | Finished


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call: the conversation so far and the tools offered (OpenAI function schema)."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


def error_message(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` as one line of at most ``limit`` characters (``...`` added when cut), registered
    secrets scrubbed before the cut and after it (a cut through a secret leaves a fragment only
    the second scrub sees).  Only the first few thousand characters are read."""
    head = text[: max(limit * 8, _SCANNED)]
    flat = " ".join(redact(head).split())
    if len(flat) <= limit and len(head) == len(text):
        return flat
    return redact(flat[:limit]) + "..."


class ModelError(ModelServerError):
    """A model call failed; ``message`` is what the user sees on stderr or in an error result:
    one line of at most :data:`MAX_ERROR_CHARS` characters (:func:`error_message`), whoever
    made it; this is the one place model error text is cut."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        message = error_message(message)
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable


class Model(Protocol):
    """A model provider.  ``stream`` yields deltas and tool calls, then exactly one ``Finished``."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Run one model call; raises :class:`ModelError` on failure."""
        ...
