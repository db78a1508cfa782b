"""The headless bound: one textual ``tool_result.content`` string within 65,536 JSON bytes."""

from __future__ import annotations

from headwire.projection.json_string import project_json_string

__all__ = [
    "HEADLESS_TRUNCATION_MARKER",
    "TOOL_RESULT_JSON_BYTE_BUDGET",
    "project_tool_result_content",
]

TOOL_RESULT_JSON_BYTE_BUDGET = 65_536
"""Upper bound of ``UTF8_BYTES(JSON.stringify(content))`` for a textual tool result."""

HEADLESS_TRUNCATION_MARKER = "\n[... truncated for Headless transport ...]\n"
"""Marker between head and tail on the headless wires (44 units, 48 JSON bytes)."""


def project_tool_result_content(text: str) -> str:
    """Bound a semantic display string for ``tool_result.content`` on every headless wire.

    Returns ``text`` itself when its JSON is at most 65,536 bytes; otherwise a preview of about
    20% head and 80% tail with :data:`HEADLESS_TRUNCATION_MARKER` between them.
    """
    return project_json_string(text, TOOL_RESULT_JSON_BYTE_BUDGET, HEADLESS_TRUNCATION_MARKER)
