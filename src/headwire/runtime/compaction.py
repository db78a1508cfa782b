"""Keeping a conversation within the model's context window: the pure planning (no I/O).

A conversation is the agent's OpenAI-form message list.  :func:`estimate_tokens` measures
anything the way the request carries it: the bytes of its JSON encoding divided by
:data:`BYTES_PER_TOKEN`.  :class:`Budget` turns the window and ``context.autoCompactThreshold``
into the request size that starts a compaction (:attr:`Budget.trigger`) and the size a
compacted request aims at (:attr:`Budget.target`).

:func:`plan_compaction` splits a conversation into *units* (a user message alone; an assistant
message with the tool results answering it; any other message alone) and decides what a
compaction keeps, in this order:

* the last unit, always (the pending tool results the next call answers, or the new prompt);
* the user's requests (every user message that is not a summary), verbatim: the first always,
  later ones newest first while they take at most half the budget;
* the most recent units, newest first, as far as they fit in what is left;
* everything else is summarized (:func:`summary_transcript` writes it out for the summary
  call, long tool results clipped); the summary goes in one user message starting with
  :data:`SUMMARY_HEADER`, after the requests and before the kept recent units.

:func:`compacted` builds the new conversation from a plan and a summary.  Invariants (property
tests in ``tests/unit/runtime/test_compaction.py``): the new conversation keeps the first user
request and the whole last unit; every tool message in it follows the assistant message that
asked for it; when the requests and the last unit fit in the budget, the new conversation
(with a summary of at most :data:`SUMMARY_MAX_CHARS` characters) is within the budget.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from headwire.records import dataclass
from headwire.wire import encode

Message = dict[str, Any]

BYTES_PER_TOKEN = 4
"""The estimate: one token per 4 bytes of JSON (calibrated against real usage when known)."""
DEFAULT_WINDOW = 131_072
"""The window assumed when neither the settings, the model table nor the server say."""
DEFAULT_THRESHOLD = 0.85
"""``context.autoCompactThreshold``'s default: compact before a request passes 85% of the window."""
SUMMARY_RESERVE = 2_048
"""Tokens kept free under the trigger for the summary answer (at most an eighth of the window;
so windows under 13,654 tokens compact earlier than the threshold says)."""
TARGET_FRACTION = 0.45
"""A compacted request aims at this fraction of the trigger, so compactions stay rare."""
SUMMARY_MAX_CHARS = 6_000
"""A summary longer than this is cut (its tokens are counted in the budget)."""
SUMMARY_HEADER = "[headwire: summary of the earlier conversation, written when it was compacted]"
CLIP_CHARS = 1_500
"""Each tool result or message is clipped to this many characters in the summary transcript."""
CLEARED_TOOL_RESULT = "[Old tool result content cleared to save context.]"


@functools.cache
def _window_in_error() -> tuple[re.Pattern[str], ...]:
    """The texts that give a window's size in an error (compiled at the first error: most runs
    see none)."""
    return (
        re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
        re.compile(r"\d+ tokens? > (\d+) maximum", re.IGNORECASE),
        re.compile(r"maximum number of tokens allowed \((\d+)\)", re.IGNORECASE),
        re.compile(r"n_ctx\W{0,4}(\d+)", re.IGNORECASE),
        re.compile(r"context (?:size|window|length) (?:of |is )?\(?(\d{3,})", re.IGNORECASE),
    )


@functools.cache
def _overflow() -> re.Pattern[str]:
    """What a provider says when a request is longer than the window (compiled at first use)."""
    return re.compile(
        r"context_length_exceeded|maximum context length|prompt is too long|prompt too long"
        r"|exceeds? the (?:available )?context|context (?:size|window|length) (?:has been |was )?"
        r"exceeded|exceed_context_size|input (?:token count|is too long)|too many (?:input )?tokens"
        r"|exceeds the maximum number of tokens|reduce the length of the messages",
        re.IGNORECASE,
    )


def estimate_tokens(value: Any) -> int:
    """Tokens of ``value`` as a request carries it: JSON bytes / :data:`BYTES_PER_TOKEN`."""
    return -(-len(encode(value)) // BYTES_PER_TOKEN)


def is_context_overflow(message: str) -> bool:
    """Whether a provider's error says the request is longer than the model's window
    (OpenAI/vLLM ``context_length_exceeded``, Anthropic ``prompt is too long``, Gemini's
    token count, llama.cpp's and Ollama's context-size messages)."""
    return _overflow().search(message) is not None


def window_in_error(message: str) -> int | None:
    """The window a "too long" error states, when it states one."""
    for pattern in _window_in_error():
        found = pattern.search(message)
        if found is not None and int(found.group(1)) >= 256:
            return int(found.group(1))
    return None


WINDOW_FIELDS = (
    "max_model_len",
    "context_length",
    "loaded_context_length",
    "max_context_length",
    "context_window",
    "max_input_tokens",
    "inputTokenLimit",
)
"""Where model listings say the window: vLLM, OpenRouter/LM Studio, LM Studio, llama.cpp and
others, OpenAI-compatible gateways, Anthropic, Gemini."""


def window_from_listing(data: Any, model: str) -> int | None:
    """The window of ``model`` in a ``GET .../models`` answer (``{"data": [...]}`` or Gemini's
    ``{"models": [...]}``): the entry with its id (or the only entry), first field of
    :data:`WINDOW_FIELDS` that is a positive integer."""
    if not isinstance(data, dict):
        return None
    items = data.get("data", data.get("models"))
    if not isinstance(items, list):
        return None
    entries = [e for e in items if isinstance(e, dict)]
    chosen = [
        e for e in entries if model in (e.get("id"), str(e.get("name", "")).removeprefix("models/"))
    ]
    if not chosen and len(entries) == 1:
        chosen = entries
    for entry in chosen[:1]:
        for name in WINDOW_FIELDS:
            value = entry.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


@dataclass(frozen=True, slots=True)
class Budget:
    """The token limits of one model: its ``window`` and ``threshold`` (a fraction, 0 < t <= 1)."""

    window: int
    threshold: float = DEFAULT_THRESHOLD

    @property
    def trigger(self) -> int:
        """A request estimated above this many tokens is compacted first."""
        reserve = min(SUMMARY_RESERVE, self.window // 8)
        return max(1, int(min(self.threshold * self.window, self.window - reserve)))

    @property
    def target(self) -> int:
        """What a compacted request aims at (the whole request: system prompt, tools, messages)."""
        return max(1, int(self.trigger * TARGET_FRACTION))


def is_summary(message: Message) -> bool:
    """A summary this module wrote (a user message starting with :data:`SUMMARY_HEADER`)."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith(SUMMARY_HEADER)
    )


def _is_request(message: Message) -> bool:
    return message.get("role") == "user" and not is_summary(message)


def units(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """``[start, end)`` index ranges: an assistant message with the tool messages after it, or
    one other message."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(messages)
    while i < n:
        j = i + 1
        if messages[i].get("role") == "assistant":
            while j < n and messages[j].get("role") == "tool":
                j += 1
        out.append((i, j))
        i = j
    return out


@dataclass(frozen=True, slots=True)
class Plan:
    """What a compaction keeps: ``requests`` (indexes of user requests moved to the head, in
    order), ``keep_from`` (the kept recent messages are ``messages[keep_from:]``) and
    ``summarized`` (the indexes written into the summary)."""

    requests: tuple[int, ...]
    keep_from: int
    summarized: tuple[int, ...]


def plan_compaction(
    messages: Sequence[Message], budget: int, cost: Callable[[Message], int] = estimate_tokens
) -> Plan | None:
    """What to keep so the new conversation takes at most ``budget`` tokens (see the module
    docstring); ``None`` when nothing can be summarized."""
    spans = units(messages)
    if len(spans) < 2:
        return None
    last_start = spans[-1][0]
    used = sum(cost(m) for m in messages[last_start:])
    used += (SUMMARY_MAX_CHARS + len(SUMMARY_HEADER)) // BYTES_PER_TOKEN + 8
    request_idx = [s for s, e in spans[:-1] if _is_request(messages[s])]
    head: list[int] = []
    if request_idx:
        head.append(request_idx[0])
        used += cost(messages[request_idx[0]])
        room = budget // 2
        spent = used
        for index in reversed(request_idx[1:]):
            c = cost(messages[index])
            if spent + c - used <= room and spent + c <= budget:
                head.append(index)
                spent += c
        used = spent
    head_set = set(head)
    keep_from = last_start
    for start, end in reversed(spans[:-1]):
        if start in head_set:  # a request already paid for moves into the kept tail
            keep_from = start
            continue
        c = sum(cost(m) for m in messages[start:end])
        if used + c > budget:
            break
        used += c
        keep_from = start
    requests = tuple(sorted(i for i in head_set if i < keep_from))
    summarized = tuple(
        i
        for start, end in spans
        if start < keep_from and start not in head_set
        for i in range(start, end)
    )
    if not summarized:
        return None
    return Plan(requests, keep_from, summarized)


def summary_message(summary: str) -> Message:
    """The user message that carries a summary (cut to :data:`SUMMARY_MAX_CHARS`)."""
    text = summary.strip()
    if len(text) > SUMMARY_MAX_CHARS:
        text = text[: SUMMARY_MAX_CHARS - 3] + "..."
    return {"role": "user", "content": f"{SUMMARY_HEADER}\n{text}"}


def compacted(messages: Sequence[Message], plan: Plan, summary: str) -> list[Message]:
    """The new conversation: the requests, the summary, the kept recent messages."""
    return [
        *(messages[i] for i in plan.requests),
        summary_message(summary),
        *messages[plan.keep_from :],
    ]


def _clip(text: str, limit: int = CLIP_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters left out ...]\n{text[-half:]}"


def _content_text(message: Message) -> str:
    content = message.get("content")
    if content is None:
        return ""
    return content if isinstance(content, str) else encode(content).decode()


def summary_transcript(messages: Sequence[Message], plan: Plan, max_chars: int) -> str:
    """The part of the conversation a summary replaces, written out for the summary call:
    the requests first, then each summarized message (each clipped), oldest messages left
    out when the whole passes ``max_chars``."""
    lines: list[str] = []
    for i in plan.requests:
        lines.append("USER REQUEST:\n" + _clip(_content_text(messages[i]), CLIP_CHARS * 4))
    body: list[str] = []
    for i in plan.summarized:
        message = messages[i]
        role = message.get("role")
        text = _content_text(message)
        if is_summary(message):
            body.append("EARLIER SUMMARY:\n" + text.removeprefix(SUMMARY_HEADER).strip())
        elif role == "user":
            body.append("USER:\n" + _clip(text, CLIP_CHARS * 2))
        elif role == "assistant":
            parts = [_clip(text)] if text else []
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                parts.append(f"CALL {fn.get('name')} {_clip(str(fn.get('arguments')), 400)}")
            body.append("ASSISTANT:\n" + "\n".join(parts))
        else:
            body.append(f"RESULT ({role}):\n" + _clip(text))
    head = "\n\n".join(lines)
    room = max_chars - len(head)
    kept: list[str] = []
    for block in reversed(body):
        if room - len(block) - 2 < 0:
            kept.append(f"[{len(body) - len(kept)} earlier steps left out]")
            break
        kept.append(block)
        room -= len(block) + 2
    return "\n\n".join([head, *reversed(kept)] if head else reversed(kept))


SUMMARY_SYSTEM = (
    "You condense a coding agent's conversation so it can continue its work with less context. "
    "Write a factual summary in plain text: the user's goal and constraints; what was done so "
    "far (commands run, files read or changed, with their key results and any numbers that "
    "matter); what failed and why; the current state; and the next steps. Keep names, paths "
    "and identifiers exact. Do not invent anything. At most 600 words."
)
SUMMARY_REQUEST = (
    "Summarize the conversation above as instructed. It will replace the older part of the "
    "conversation; the user's requests and the latest steps are kept verbatim."
)


def clear_old_tool_results(messages: list[Message], threshold_chars: float, keep: int) -> int:
    """When the tool results hold more than ``threshold_chars`` characters, replace the oldest
    ones' content (all but the last ``keep``, at least 1) by :data:`CLEARED_TOOL_RESULT` until
    the total is at most half of it; returns how many were cleared (``threshold_chars < 0``:
    never)."""
    if threshold_chars < 0:
        return 0
    results = [m for m in messages if m.get("role") == "tool"]
    sizes = [len(_content_text(m)) for m in results]
    total = sum(sizes)
    if total <= threshold_chars:
        return 0
    cleared = 0
    for message, size in zip(results[: max(0, len(results) - max(1, keep))], sizes, strict=False):
        if total <= threshold_chars / 2:
            break
        if message.get("content") == CLEARED_TOOL_RESULT:
            continue
        message["content"] = CLEARED_TOOL_RESULT
        total -= size - len(CLEARED_TOOL_RESULT)
        cleared += 1
    return cleared
