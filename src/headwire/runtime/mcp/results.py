"""A ``CallToolResult`` as texts, following Qwen Code 0.24.4's MCP tool.

Content blocks become *parts*:

* ``text`` -> its text;
* ``image`` / ``audio`` -> ``[Tool 'T' provided the following image data with mime-type: M]``
  plus the media (shown as ``[M]``; the model only gets the sentence);
* ``resource`` -> its ``text``, or for a ``blob`` the sentence ``... embedded resource with
  mime-type: M]`` plus the media;
* ``resource_link`` -> ``Resource Link: <title or name> at <uri>``;
* anything else is dropped.

``structuredContent`` is prepended as compact JSON unless a text part already equals it.  The
model text is the text parts joined by newlines (``(<tool> completed with no output)`` when
blank); the display joins every part, media as ``[mime]``.  Blocks are read by attribute, so
both the SDK's models and simple stand-ins work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Part:
    """A text part (``mime`` is ``None``) or a media part (``text`` is ``None``)."""

    text: str | None = None
    mime: str | None = None


@dataclass(frozen=True, slots=True)
class Rendered:
    """What the model reads and what the user is shown."""

    model_text: str
    display: str


def compact_json(value: Any) -> str:
    """``JSON.stringify`` spelling: no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _block_parts(block: Any, tool: str) -> list[Part]:
    kind = getattr(block, "type", None)
    if kind == "text":
        text = getattr(block, "text", None)
        return [Part(text=text)] if isinstance(text, str) else []
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "application/octet-stream"
        return [
            Part(text=f"[Tool '{tool}' provided the following {kind} data with mime-type: {mime}]"),
            Part(mime=mime),
        ]
    if kind == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        if isinstance(text, str) and text:
            return [Part(text=text)]
        if getattr(resource, "blob", None):
            mime = getattr(resource, "mime_type", None) or "application/octet-stream"
            sentence = (
                f"[Tool '{tool}' provided the following embedded resource with mime-type: {mime}]"
            )
            return [Part(text=sentence), Part(mime=mime)]
        return []
    if kind == "resource_link":
        label = getattr(block, "title", None) or getattr(block, "name", None)
        return [Part(text=f"Resource Link: {label} at {getattr(block, 'uri', '')}")]
    return []


def result_parts(tool: str, content: Any, structured: Any = None) -> list[Part]:
    """The parts of a result's ``content`` (and ``structuredContent``)."""
    head = [Part(text=compact_json(structured))] if structured is not None else []
    if not isinstance(content, Sequence) or isinstance(content, (str, bytes)):
        return head or [Part(text="[Error: Could not parse tool response]")]
    parts = [part for block in content for part in _block_parts(block, tool)]
    if head and any(part.text == head[0].text for part in parts):
        return parts
    return head + parts


def render(tool: str, registered_name: str, content: Any, structured: Any = None) -> Rendered:
    """Model text and display of a successful result.

    ``tool`` is the server's tool name (used in the media sentences), ``registered_name`` the
    ``mcp__server__tool`` name (used in the no-output sentence).
    """
    parts = result_parts(tool, content, structured)
    texts = [p.text for p in parts if p.text is not None]
    has_media = any(p.mime is not None for p in parts)
    model_text = texts[0] if len(texts) == 1 else "\n".join(texts)
    if not model_text.strip() and not has_media:
        model_text = f"({registered_name} completed with no output)"
    shown = [p.text if p.text is not None else f"[{p.mime}]" for p in parts]
    display = shown[0] if len(shown) == 1 else "\n".join(shown)
    return Rendered(model_text, display)


def error_text(tool: str, args: dict[str, Any], raw_result: dict[str, Any]) -> str:
    """Upstream's model text for an ``isError`` result."""
    call = compact_json({"name": tool, "args": args})
    response = [
        {
            "functionResponse": {
                "name": tool,
                "response": {"error": raw_result, "content": raw_result.get("content")},
            }
        }
    ]
    return (
        f"MCP tool '{tool}' reported tool error for function call: {call} with response: "
        f"{compact_json(response)}"
    )


def error_display(tool: str) -> str:
    """Upstream's display for an ``isError`` result."""
    return f"Error: MCP tool '{tool}' reported an error."
