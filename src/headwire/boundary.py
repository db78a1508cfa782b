"""The two tool-result boundaries, side by side: every tool result reaches a wire through one.

A finished call is one :class:`~headwire.events.ToolResponse` (unprojected: ``output`` is the
model-facing text after its model-side bound, ``display`` the tool's full display string).  It
leaves the process on two kinds of wire, each bounded exactly once, here and nowhere else:

* **headless** (text retention, json, stream-json, persistent sessions, subagents, Dual Output):
  :func:`headless_tool_result` builds the ``user`` message whose one ``tool_result`` block's
  ``content`` is :func:`select_display`, bounded by
  :func:`~headwire.projection.project_tool_result_content` (65,536 JSON bytes);
* **ACP**: :func:`acp_tool_result_update` builds the ``tool_call_update`` whose ``content`` is
  :func:`acp_content_text` and whose ``rawOutput`` is the display, bounded together by
  :func:`~headwire.projection.project_acp_tool_call_update` (multi-block fair share, A2UI
  tools exempt).

One rule feeds both: the text a call *told the model* is ``output`` (or, for a failed call, its
error), the same string on both wires.  Upstream differs in one place on purpose, and so do we:
a headless ``tool_result`` has one field and prefers the display (the error, then a non-blank
display, then the model text), while an ACP update has two (``content``: what the model was
told; ``rawOutput``: the display).  ``tests/unit/test_boundary.py`` pins both.

Nothing here mutates its input: the recording and the artifact keep the full text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from headwire.events import ToolResponse
from headwire.projection import (
    ACP_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_acp_tool_call_update,
    project_tool_result_content,
)
from headwire.protocol.messages import JsonDict, tool_result_block, user_message
from headwire.wire import json_size

EXECUTION_DENIED = "execution_denied"
"""``error_type`` of a call the permission rules refused; it lands in ``permission_denials``."""


def select_display(response: ToolResponse) -> str | None:
    """Semantic display selection: the string a headless ``tool_result.content`` shows.

    The first of: the detailed part error, the error message, a display that is not blank
    (returned untrimmed), the model-facing output; ``None`` (content omitted) otherwise.
    """
    if response.part_error:
        return response.part_error
    if response.error is not None:
        return response.error
    if response.display is not None and response.display.strip():
        return response.display
    if response.output is not None:
        return response.output
    return None


def acp_content_text(response: ToolResponse) -> str:
    """The text of an ACP result's ``content``: what the model was told (its error when the
    call failed with one)."""
    if response.error:
        return response.error
    return response.output or response.part_error or ""


def permission_denial(response: ToolResponse) -> JsonDict | None:
    """The ``permission_denials`` entry of a refused call, else ``None``."""
    if response.error is None or response.error_type != EXECUTION_DENIED:
        return None
    return {
        "tool_name": response.name,
        "tool_use_id": response.call_id,
        "tool_input": response.args,
    }


def headless_tool_result(
    response: ToolResponse, *, uuid: str, session_id: str, parent_tool_use_id: str | None
) -> JsonDict:
    """The ``user`` message carrying ``response`` on every headless wire, projected."""
    selected = select_display(response)
    content = None if selected is None else project_tool_result_content(selected)
    block = tool_result_block(response.call_id, response.failed, content)
    return user_message(
        uuid=uuid, session_id=session_id, parent_tool_use_id=parent_tool_use_id, content=[block]
    )


def bound_record(
    response: ToolResponse,
    *,
    session_id: str,
    parent_tool_use_id: str | None,
    artifact: Callable[[], JsonDict | None],
) -> JsonDict | None:
    """The ``system``/``tool_result_bound`` record that follows ``response``'s ``tool_result``
    (``--include-bound-records``) when the bound cut its content, else ``None``.

    ``original_json_bytes``: the JSON bytes of the content before the bound (of
    :func:`select_display`); ``shown_json_bytes``: those of the content the wire carried (at
    most 65,536); ``artifact``: what ``artifact()`` says of the saved full output (``path``,
    ``sha256``, ``bytes``), asked only for a cut result, ``None`` when none was saved.  The
    projection itself is unchanged: this record is built beside it.
    """
    selected = select_display(response)
    if selected is None:
        return None
    original = json_size(selected)
    if original <= TOOL_RESULT_JSON_BYTE_BUDGET:
        return None
    return {
        "type": "system",
        "subtype": "tool_result_bound",
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "tool_use_id": response.call_id,
        "original_json_bytes": original,
        "shown_json_bytes": json_size(project_tool_result_content(selected)),
        "artifact": artifact(),
    }


def acp_result_update(
    call_id: str, *, failed: bool, text: str, display: str | None, meta: JsonDict
) -> JsonDict:
    """The ``tool_call_update`` of a finished call, unprojected (key order as upstream)."""
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "failed" if failed else "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": text}}],
        "_meta": meta,
    }
    if display is not None:
        update["rawOutput"] = display
    return update


def acp_tool_result_update(response: ToolResponse, meta: JsonDict) -> JsonDict:
    """The ACP ``tool_call_update`` carrying ``response``, projected.

    Should the projection ever fail, the update goes out with the ACP marker as its only
    content and no ``rawOutput``: bounded, and the turn goes on.
    """
    return project_acp_update(
        acp_result_update(
            response.call_id,
            failed=response.failed,
            text=acp_content_text(response),
            display=response.display,
            meta=meta,
        )
    )


def project_acp_update(update: JsonDict) -> JsonDict:
    """:func:`~headwire.projection.project_acp_tool_call_update`, never raising."""
    try:
        return project_acp_tool_call_update(update)
    except Exception:  # keep the frame bounded and the turn alive, whatever happens
        safe = {k: v for k, v in update.items() if k != "rawOutput"}
        safe["content"] = [
            {"type": "content", "content": {"type": "text", "text": ACP_TRUNCATION_MARKER}}
        ]
        return safe


__all__ = [
    "EXECUTION_DENIED",
    "acp_content_text",
    "acp_result_update",
    "acp_tool_result_update",
    "bound_record",
    "headless_tool_result",
    "permission_denial",
    "project_acp_update",
    "select_display",
]
