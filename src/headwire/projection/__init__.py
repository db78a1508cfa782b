"""Transport projections of tool-result text (pure: no I/O).

* :func:`project_tool_result_content`: the headless bound used by every headless wire.
* :func:`project_acp_tool_call_update`: the ACP bound of ``tool_call_update`` notifications.
* :func:`project_json_string`: the shared single-string preview with any budget and marker.
"""

from headwire.projection.acp import (
    ACP_TRUNCATION_MARKER,
    is_a2ui_tool_meta,
    project_acp_tool_call_update,
)
from headwire.projection.headless import (
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_tool_result_content,
)
from headwire.projection.json_string import (
    json_string_json_bytes,
    json_string_payload_bytes,
    project_json_string,
    truncate_json_string_payload,
)

__all__ = [
    "ACP_TRUNCATION_MARKER",
    "HEADLESS_TRUNCATION_MARKER",
    "TOOL_RESULT_JSON_BYTE_BUDGET",
    "is_a2ui_tool_meta",
    "json_string_json_bytes",
    "json_string_payload_bytes",
    "project_acp_tool_call_update",
    "project_json_string",
    "project_tool_result_content",
    "truncate_json_string_payload",
]
