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
blank); the display joins every part, media as ``[mime]``, and is the model text itself (the
same object) when there is no media.  Blocks are read by attribute, so both the SDK's models
and simple stand-ins work.

Because parts are joined by newlines, a run of adjacent plain text blocks renders exactly as
one block holding their texts joined by ``\n``: :class:`TextRunFolder` folds such runs (into
blocks of about eight million characters) as a large result streams in (see
:mod:`headwire.runtime.mcp.large`), so memory follows the text, not the number of blocks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from headwire.records import dataclass, field


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
    joined = texts[0] if len(texts) == 1 else "\n".join(texts)
    model_text = joined
    if not has_media and (not joined or joined.isspace()):  # ``not strip()``, without a copy
        model_text = f"({registered_name} completed with no output)"
    if not has_media:
        return Rendered(model_text, joined)  # every part is text: the display is the same text
    shown = [p.text if p.text is not None else f"[{p.mime}]" for p in parts]
    display = shown[0] if len(shown) == 1 else "\n".join(shown)
    return Rendered(model_text, display)


_FOLD_PIECES = 1024
"""Texts joined into one chunk at a time while a run is folded."""
_FOLD_CHARS = 8 << 20
"""A folded block holds about this many characters at most: a run becomes a few long blocks
(which render joins anyway), never one copy of the whole run made while the parse holds the
response line; and each is large enough (over glibc's pinned 4 MiB mmap threshold, see
:mod:`headwire.io.memory`) to be its own mapping, returned to the system once freed."""


def _is_plain_text(block: Any) -> bool:
    """Exactly ``{"type": "text", "text": str}``: a block whose only part is its text."""
    return (
        isinstance(block, dict)
        and len(block) == 2
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


@dataclass(slots=True)
class TextRunFolder:
    """Content blocks in, the same blocks out, with each run of adjacent plain text blocks
    folded into as few ``{"type": "text", "text": ...}`` blocks as hold about
    :data:`_FOLD_CHARS` characters each, their texts joined by ``"\n"``.

    :func:`render` gives the folded list the same model text and display as the original
    (for a result without ``structuredContent`` and not ``isError``), because it joins adjacent
    text parts with ``"\n"`` too.  A block that is not plain text, and a plain text block that
    folds with no other, is kept as the very object, in order.
    """

    _out: list[Any] = field(default_factory=list)
    _first: Any = None  # the run's first block, kept as is when nothing folds with it
    _pieces: list[str] = field(default_factory=list)  # texts not yet joined into a chunk
    _chunks: list[str] = field(default_factory=list)  # joined pieces of the current block
    _chars: int = 0

    def append(self, block: Any) -> None:
        """Take the next block (named like ``list.append``, so a parser can fill it)."""
        if not _is_plain_text(block):
            self._flush()
            self._out.append(block)
            return
        text: str = block["text"]
        if self._first is None:
            self._first = block
        self._pieces.append(text)
        self._chars += len(text) + 1
        if len(self._pieces) >= _FOLD_PIECES:  # never hold a block object per text
            self._chunks.append("\n".join(self._pieces))
            self._pieces.clear()
        if self._chars >= _FOLD_CHARS:
            self._flush()

    def _flush(self) -> None:
        if self._first is None:
            return
        if not self._chunks and len(self._pieces) == 1:
            self._out.append(self._first)
        else:
            self._chunks.append("\n".join(self._pieces))
            self._pieces.clear()
            text = self._chunks[0] if len(self._chunks) == 1 else "\n".join(self._chunks)
            self._out.append({"type": "text", "text": text})
        self._first = None
        self._pieces.clear()
        self._chunks.clear()
        self._chars = 0

    def blocks(self) -> list[Any]:
        """The folded blocks (call once, after the last :meth:`append`)."""
        self._flush()
        return self._out


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
