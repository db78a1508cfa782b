"""The ACP bound of ``session/update`` notifications of kind ``tool_call_update``.

Fields and rules, as Qwen Code 0.24.4 puts them on the ACP wire:

* ``content`` is bounded only when it is an array of pure text blocks, each exactly
  ``{"type": "content", "content": {"type": "text", "text": str}}``; the blocks share one
  65,536-byte budget for the whole array JSON through a deterministic max-min water-fill, and
  more blocks than fit even empty (1,191) collapse to a single marker block;
* a string ``rawOutput`` is bounded on its own (65,536 JSON bytes);
* when ``content`` is one block whose text equals a string ``rawOutput``, both carry the same
  projected text;
* a ``shell_result`` ``rawOutput`` object has its text fields bounded together;
* A2UI tools (:func:`is_a2ui_tool_meta`) are exempt, because their payload is parsed after the
  wire; every other update, and every update that already fits, is returned as the same object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from headwire.projection.fair_share import allocate_payload_budgets, share_payload_budget_sized
from headwire.projection.json_string import (
    JSON_STRING_DELIMITER_BYTES,
    bounded_payload_bytes,
    json_string_json_bytes,
    json_string_payload_bytes,
    truncate_json_string_payload,
    truncate_sized,
)
from headwire.wire.size import json_size

__all__ = [
    "ACP_TOOL_RESULT_JSON_BYTE_BUDGET",
    "ACP_TRUNCATION_MARKER",
    "MAX_CANONICAL_TEXT_BLOCKS",
    "is_a2ui_tool_meta",
    "project_acp_tool_call_update",
]

ACP_TOOL_RESULT_JSON_BYTE_BUDGET = 65_536
"""Bound of the JSON of ``content`` (the whole array) and of a string ``rawOutput``."""

ACP_TRUNCATION_MARKER = "\n[... truncated for ACP transport ...]\n"
"""Marker inside a bounded ACP text (39 units, 41 payload bytes)."""

_EMPTY_ARRAY_BYTES = 2
_EMPTY_BLOCK_BYTES = len(b'{"type":"content","content":{"type":"text","text":""}}')  # 54
_SEPARATOR_BYTES = 1
_MARKER_PAYLOAD_BYTES = json_string_json_bytes(ACP_TRUNCATION_MARKER) - JSON_STRING_DELIMITER_BYTES
MAX_CANONICAL_TEXT_BLOCKS = (
    ACP_TOOL_RESULT_JSON_BYTE_BUDGET - _EMPTY_ARRAY_BYTES + _SEPARATOR_BYTES
) // (_EMPTY_BLOCK_BYTES + _SEPARATOR_BYTES)
"""1,191: the most text blocks whose empty skeleton fits the budget."""

# ``\Z``, not ``$``: JavaScript's ``$`` (no ``m`` flag) matches only at the very end, while
# Python's also matches before a final newline ("present_ui\n" is not an A2UI tool upstream).
_A2UI_TOOL = re.compile(r"(?:^|__)(?:present_ui|present_choices|a2ui_action)\Z")
_MAX_SAFE_INTEGER = 2**53 - 1
_SHELL_OUTCOMES = ("completed", "failed", "cancelled", "timed_out")
_SHELL_KEYS = frozenset(
    (
        "type",
        "version",
        "directory",
        "exitCode",
        "signal",
        "pid",
        "outcome",
        "outputFiles",
        "output",
        "text",
        "error",
        "notices",
        "truncated",
    )
)

Blocks = list[dict[str, Any]]


def is_a2ui_tool_meta(meta: Mapping[str, Any] | None) -> bool:
    """Whether a tool's ``_meta`` names an A2UI tool, whose results must arrive whole.

    True when ``serverId`` contains ``a2ui`` (any case), or else when ``toolName`` is
    ``present_ui``, ``present_choices`` or ``a2ui_action``, alone or after a ``__`` separator.
    """
    if not meta:
        return False
    server_id = meta.get("serverId")
    if isinstance(server_id, str) and "a2ui" in server_id.lower():
        return True
    tool_name = meta.get("toolName")
    return isinstance(tool_name, str) and _A2UI_TOOL.search(tool_name) is not None


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _canonical_text_blocks(value: Any) -> Blocks | None:
    """``value`` when it is a list of pure text blocks (no other keys at either level)."""
    if not isinstance(value, list):
        return None
    for block in value:
        if not (isinstance(block, dict) and len(block) == 2 and block.get("type") == "content"):
            return None
        inner = block.get("content")
        if not (isinstance(inner, dict) and len(inner) == 2 and inner.get("type") == "text"):
            return None
        if "text" not in inner or not isinstance(inner["text"], str):
            return None
    return value


def _skeleton_bytes(count: int) -> int:
    if count == 0:
        return _EMPTY_ARRAY_BYTES
    return _EMPTY_ARRAY_BYTES + count * _EMPTY_BLOCK_BYTES + (count - 1) * _SEPARATOR_BYTES


def _fallback_content() -> Blocks:
    return [_text_block(ACP_TRUNCATION_MARKER)]


def _project_content(original: Blocks) -> Blocks:
    """Bound a list of pure text blocks; the same list object when it already fits."""
    if len(original) > MAX_CANONICAL_TEXT_BLOCKS:
        return _fallback_content()
    available = ACP_TOOL_RESULT_JSON_BYTE_BUDGET - _skeleton_bytes(len(original))
    texts: list[str] = [block["content"]["text"] for block in original]
    sized = share_payload_budget_sized(texts, available, ACP_TRUNCATION_MARKER)
    if sized is None:
        return _fallback_content()
    shared, payloads = sized
    if shared is texts:
        return original
    projected: Blocks = [
        block if new is old else _text_block(new)
        for block, old, new in zip(original, texts, shared, strict=True)
    ]
    # the skeleton holds every block's quotes; the payloads are exact (counted by the cuts)
    if _skeleton_bytes(len(projected)) + sum(payloads) <= ACP_TOOL_RESULT_JSON_BYTE_BUDGET:
        return projected
    return _fallback_content()


def _project_raw_output(value: str) -> str:
    payload_budget = ACP_TOOL_RESULT_JSON_BYTE_BUDGET - JSON_STRING_DELIMITER_BYTES
    scanned = bounded_payload_bytes(value, payload_budget)
    if scanned <= payload_budget:
        return value
    projected, size = truncate_sized(value, scanned, payload_budget, ACP_TRUNCATION_MARKER)
    if size + JSON_STRING_DELIMITER_BYTES <= ACP_TOOL_RESULT_JSON_BYTE_BUDGET:
        return projected
    return ACP_TRUNCATION_MARKER


def _is_safe_integer_or_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float) and not value.is_integer():
        return False
    return abs(value) <= _MAX_SAFE_INTEGER


def _is_shell_result(value: Any) -> bool:
    """Whether ``value`` is a version-1 ``shell_result`` display object."""
    if not isinstance(value, dict):
        return False
    v = value
    version = v.get("version")
    return (
        v.get("type") == "shell_result"
        and isinstance(version, int | float)
        and not isinstance(version, bool)
        and version == 1
        and isinstance(v.get("text"), str)
        and isinstance(v.get("output"), str)
        and isinstance(v.get("directory"), str)
        and all(k in v and _is_safe_integer_or_null(v[k]) for k in ("exitCode", "signal", "pid"))
        and "error" in v
        and (v["error"] is None or isinstance(v["error"], str))
        and v.get("outcome") in _SHELL_OUTCOMES
        and isinstance(v.get("outcome"), str)
        and isinstance(v.get("truncated"), bool)
        and isinstance(v.get("notices"), list)
        and len(v["notices"]) <= 32
        and all(isinstance(s, str) for s in v["notices"])
        and isinstance(v.get("outputFiles"), list)
        and len(v["outputFiles"]) <= 32
        and all(isinstance(s, str) for s in v["outputFiles"])
        and len(_utf16(v["directory"])) + sum(len(_utf16(s)) for s in v["outputFiles"]) <= 8192
    )


def _utf16(s: str) -> bytes:
    return s.encode("utf-16-le", "surrogatepass")[::2]  # one byte per UTF-16 unit


def _map_shell_text(result: dict[str, Any], fn: Callable[[str], str]) -> dict[str, Any]:
    """A normalized copy of a shell result with ``fn`` applied to each text field."""
    truncated: bool = result["truncated"]

    def apply(value: str) -> str:
        nonlocal truncated
        mapped = fn(value)
        truncated = truncated or mapped != value
        return mapped

    out = {
        "type": result["type"],
        "version": result["version"],
        "directory": result["directory"],
        "exitCode": result["exitCode"],
        "signal": result["signal"],
        "pid": result["pid"],
        "outcome": result["outcome"],
        "outputFiles": list(result["outputFiles"]),
        "output": apply(result["output"]),
        "text": apply(result["text"]),
        "error": None if result["error"] is None else apply(result["error"]),
        "notices": [apply(n) for n in result["notices"]],
    }
    out["truncated"] = truncated
    return out


def _project_shell_result(raw: dict[str, Any]) -> dict[str, Any]:
    structured = _map_shell_text(raw, lambda text: text)
    projected = raw if set(raw) == _SHELL_KEYS else structured
    if json_size(structured) <= ACP_TOOL_RESULT_JSON_BYTE_BUDGET:
        return projected
    demands: list[int] = []

    def measure(text: str) -> str:
        demands.append(json_string_payload_bytes(text))
        return ""

    skeleton = _map_shell_text(structured, measure)
    budgets = allocate_payload_budgets(
        demands, ACP_TOOL_RESULT_JSON_BYTE_BUDGET - json_size(skeleton), _MARKER_PAYLOAD_BYTES
    )
    if budgets is None:
        raise ValueError("shell_result skeleton leaves no room for its texts")
    pending = iter(budgets)
    return _map_shell_text(
        structured,
        lambda text: truncate_json_string_payload(
            text, json_string_payload_bytes(text), next(pending), ACP_TRUNCATION_MARKER
        ),
    )


def project_acp_tool_call_update(update: dict[str, Any]) -> dict[str, Any]:
    """Bound the tool-result text of one ACP ``session/update`` payload, immediately before it is
    written (live or replayed).

    Returns ``update`` itself when nothing changes, otherwise a shallow copy in the same key
    order with only ``content`` and/or ``rawOutput`` replaced; the input is never mutated.
    """
    if update.get("sessionUpdate") != "tool_call_update":
        return update
    meta = update.get("_meta")
    if isinstance(meta, dict):
        a2ui = {k: meta[k] for k in ("toolName", "serverId") if isinstance(meta.get(k), str)}
        if a2ui and is_a2ui_tool_meta(a2ui):
            return update
    content = _canonical_text_blocks(update.get("content"))
    raw_output = update.get("rawOutput")
    if (
        content is not None
        and len(content) == 1
        and isinstance(raw_output, str)
        and raw_output == content[0]["content"]["text"]
    ):
        paired = _project_content(content)
        if paired is content:
            return update
        return {**update, "content": paired, "rawOutput": paired[0]["content"]["text"]}

    new_content = _project_content(content) if content is not None else None
    new_raw: Any = _project_raw_output(raw_output) if isinstance(raw_output, str) else None
    if isinstance(raw_output, dict) and _is_shell_result(raw_output):
        new_raw = _project_shell_result(raw_output)
    content_changed = new_content is not None and new_content is not content
    if isinstance(raw_output, str):
        raw_changed = new_raw is not None and new_raw != raw_output
    else:
        raw_changed = new_raw is not None and new_raw is not raw_output
    if not content_changed and not raw_changed:
        return update
    out = dict(update)
    if content_changed:
        out["content"] = new_content
    if raw_changed:
        out["rawOutput"] = new_raw
    return out
