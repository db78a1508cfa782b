"""The one tool-result boundary every headless wire goes through.

``ToolResultEmitter.tool_result`` does, in this order and nowhere else: semantic display
selection, ``is_error``, permission-denial bookkeeping, the headless projection
(:func:`headwire.projection.project_tool_result_content`) and the ``user``/``tool_result``
envelope.  Its input (:class:`ToolResponse`) is never mutated: the model-facing response, the
recording and the artifact keep the full text; only the returned wire message is bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from headwire.projection import project_tool_result_content
from headwire.protocol.messages import JsonDict, tool_result_block, user_message

EXECUTION_DENIED = "execution_denied"
"""``error_type`` of a call the permission rules refused; it lands in ``permission_denials``."""


@dataclass(frozen=True, slots=True)
class ToolResponse:
    """What the runtime knows about one finished tool call, unprojected.

    ``output``: the model-facing text (``functionResponse.response.output``), ``None`` when the
    call produced no response part.  ``part_error``: a detailed model-facing error
    (``functionResponse.response.error``).  ``error``: the short error message.  ``display``:
    the tool's semantic display string.
    """

    call_id: str
    name: str
    args: dict[str, Any]
    output: str | None = None
    part_error: str | None = None
    error: str | None = None
    error_type: str | None = None
    display: str | None = None


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


@dataclass(slots=True)
class ToolResultEmitter:
    """Builds bounded ``tool_result`` messages and keeps the run's ``permission_denials``."""

    session_id: str
    new_uuid: Callable[[], str]
    permission_denials: list[JsonDict] = field(default_factory=list)

    def tool_result(
        self, response: ToolResponse, parent_tool_use_id: str | None = None
    ) -> JsonDict:
        """The ``user`` message carrying ``response`` on every headless wire, projected."""
        is_error = response.error is not None or bool(response.part_error)
        if response.error is not None and response.error_type == EXECUTION_DENIED:
            self.permission_denials.append(
                {
                    "tool_name": response.name,
                    "tool_use_id": response.call_id,
                    "tool_input": response.args,
                }
            )
        selected = select_display(response)
        content = None if selected is None else project_tool_result_content(selected)
        block = tool_result_block(response.call_id, is_error, content)
        return user_message(
            uuid=self.new_uuid(),
            session_id=self.session_id,
            parent_tool_use_id=parent_tool_use_id,
            content=[block],
        )
