"""The conversation (OpenAI chat form) as an Anthropic Messages request body.

headwire keeps every conversation in OpenAI chat-completions form (see
:mod:`headwire.runtime.models.base`).  For ``POST /v1/messages`` it becomes:

* ``system`` messages: one ``system`` text block (joined by blank lines);
* ``user`` messages: ``{"role": "user", "content": [text blocks]}``;
* ``assistant`` messages: ``thinking`` / ``redacted_thinking`` blocks when this process saw them
  (they carry the provider's signature and cannot be rebuilt from text), then a ``text``
  block, then one ``tool_use`` block per call (``input`` is the parsed arguments);
* ``tool`` messages: ``tool_result`` blocks in a ``user`` message, consecutive results (and a
  user text right after them) merged into one message, as the API requires alternating roles;
* tools: ``{"name", "description", "input_schema"}``.

Empty text is never sent (the API rejects empty text blocks).  Tool-use ids are reduced to the
characters the API accepts (``[A-Za-z0-9_-]``), the same way on both sides of a call.  Prompt
caching: ``cache_control: {"type": "ephemeral"}`` marks the system block, the last tool and
the last block of the last message (3 of the 4 breakpoints the API allows).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from headwire.runtime.models.chat_form import parse_arguments, text_of

JsonDict = dict[str, Any]

_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_EPHEMERAL = {"type": "ephemeral"}
_CACHEABLE = frozenset({"text", "tool_use", "tool_result", "image", "document"})


def tool_use_id(call_id: str) -> str:
    """``call_id`` as a valid Anthropic tool-use id (unchanged when already valid)."""
    return _BAD_ID_CHARS.sub("_", call_id) or "toolu_empty"


def convert_tools(tools: list[JsonDict], *, cache: bool = True) -> list[JsonDict]:
    """OpenAI function tools as Anthropic tools (the last one marked for caching)."""
    out: list[JsonDict] = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if not isinstance(function, dict) or not function.get("name"):
            continue
        schema = function.get("parameters")
        schema = dict(schema) if isinstance(schema, dict) else {}
        schema.setdefault("type", "object")
        entry: JsonDict = {"name": function["name"], "input_schema": schema}
        if function.get("description"):
            entry["description"] = function["description"]
        out.append(entry)
    if out and cache:
        out[-1] = {**out[-1], "cache_control": _EPHEMERAL}
    return out


def convert_messages(
    messages: list[JsonDict],
    replay: Mapping[str, list[JsonDict]] | None = None,
    *,
    cache: bool = True,
) -> tuple[list[JsonDict] | None, list[JsonDict]]:
    """``(system, messages)`` of the request body for ``messages`` in OpenAI form.

    ``replay`` maps the (converted) id of an assistant turn's first tool call to the
    ``thinking`` blocks that turn began with, to send them back unchanged.
    """
    system_parts: list[str] = []
    out: list[JsonDict] = []

    def add(role: str, blocks: list[JsonDict]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            text = text_of(message.get("content"))
            if text:
                system_parts.append(text)
        elif role == "user":
            add("user", _text_blocks(message.get("content")))
        elif role == "assistant":
            add("assistant", _assistant_blocks(message, replay or {}))
        elif role == "tool":
            result: JsonDict = {
                "type": "tool_result",
                "tool_use_id": tool_use_id(str(message.get("tool_call_id") or "")),
            }
            text = text_of(message.get("content"))
            if text:
                result["content"] = text
            add("user", [result])
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(continue)"}]})
    if cache and out:
        blocks = out[-1]["content"]
        for position in range(len(blocks) - 1, -1, -1):
            if blocks[position].get("type") in _CACHEABLE:
                blocks[position] = {**blocks[position], "cache_control": _EPHEMERAL}
                break
    system: list[JsonDict] | None = None
    if system_parts:
        block: JsonDict = {"type": "text", "text": "\n\n".join(system_parts)}
        if cache:
            block["cache_control"] = _EPHEMERAL
        system = [block]
    return system, out


def _text_blocks(content: Any) -> list[JsonDict]:
    text = text_of(content)
    return [{"type": "text", "text": text}] if text.strip() else []


def _assistant_blocks(message: JsonDict, replay: Mapping[str, list[JsonDict]]) -> list[JsonDict]:
    blocks: list[JsonDict] = []
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    uses: list[JsonDict] = []
    for call in calls:
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        uses.append(
            {
                "type": "tool_use",
                "id": tool_use_id(str(call.get("id") or "")),
                "name": str(function.get("name") or ""),
                "input": parse_arguments(function.get("arguments")),
            }
        )
    if uses:
        blocks += replay.get(uses[0]["id"], [])
    blocks += _text_blocks(message.get("content"))
    return blocks + uses


def last_tool_turn_lacks_thinking(messages: list[JsonDict]) -> bool:
    """Whether the last assistant message uses tools without starting with a thinking block
    (the API then refuses a request with thinking enabled)."""
    for message in reversed(messages):
        if message["role"] != "assistant":
            continue
        blocks = message["content"]
        uses_tools = any(b.get("type") == "tool_use" for b in blocks)
        starts_thinking = bool(blocks) and blocks[0].get("type") in (
            "thinking",
            "redacted_thinking",
        )
        return uses_tools and not starts_thinking
    return False
