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


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call (``usage`` on the wire: input/output/cache-read/total).

    ``input_tokens`` counts the whole prompt, cached parts included; ``cached_tokens`` is the
    part read from the provider's prompt cache (``cache_read_input_tokens`` on the wire) and
    ``cache_write_tokens`` the part written to it (Anthropic's ``cache_creation_input_tokens``;
    not on the wire, 0 when the provider does not say).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.total_tokens + other.total_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


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
    """End of one model call, with the usage the provider reported (if any)."""

    usage: Usage | None = None


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
