"""A session's built-in tools, and what to tell the model about a tool it does not have.

:func:`session_tools` adds ``web_fetch``, ``notebook_edit`` and ``todo_write`` to the
registry's built-ins and applies the selection rules of
:func:`headwire.runtime.tools.registry.select_tools`.  ``list_directory`` and ``todo_write``
are off by default, as in Qwen Code 0.24.4: the settings ``tools.listDirectory.enabled`` and
``tools.todoWrite.enabled`` turn them on, and so does naming them in ``tools.core`` /
``--core-tools``.

:func:`missing_tool_message` is the error a call to an absent tool gets: for a tool that is
off by default it names the setting that enables it, otherwise it suggests the nearest offered
name.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from headwire.records import dataclass
from headwire.runtime.tools.base import Tool
from headwire.runtime.tools.notebook_edit import NotebookEditTool
from headwire.runtime.tools.read_ledger import ReadLedger
from headwire.runtime.tools.registry import (
    builtin_tools,
    parse_rule,
    select_tools,
    unknown_tool_message,
)
from headwire.runtime.tools.shell import ReadOnlyCheck, nothing_is_read_only
from headwire.runtime.tools.todo_write import TodoWriteTool
from headwire.runtime.tools.web_fetch import WebFetchTool
from headwire.runtime.tools.write_file import PLAIN, UTF8_BOM

OPT_IN_TOOLS = {
    "list_directory": "tools.listDirectory.enabled",
    "todo_write": "tools.todoWrite.enabled",
}
"""Tools off by default, and the setting that turns each on."""


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """What the settings say about the built-in tools."""

    list_directory: bool = False
    todo_write: bool = False
    web_fetch_allow_private: bool = False
    todo_dir: Path | None = None
    """Where ``todo_write`` keeps lists (``<data dir>/todos``); ``None`` leaves it out."""
    shell_read_only: ReadOnlyCheck = nothing_is_read_only
    """The shell tool's check of a read-only command (from the permission layer)."""
    new_file_bom: bool = False
    """``general.defaultFileEncoding: "utf-8-bom"``: files the tools create start with
    UTF-8's byte order mark."""


def session_tools(
    options: ToolOptions,
    core: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> list[Tool]:
    """The built-in tools of a session, after the opt-in settings, core and exclude."""
    core_list = [entry for entry in (core or []) if entry and entry.strip()]
    named = {parse_rule(entry)[0] for entry in core_list}
    ledger = ReadLedger()
    tools: list[Tool] = [
        *builtin_tools(
            ledger,
            read_only=options.shell_read_only,
            new_file=UTF8_BOM if options.new_file_bom else PLAIN,
        ),
        WebFetchTool(allow_private=options.web_fetch_allow_private),
        NotebookEditTool(ledger),
    ]
    if options.todo_dir is not None and (options.todo_write or "todo_write" in named):
        tools.append(TodoWriteTool(options.todo_dir))
    return select_tools(tools, core_list or None, exclude, ls_enabled=options.list_directory)


def missing_tool_message(name: str, offered: Iterable[str]) -> str:
    """The model-facing error for a call to ``name``, which this session does not offer."""
    canonical = parse_rule(name)[0]
    setting = OPT_IN_TOOLS.get(canonical)
    if setting is not None:
        return (
            f'Tool "{name}" is not enabled in this session: it is off by default. The user can '
            f"enable it with the setting {setting}: true in .headwire/settings.json or "
            "~/.headwire/settings.json. Use another tool for now."
        )
    return unknown_tool_message(name, offered)
