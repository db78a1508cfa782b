"""Where tool results sit in each headless format, and the walk that bounds them (pure).

:func:`bound_value` takes one parsed line and returns it with every tool result bounded,
copying only the containers on the path to a changed field:

* ``stream-json``: a ``{"type":"user","message":{"content":[...]}}`` message; each block of
  ``"type":"tool_result"`` has its ``content`` bounded (:mod:`headwire.bound.blocks`);
* ``json``: one array of such messages;
* ``acp``: a JSON-RPC ``session/update`` whose ``params.update`` is a ``tool_call_update``
  (:func:`~headwire.projection.acp.project_acp_tool_call_update`, then
  :func:`bound_acp_content` for the content shapes upstream exempts), and the updates a
  ``session/load`` response replays in ``result._meta["qwen.session.loadReplay"].updates``,
  ``result.updates`` and ``result.events[].data``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from headwire.bound.blocks import bound_tool_result_content, share_textual_slots
from headwire.projection.acp import (
    ACP_TOOL_RESULT_JSON_BYTE_BUDGET,
    ACP_TRUNCATION_MARKER,
    is_a2ui_tool_meta,
    project_acp_tool_call_update,
)
from headwire.wire.size import json_size

__all__ = ["LOAD_REPLAY_META_KEY", "Changes", "Format", "bound_acp_content", "bound_value"]

LOAD_REPLAY_META_KEY = "qwen.session.loadReplay"
"""The ``result._meta`` key under which a bulk ``session/load`` response replays its updates."""

Changes = list[tuple[Any, Any]]
"""The ``(before, after)`` values of the fields bounded so far in one line."""


class Format(enum.Enum):
    """The headless output format on stdin; the value is the ``--format`` spelling."""

    STREAM_JSON = "stream-json"
    JSON = "json"
    ACP = "acp"


def _bound_message(message: Any, changes: Changes) -> Any:
    """A headless ``user`` message with its tool results bounded, or ``message`` itself."""
    if not isinstance(message, dict) or message.get("type") != "user":
        return message
    inner = message.get("message")
    if not isinstance(inner, dict):
        return message
    blocks = inner.get("content")
    if not isinstance(blocks, list):
        return message
    new_blocks: list[Any] | None = None
    for index, block in enumerate(blocks):
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            continue
        if "content" not in block:
            continue
        before = block["content"]
        after = bound_tool_result_content(before)
        if after is before:
            continue
        changes.append((before, after))
        if new_blocks is None:
            new_blocks = list(blocks)
        new_blocks[index] = {**block, "content": after}
    if new_blocks is None:
        return message
    return {**message, "message": {**inner, "content": new_blocks}}


def _acp_text_slot(block: Any) -> bool:
    """Whether ``block`` is an ACP ``content`` block holding a text (any other keys too)."""
    if not (isinstance(block, dict) and block.get("type") == "content"):
        return False
    inner = block.get("content")
    return (
        isinstance(inner, dict)
        and inner.get("type") == "text"
        and isinstance(inner.get("text"), str)
    )


def _acp_text(block: Any) -> str:
    text: str = block["content"]["text"]
    return text


def _acp_with_text(block: Any, text: str) -> Any:
    inner = {k: (text if k == "text" else v) for k, v in block["content"].items()}
    return {k: (inner if k == "content" else v) for k, v in block.items()}


def bound_acp_content(content: Any) -> Any:
    """An ACP ``tool_call_update.content`` that upstream's rule exempts (text blocks with
    extra keys, text mixed with diff, terminal or image blocks), its text blocks sharing the
    65,536-byte budget around everything else; ``content`` itself when it fits or holds no
    text."""
    if not isinstance(content, list) or json_size(content) <= ACP_TOOL_RESULT_JSON_BYTE_BUDGET:
        return content
    slots = [i for i, block in enumerate(content) if _acp_text_slot(block)]
    if not slots:
        return content
    return share_textual_slots(
        content,
        slots,
        _acp_text,
        _acp_with_text,
        ACP_TOOL_RESULT_JSON_BYTE_BUDGET,
        ACP_TRUNCATION_MARKER,
    )


def _is_a2ui(update: dict[str, Any]) -> bool:
    meta = update.get("_meta")
    if not isinstance(meta, dict):
        return False
    a2ui = {k: meta[k] for k in ("toolName", "serverId") if isinstance(meta.get(k), str)}
    return bool(a2ui) and is_a2ui_tool_meta(a2ui)


def _bound_update(update: Any, changes: Changes) -> Any:
    """An ACP session update with its tool-result text bounded, or ``update`` itself.

    An update whose ``content`` and ``rawOutput`` both fit the budget is left alone, so that
    the ACP projection's normalization of a fitting ``shell_result`` never rewrites a line
    (which keeps every line of at most the fast-path length untouched).
    """
    if not isinstance(update, dict):
        return update
    budget = ACP_TOOL_RESULT_JSON_BYTE_BUDGET
    if json_size(update.get("content")) <= budget and json_size(update.get("rawOutput")) <= budget:
        return update
    projected = project_acp_tool_call_update(update)
    if projected.get("sessionUpdate") == "tool_call_update" and not _is_a2ui(projected):
        content = projected.get("content")
        bounded = bound_acp_content(content)
        if bounded is not content:
            projected = {**projected, "content": bounded}
    if projected is update:
        return update
    for key in ("content", "rawOutput"):
        if projected.get(key) is not update.get(key):
            changes.append((update.get(key), projected.get(key)))
    return projected


def _bound_each(items: Any, fn: Callable[[Any, Changes], Any], changes: Changes) -> Any:
    """``items`` with ``fn`` applied to each element, or ``items`` itself when none changed."""
    if not isinstance(items, list):
        return items
    out: list[Any] | None = None
    for index, item in enumerate(items):
        new = fn(item, changes)
        if new is not item:
            if out is None:
                out = list(items)
            out[index] = new
    return items if out is None else out


def _with(container: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``container`` itself when ``container[key]`` is ``value``, else a copy with it replaced."""
    return container if container.get(key) is value else {**container, key: value}


def _bound_event(event: Any, changes: Changes) -> Any:
    """A paged replay event ``{..., "data": update}`` with its update bounded."""
    if not isinstance(event, dict) or "data" not in event:
        return event
    return _with(event, "data", _bound_update(event["data"], changes))


def _bound_replay_result(result: dict[str, Any], changes: Changes) -> dict[str, Any]:
    """A ``session/load``-style response result with its replayed updates bounded."""
    meta = result.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(LOAD_REPLAY_META_KEY), dict):
        replay = meta[LOAD_REPLAY_META_KEY]
        if "updates" in replay:
            updates = _bound_each(replay["updates"], _bound_update, changes)
            meta = _with(meta, LOAD_REPLAY_META_KEY, _with(replay, "updates", updates))
            result = _with(result, "_meta", meta)
    if "updates" in result:
        result = _with(result, "updates", _bound_each(result["updates"], _bound_update, changes))
    if "events" in result:
        result = _with(result, "events", _bound_each(result["events"], _bound_event, changes))
    return result


def _bound_rpc(frame: Any, changes: Changes) -> Any:
    """A JSON-RPC frame with the tool-result text of its session updates bounded."""
    if not isinstance(frame, dict):
        return frame
    params = frame.get("params")
    if frame.get("method") == "session/update" and isinstance(params, dict):
        if "update" not in params:
            return frame
        update = _bound_update(params["update"], changes)
        return _with(frame, "params", _with(params, "update", update))
    result = frame.get("result")
    if "id" in frame and isinstance(result, dict):
        return _with(frame, "result", _bound_replay_result(result, changes))
    return frame


def bound_value(value: Any, fmt: Format) -> tuple[Any, tuple[tuple[Any, Any], ...]]:
    """Bound one parsed line: the new value (``value`` itself when unchanged) and the
    ``(before, after)`` values of its bounded fields.

    ``value`` is never mutated; containers on the path to a bounded field are copied.
    """
    changes: Changes = []
    if fmt is Format.STREAM_JSON:
        out = _bound_message(value, changes)
    elif fmt is Format.JSON:
        out = _bound_each(value, _bound_message, changes)
    else:
        out = _bound_rpc(value, changes)
    return out, tuple(changes)
