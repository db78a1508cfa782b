"""The session's tool list: opt-in tools, core names, exclusions, and the missing-tool error."""

from __future__ import annotations

from pathlib import Path

from headwire.runtime.tools.toolset import ToolOptions, missing_tool_message, session_tools


def names(
    options: ToolOptions, core: list[str] | None = None, exclude: list[str] | None = None
) -> list[str]:
    return [t.name for t in session_tools(options, core, exclude)]


def test_defaults_and_opt_ins(tmp_path: Path) -> None:
    default = names(ToolOptions(todo_dir=tmp_path))
    assert "web_fetch" in default and "notebook_edit" in default
    assert "todo_write" not in default and "list_directory" not in default
    enabled = names(ToolOptions(list_directory=True, todo_write=True, todo_dir=tmp_path))
    assert "todo_write" in enabled and "list_directory" in enabled
    core = names(ToolOptions(todo_dir=tmp_path), ["TodoWrite", "list_directory", "read_file"])
    assert sorted(core) == ["list_directory", "read_file", "todo_write"]
    excluded = names(ToolOptions(todo_write=True, todo_dir=tmp_path), None, ["web_fetch", "edit"])
    assert "web_fetch" not in excluded and "notebook_edit" not in excluded  # edit's family


def test_missing_tool_messages() -> None:
    todo = missing_tool_message("todo_write", ["read_file"])
    assert "tools.todoWrite.enabled" in todo and "not found in registry" not in todo
    assert "tools.listDirectory.enabled" in missing_tool_message("ReadFolder", [])
    assert missing_tool_message("read_fil", ["read_file", "edit"]) == (
        'Tool "read_fil" not found in registry. '
        'Tool names must match exactly; did you mean "read_file"?'
    )
    assert missing_tool_message("zzz", ["read_file"]) == (
        'Tool "zzz" not found in registry. Tool names must match exactly; available tools: '
        "read_file."
    )
