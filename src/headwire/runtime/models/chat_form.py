"""Reading the conversation headwire keeps in OpenAI chat-completions form.

Every provider converts the same list of ``{"role": ...}`` messages (see
:mod:`headwire.runtime.models.base`) into its own request; these are the pieces they share.
"""

from __future__ import annotations

from typing import Any

import orjson

from headwire.wire import loads


def text_of(content: Any) -> str:
    """The text of a message ``content``: a string, or the concatenated text of its parts
    (``{"type": "text", "text": ...}`` or plain strings); ``None`` is ``""``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return "" if content is None else str(content)


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """A call's ``function.arguments`` (JSON text, or already an object) as an object;
    ``{}`` when it is anything else."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str) and arguments.strip():
        try:
            value = loads(arguments)
        except orjson.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}
