"""Reading a large ``tools/call`` response in memory that follows its bytes, not its blocks.

A result of 374,000 small text blocks is 26 MB of JSON, but the SDK's parser took about 640
MB to read it and its models (one per block) 180 MB more.  A line over
:data:`STREAM_PARSE_BYTES` is read here instead, into plain values the SDK then only
validates.  When the line holds many objects, it is parsed with an incremental parser (ijson's
C backend) and each ``result.content`` block, as soon as it is complete, goes to a
:class:`~headwire.runtime.mcp.results.TextRunFolder`, which folds runs of plain text blocks
into one block as they stream: only the folded list is ever held, and the SDK validates a
handful of blocks instead of one model per block.  A line of a few long texts is parsed whole
by orjson and folded the same way, its long strings decoded apart from the line
(:mod:`headwire.runtime.mcp.long_strings`), which is emptied before they are joined: the line
and its text, never the parser's copy of the line as well.

Folding changes nothing anyone sees: rendering joins adjacent text parts with ``\\n`` either
way (:func:`~headwire.runtime.mcp.results.render`, a property test checks it).  It is only
kept when the finished result is one whose text is rendered from its parts: not ``isError``
(the error text quotes the raw content) and without ``structuredContent`` (which is compared
with each text part).  A line the incremental parser would read differently from the SDK's
parser (an escaped surrogate) is parsed whole instead; one that orjson would read differently
(an integer beyond 64 bits) or refuses is left to the SDK's parser.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from headwire.runtime.mcp.long_strings import read_long_strings
from headwire.runtime.mcp.results import TextRunFolder

__all__ = ["STREAM_PARSE_BYTES", "read_tool_response"]

STREAM_PARSE_BYTES = 1 << 20
"""Lines longer than this are read by :func:`read_tool_response` first."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
"""An escaped surrogate, which ijson's backend would replace where the SDK keeps it."""
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
"""A number that may not fit 64 bits, which orjson and ijson would read as a float (the SDK's
parser keeps the integer): such a line (or a long run of digits in a string) goes to the SDK."""

_CONTENT_PATH = ("result", "content")

_LINE_BYTES_PER_OBJECT = 1024
"""A line with at most one ``{`` per this many bytes is parsed whole (its tree is small)."""


def read_tool_response(line: bytes | bytearray) -> dict[str, Any] | None:
    """The JSON-RPC message in ``line``, parsed into plain Python values with the text runs of a
    ``result.content`` folded where that changes nothing; ``None`` when the line must be parsed
    by the SDK's own parser (JSON these parsers do not read exactly as it does).

    A line of few objects (about one per KiB or less: a few long texts) is parsed whole with
    orjson, whose tree then costs little more than the line, its long strings apart from it
    (:mod:`headwire.runtime.mcp.long_strings`: a ``bytearray`` line is then emptied); a line of
    many objects is parsed incrementally with ijson, so the blocks never exist all at once.
    """
    if _LONG_DIGITS.search(line) is not None:
        return None
    if line.count(b"{") * _LINE_BYTES_PER_OBJECT <= len(line):
        return _read_whole(line)
    folded = _read_streaming(line)
    return folded if folded is not None else _read_whole(line)


def _foldable(result: dict[str, Any]) -> bool:
    """Whether rendering ``result`` is independent of how its text runs are split."""
    return result.get("isError") is not True and result.get("structuredContent") is None


def _read_whole(line: bytes | bytearray) -> dict[str, Any] | None:
    # A line of a few very long texts: read without the parser's copy of it, and emptied.
    root = read_long_strings(line) if isinstance(line, bytearray) else None
    if root is None:
        try:
            root = orjson.loads(line)
        except orjson.JSONDecodeError:  # e.g. an escaped lone surrogate, an integer over 64 bits
            return None
    if not isinstance(root, dict):
        return None
    result = root.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), list) and _foldable(result):
        folder = TextRunFolder()
        content = result["content"]
        result["content"] = None
        for block in content:
            folder.append(block)
        del content
        result["content"] = folder.blocks()
    return root


def _read_streaming(line: bytes | bytearray) -> dict[str, Any] | None:
    if _SURROGATE_ESCAPE.search(line) is not None:
        return None
    import ijson  # type: ignore[import-untyped]  # on first use: only large results need it

    folder = TextRunFolder()
    try:
        root = _build(ijson.basic_parse(_Reader(line), use_float=True), folder)
    except (ijson.JSONError, ValueError, OverflowError):
        return None
    if not isinstance(root, dict) or not isinstance(root.get("result"), dict):
        return None
    result = root["result"]
    if result.get("content") is not folder or not _foldable(result):
        return None
    result["content"] = folder.blocks()
    return root


def _build(events: Any, folder: TextRunFolder) -> Any:
    """Assemble the parse ``events`` into Python values, with ``folder`` standing in for the
    list at ``result.content`` of the top-level object (it receives each block once built)."""
    stack: list[Any] = []  # open containers
    keys: list[Any] = []  # per open container: the pending key (None for a list)
    root: Any = None
    for event, value in events:
        if event == "map_key":
            keys[-1] = value
            continue
        if event == "end_map" or event == "end_array":
            done = stack.pop()
            keys.pop()
            if not stack:
                root = done
            elif done is not folder:
                _add(stack[-1], keys[-1], done)
            continue
        if event == "start_map":
            stack.append({})
            keys.append(None)
            continue
        if event == "start_array":
            at_content = len(stack) == 2 and (keys[0], keys[1]) == _CONTENT_PATH
            container: Any = folder if at_content else []
            if at_content:
                _add(stack[-1], keys[-1], folder)
            stack.append(container)
            keys.append(None)
            continue
        if not stack:
            root = value
        else:
            _add(stack[-1], keys[-1], value)
    return root


class _Reader:
    """``line`` as a file the parser reads a buffer at a time (never one copy of it all)."""

    def __init__(self, line: bytes | bytearray) -> None:
        self._view = memoryview(line)
        self._position = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._view) if size < 0 else self._position + size
        data = bytes(self._view[self._position : end])
        self._position += len(data)
        return data


def _add(container: Any, key: Any, value: Any) -> None:
    if type(container) is dict:
        container[key] = value
    else:
        container.append(value)
