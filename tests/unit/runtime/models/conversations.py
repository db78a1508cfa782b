"""A hypothesis strategy for conversations in the form the agent keeps them (OpenAI chat)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_ids = st.text(alphabet="abcXYZ019_-:.", min_size=1, max_size=10)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A system prompt (maybe), a user prompt, then turns: assistant text and/or tool calls,
    a tool message answering each call, and now and then another user prompt."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(_text)})
    messages.append({"role": "user", "content": draw(_text)})
    used: set[str] = set()
    for _ in range(draw(st.integers(0, 4))):
        ids = [i for i in draw(st.lists(_ids, max_size=3, unique=True)) if i not in used]
        used.update(ids)
        assistant: dict[str, Any] = {"role": "assistant", "content": draw(st.none() | _text)}
        if ids:
            assistant["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": draw(st.sampled_from(["read_file", "ls"])),
                        "arguments": json.dumps({"path": draw(_text)}),
                    },
                }
                for call_id in ids
            ]
        messages.append(assistant)
        for call_id in ids:
            messages.append({"role": "tool", "tool_call_id": call_id, "content": draw(_text)})
        if not ids or draw(st.booleans()):
            messages.append({"role": "user", "content": draw(_text)})
    return messages
