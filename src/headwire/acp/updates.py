"""ACP payloads: ``session/update`` kinds, permission options, modes and ``initialize``.

Pure builders, in Qwen Code 0.24.4's key order (so frames match its captures in shape):

* ``tool_call``: ``sessionUpdate, toolCallId, status "pending", title, content [], locations,
  kind, rawInput, _meta``;
* ``tool_call_update`` when the call starts: the same keys with ``status "in_progress"``;
* ``tool_call_update`` with the result: ``sessionUpdate, toolCallId, status ("completed" or
  "failed"), content, _meta, rawOutput``.  ``content`` is one text block holding what the
  model was told (the bounded model text, or the error message of a failed call), ``rawOutput``
  the tool's full display string (left out when the tool has none), as upstream puts
  ``functionResponse.output`` and ``resultDisplay`` there.  These come out of the ACP boundary
  (:mod:`headwire.boundary`) already projected.

``_meta`` is ``{toolName, provenance, serverId?}``: ``provenance`` is ``"mcp"`` for tools of an
MCP server (their ``server_id`` attribute, or an ``mcp__<server>__<tool>`` name) and
``"builtin"`` otherwise; ``serverId`` names the server (the A2UI exemption keys on it).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from headwire.boundary import acp_result_update, project_acp_update
from headwire.runtime.tools.base import Tool
from headwire.wire import encode

__all__ = [
    "ACP_KINDS",
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "MODES",
    "PERMISSION_OPTIONS",
    "PROTOCOL_VERSION",
    "REJECT_ONCE",
    "always_rule",
    "available_commands_update",
    "initialize_result",
    "message_chunk",
    "mode_state",
    "permission_options",
    "tool_call_in_progress",
    "tool_call_result",
    "tool_call_start",
    "tool_kind",
    "tool_locations",
    "tool_meta",
    "tool_title",
]

PROTOCOL_VERSION = 1
"""The ACP protocol version headwire speaks (an integer on the wire)."""

ACP_KINDS = frozenset(
    (
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    )
)
"""The ``kind`` values ACP accepts; anything else is sent as ``"other"``."""

MODES: tuple[tuple[str, str, str], ...] = (
    ("plan", "Plan", "Analyze only, do not modify files or execute commands"),
    ("default", "Default", "Require approval for file edits or shell commands"),
    ("auto-edit", "Auto Edit", "Automatically approve file edits"),
    ("yolo", "YOLO", "Automatically approve all tools"),
)
"""Session modes (``id``, ``name``, ``description``): headwire's approval modes."""

ALLOW_ONCE = "proceed_once"
ALLOW_ALWAYS = "proceed_always"
REJECT_ONCE = "cancel"
PERMISSION_OPTIONS: tuple[tuple[str, str, str], ...] = (
    (ALLOW_ALWAYS, "Always Allow", "allow_always"),
    (ALLOW_ONCE, "Allow", "allow_once"),
    (REJECT_ONCE, "Reject", "reject_once"),
)
"""``session/request_permission`` options (``optionId``, ``name``, ``kind``), upstream's ids."""

_TITLE_ARGS_CHARS = 200
_PATH_KEYS = ("file_path", "absolute_path", "notebook_path", "path")


def initialize_result(version: str) -> dict[str, Any]:
    """The ``initialize`` result: protocol 1, ``session/load`` supported, text and embedded
    context prompts, MCP servers over stdio and HTTP (not SSE), no authentication."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentInfo": {"name": "headwire", "title": "headwire", "version": version},
        "authMethods": [],
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"sse": False, "http": True},
        },
    }


def mode_state(current: str) -> dict[str, Any]:
    """``modes`` of ``session/new`` and ``session/load``: the current and the available modes."""
    return {
        "currentModeId": current,
        "availableModes": [{"id": i, "name": n, "description": d} for i, n, d in MODES],
    }


def model_state(current: str, choices: list[tuple[str, str]]) -> dict[str, Any]:
    """``models`` of ``session/new`` and ``session/load``: the model sent and the models
    ``session/set_model`` offers, ``choices`` being ``(id, display name)`` pairs."""
    return {
        "currentModelId": current,
        "availableModels": [{"modelId": i, "name": n} for i, n in choices],
    }


def config_options(
    mode: str,
    model: str,
    choices: list[tuple[str, str]],
    style: tuple[str, list[tuple[str, str, str]]] | None = None,
) -> list[dict[str, Any]]:
    """``configOptions`` of ``session/new``, ``session/load`` and the answer to
    ``session/set_config_option``: the approval mode and the model, each a select, and the
    output style (``style``: the current one and ``(value, name, description)`` of each)."""
    styles = []
    if style is not None:
        current, offered = style
        styles.append(
            {
                "id": "output_style",
                "name": "Output style",
                "description": "How answers are written",
                "type": "select",
                "currentValue": current,
                "options": [{"value": v, "name": n, "description": d} for v, n, d in offered],
            }
        )
    return [
        {
            "id": "mode",
            "name": "Mode",
            "description": "Session permission mode",
            "category": "mode",
            "type": "select",
            "currentValue": mode,
            "options": [{"value": i, "name": n, "description": d} for i, n, d in MODES],
        },
        {
            "id": "model",
            "name": "Model",
            "description": "AI model to use",
            "category": "model",
            "type": "select",
            "currentValue": model,
            "options": [{"value": i, "name": n} for i, n in choices],
        },
        *styles,
    ]


def permission_options(tool: Tool, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The options of one permission request; "always" names the rule it would add."""
    label = always_rule(tool, args)
    return [
        {
            "optionId": option_id,
            "name": f"{name}: {label}" if option_id == ALLOW_ALWAYS else name,
            "kind": kind,
        }
        for option_id, name, kind in PERMISSION_OPTIONS
    ]


def always_rule(tool: Tool, args: dict[str, Any]) -> str:
    """The ``--allowed-tools`` rule "allow always" adds: ``name(root command)`` for a shell
    command, else the tool's name."""
    command = args.get("command")
    if isinstance(command, str) and tool.kind == "execute":
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        if words:
            return f"{tool.name}({words[0]})"
    return tool.name


def message_chunk(kind: str, text: str) -> dict[str, Any]:
    """``user_message_chunk`` / ``agent_message_chunk`` / ``agent_thought_chunk`` of text."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def available_commands_update(commands: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The slash commands the session offers (none yet)."""
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands or []}


def _server_id(name: str, tool: Tool | None) -> str | None:
    server_id = getattr(tool, "server_id", None) if tool is not None else None
    if isinstance(server_id, str) and server_id:
        return server_id
    parts = name.split("__")
    if name.startswith("mcp__") and len(parts) >= 3 and parts[1]:
        return parts[1]
    return None


def tool_meta(name: str, tool: Tool | None) -> dict[str, Any]:
    """``_meta`` of every tool frame: ``toolName``, ``provenance`` and, for MCP, ``serverId``."""
    server_id = _server_id(name, tool)
    meta: dict[str, Any] = {"toolName": name, "provenance": "mcp" if server_id else "builtin"}
    if server_id:
        meta["serverId"] = server_id
    return meta


def _describe(tool: Tool | None, args: dict[str, Any]) -> str:
    describe = getattr(tool, "describe", None)
    if callable(describe):
        try:
            text = describe(args)
        except Exception:  # a tool's own description must never break the wire
            text = None
        if isinstance(text, str) and text:
            return text
    command = args.get("command")
    if isinstance(command, str):
        note = args.get("description")
        return f"{command} ({note})" if isinstance(note, str) and note.strip() else command
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            pattern = args.get("pattern")
            return f"'{pattern}' in {value}" if isinstance(pattern, str) else value
    pattern = args.get("pattern")
    if isinstance(pattern, str):
        return pattern
    text = encode(args).decode("utf-8", "replace")
    return text if len(text) <= _TITLE_ARGS_CHARS else text[: _TITLE_ARGS_CHARS - 3] + "..."


def tool_title(name: str, tool: Tool | None, args: dict[str, Any]) -> str:
    """``"<display name>: <what the call does>"``, or the bare name of an unknown tool."""
    if tool is None:
        return name
    return f"{tool.display_name}: {_describe(tool, args)}"


def tool_kind(tool: Tool | None) -> str:
    """The ACP ``kind`` of a tool (``"other"`` when unknown)."""
    kind = getattr(tool, "kind", None) if tool is not None else None
    return kind if isinstance(kind, str) and kind in ACP_KINDS else "other"


def tool_locations(args: dict[str, Any], cwd: Path) -> list[dict[str, Any]]:
    """Files a call touches: its path argument, absolute, with the start line when known."""
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            path = Path(value)
            offset = args.get("offset")
            line = (
                offset
                if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0
                else None
            )
            return [{"path": str(path if path.is_absolute() else cwd / path), "line": line}]
    return []


def _start(
    kind: str,
    status: str,
    call_id: str,
    name: str,
    tool: Tool | None,
    args: dict[str, Any],
    cwd: Path,
) -> dict[str, Any]:
    return {
        "sessionUpdate": kind,
        "toolCallId": call_id,
        "status": status,
        "title": tool_title(name, tool, args),
        "content": [],
        "locations": tool_locations(args, cwd),
        "kind": tool_kind(tool),
        "rawInput": args,
        "_meta": tool_meta(name, tool),
    }


def tool_call_start(
    call_id: str, name: str, tool: Tool | None, args: dict[str, Any], cwd: Path
) -> dict[str, Any]:
    """``tool_call`` (status ``pending``): the model asked for the call."""
    return _start("tool_call", "pending", call_id, name, tool, args, cwd)


def tool_call_in_progress(
    call_id: str, name: str, tool: Tool | None, args: dict[str, Any], cwd: Path
) -> dict[str, Any]:
    """``tool_call_update`` (status ``in_progress``): the call was allowed and runs."""
    return _start("tool_call_update", "in_progress", call_id, name, tool, args, cwd)


def tool_call_result(
    call_id: str, name: str, tool: Tool | None, *, failed: bool, text: str, display: str | None
) -> dict[str, Any]:
    """``tool_call_update`` with a result (``completed`` or ``failed``), projected at the ACP
    boundary: calls that never finished, and replayed ones, go out bounded like live ones."""
    return project_acp_update(
        acp_result_update(
            call_id, failed=failed, text=text, display=display, meta=tool_meta(name, tool)
        )
    )
