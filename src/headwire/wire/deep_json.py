"""A JSON reader for any nesting depth, without recursion (``JSON.parse`` reads any depth too).

orjson stops at 1,024 levels and the standard library at the interpreter's recursion limit;
:func:`headwire.wire.encode` writes any depth.  :func:`loads_any_depth` reads what they refuse
for depth alone, so a recording holds nothing its reader cannot read back.  Strings go through
the standard library's C ``scanstring`` (escapes, lone surrogates); numbers and literals are
matched by one regex each; the containers are kept on an explicit stack.  It steps once per
token, so it is used only after the C readers refused a text for its depth.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable
from typing import Any

__all__ = ["loads_any_depth"]

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def _skip(text: str, at: int) -> int:
    """The position of the first non-whitespace character at or after ``at``."""
    match = _WS.match(text, at)
    return match.end() if match is not None else at


def _error(message: str, text: str, at: int) -> json.JSONDecodeError:
    return json.JSONDecodeError(message, text, at)


def _value(text: str, at: int) -> tuple[Any, int, bool]:
    """A scalar, or a new container, at ``at``: ``(value, end, is_container)``."""
    char = text[at : at + 1]
    if char == '"':
        string, end = _scanstring(text, at + 1, True)
        return string, end, False
    if char == "[":
        return [], at + 1, True
    if char == "{":
        return {}, at + 1, True
    match = _NUMBER.match(text, at)
    if match is not None:
        number = match.group()
        if match.group(1) or match.group(2):
            return float(number), match.end(), False
        return int(number), match.end(), False
    for word, literal in _LITERALS.items():
        if text.startswith(word, at):
            return literal, at + len(word), False
    raise _error("Expecting value", text, at)


def loads_any_depth(text: str) -> Any:
    """The JSON value of ``text`` (strict: no NaN, no trailing data), at any depth.

    Invariant: for every text the standard library reads, the same value.
    """
    stack: list[tuple[list[Any] | dict[str, Any], str | None]] = []
    at = _skip(text, 0)
    value, at, opened = _value(text, at)
    while True:
        if opened:
            at = _skip(text, at)
            closer = "]" if isinstance(value, list) else "}"
            if text.startswith(closer, at):  # empty container: a finished value
                at += 1
            else:
                stack.append((value, None))
                value, at, opened = _member(text, at, stack)
                continue
        # ``value`` is finished: attach it to its parent, or it is the whole text.
        if not stack:
            at = _skip(text, at)
            if at != len(text):
                raise _error("Extra data", text, at)
            return value
        parent, key = stack[-1]
        if isinstance(parent, list):
            parent.append(value)
        elif key is not None:
            parent[key] = value
        at = _skip(text, at)
        char = text[at : at + 1]
        if char == ",":
            value, at, opened = _member(text, _skip(text, at + 1), stack)
            continue
        if char != ("]" if isinstance(parent, list) else "}"):
            raise _error("Expecting ',' delimiter", text, at)
        stack.pop()
        value, at, opened = parent, at + 1, False


def _member(
    text: str, at: int, stack: list[tuple[list[Any] | dict[str, Any], str | None]]
) -> tuple[Any, int, bool]:
    """The next member of the container on top of ``stack`` (its key noted for an object)."""
    parent, _ = stack[-1]
    if isinstance(parent, dict):
        if text[at : at + 1] != '"':
            raise _error("Expecting property name enclosed in double quotes", text, at)
        key, at = _scanstring(text, at + 1, True)
        at = _skip(text, at)
        if text[at : at + 1] != ":":
            raise _error("Expecting ':' delimiter", text, at)
        at = _skip(text, at + 1)
        stack[-1] = (parent, key)
    return _value(text, at)
