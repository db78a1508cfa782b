"""What a model provider streams back to the agent loop.

The conversation is kept in OpenAI chat-completions form (a list of ``{"role": ...}`` dicts with
``tool_calls`` on assistant messages and ``tool_call_id`` on tool messages), which the OpenAI
provider sends as is and the scripted model reads only to know where it is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from headwire.errors import ModelServerError
from headwire.events import Usage as Usage


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


class ModelError(ModelServerError):
    """A model call failed; ``message`` is what the user sees on stderr or in an error result."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
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
