"""The built-in tools and the ``--core-tools`` / ``--exclude-tools`` selection.

Selection follows Qwen Code 0.24.4's permission manager:

* names are resolved through aliases: the wire name (``run_shell_command``), the display name
  (``Shell``), ``<Display>Tool`` (``ShellTool``), legacy names (``replace``,
  ``search_file_content``, ``SearchFiles``, ``FindFiles``, ``ReadFolder``) and Claude Code's
  names (``Bash``, ``Read``, ``Write``, ``Edit``, ``MultiEdit``, ``Glob``, ``Grep``, ``LS``,
  ``Task``/``Agent``, ``WebFetch``, ``TodoWrite``, ``NotebookEdit``): :data:`ALIASES` is the one
  table every rule (``--core-tools``, ``--exclude-tools``, ``--allowed-tools``, agent files) goes
  through; a ``(specifier)`` suffix is dropped for ``core``;
* ``core`` (non-empty) is an allowlist over the *core* built-ins only: tools outside that set
  (MCP tools, for instance) are never removed by it;
* ``exclude`` entries without a specifier remove whole tools, with upstream's families: a rule
  for ``read_file`` also removes ``grep_search``/``glob``/``list_directory``, one for ``edit``
  also ``write_file``; ``mcp__server`` and ``mcp__server__*`` remove a server's tools.  An entry
  with a specifier (``run_shell_command(rm -rf *)``) denies invocations, not the tool, and is
  ignored here;
* ``list_directory`` is registered only when enabled (``ls_enabled``) or named in ``core``,
  as upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from headwire.runtime.tools.base import Tool
from headwire.runtime.tools.edit import EditTool
from headwire.runtime.tools.glob import GlobTool
from headwire.runtime.tools.grep import GrepTool
from headwire.runtime.tools.ls import ListDirectoryTool
from headwire.runtime.tools.read_file import ReadFileTool
from headwire.runtime.tools.read_ledger import ReadLedger
from headwire.runtime.tools.shell import ReadOnlyCheck, ShellTool, nothing_is_read_only
from headwire.runtime.tools.write_file import PLAIN, FileFormat, WriteFileTool

CORE_TOOLS = frozenset(
    {
        "read_file",
        "zoom_image",
        "write_file",
        "edit",
        "notebook_edit",
        "glob",
        "grep_search",
        "run_shell_command",
        "list_directory",
        "read_mcp_resource",
        "web_fetch",
        "web_search",
        "todo_write",
        "save_memory",
        "lsp",
        "cron_create",
        "cron_list",
        "cron_delete",
        "loop_wakeup",
        "create_sub_session",
        "monitor",
    }
)
FAMILIES: dict[str, frozenset[str]] = {
    "read_file": frozenset({"read_file", "zoom_image", "grep_search", "glob", "list_directory"}),
    "edit": frozenset({"edit", "write_file", "notebook_edit"}),
    "run_shell_command": frozenset({"run_shell_command", "monitor"}),
}
_DISPLAY_NAMES = {
    "run_shell_command": "Shell",
    "read_file": "ReadFile",
    "write_file": "WriteFile",
    "edit": "Edit",
    "grep_search": "Grep",
    "glob": "Glob",
    "list_directory": "ListFiles",
    "notebook_edit": "NotebookEdit",
    "zoom_image": "ZoomImage",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "todo_write": "TodoList",
    "save_memory": "SaveMemory",
    "agent": "Agent",
    "skill": "Skill",
    "monitor": "Monitor",
    "read_mcp_resource": "ReadMcpResource",
}
_EXTRA_ALIASES = {
    "Bash": "run_shell_command",
    "Read": "read_file",
    "Write": "write_file",
    "replace": "edit",
    "search_file_content": "grep_search",
    "SearchFiles": "grep_search",
    "FindFiles": "glob",
    "ReadFolder": "list_directory",
    "LS": "list_directory",
    "MultiEdit": "edit",
    "TodoWrite": "todo_write",
    "task": "agent",
    "Task": "agent",
}


def _alias_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for canonical, display in _DISPLAY_NAMES.items():
        for alias in (canonical, display, f"{display}Tool"):
            table.setdefault(alias, canonical)
    for alias, canonical in _EXTRA_ALIASES.items():
        table.setdefault(alias, canonical)
    return table


ALIASES = _alias_table()


def parse_rule(raw: str) -> tuple[str, str | None]:
    """``(canonical tool name, specifier or None)`` for ``Name`` / ``Name(specifier)``."""
    text = raw.strip()
    open_at = text.find("(")
    if open_at < 0:
        return ALIASES.get(text, text), None
    name = text[:open_at].strip()
    specifier = text[open_at + 1 : -1] if text.endswith(")") else text[open_at + 1 :]
    return ALIASES.get(name, name), (specifier or None)


def canonical_name(raw: str) -> str:
    """The canonical tool name for any accepted spelling."""
    return parse_rule(raw)[0]


def _mcp_rule_matches(rule: str, name: str) -> bool:
    if rule == name:
        return True
    if rule.endswith("*"):
        return name.startswith(rule[:-1])
    return len(rule.split("__")) == 2 and name.startswith(rule + "__")


def rule_matches(rule: str, name: str) -> bool:
    """Whether a whole-tool rule for ``rule`` covers the tool ``name`` (both canonical)."""
    if rule.startswith("mcp__") or name.startswith("mcp__"):
        return _mcp_rule_matches(rule, name)
    return rule == name or name in FAMILIES.get(rule, frozenset())


def builtin_tools(
    ledger: ReadLedger | None = None,
    *,
    read_only: ReadOnlyCheck = nothing_is_read_only,
    new_file: FileFormat = PLAIN,
) -> list[Tool]:
    """Fresh instances of the seven built-in tools, for one session: the file tools share one
    :class:`~headwire.runtime.tools.read_ledger.ReadLedger` (read before write): ``ledger``,
    or a new one.  The shell tool is given ``read_only``, the permission layer's check of a
    read-only command; ``write_file`` and ``edit`` store a file they create as ``new_file``."""
    ledger = ledger if ledger is not None else ReadLedger()
    return [
        ReadFileTool(ledger),
        WriteFileTool(ledger, new_file=new_file),
        ShellTool(read_only),
        GrepTool(ledger),
        GlobTool(),
        EditTool(ledger, new_file=new_file),
        ListDirectoryTool(),
    ]


LISTED_TOOLS = 30
"""At most this many registered names are listed when no name is close to the unknown one."""


def unknown_tool_message(name: str, available: Iterable[str]) -> str:
    """The error for a call to a tool that is not registered: upstream's first sentence, then
    the registered tool the name most likely meant (an alias such as ``Bash``, a different case
    or a near spelling), so the model can retry with the right name."""
    names = sorted(set(available))
    message = f'Tool "{name}" not found in registry.'
    suggestion = suggest_tool_name(name, names)
    if suggestion is not None:
        message += f' Tool names must match exactly; did you mean "{suggestion}"?'
    elif names:
        shown = ", ".join(names[:LISTED_TOOLS]) + (", ..." if len(names) > LISTED_TOOLS else "")
        message += f" Tool names must match exactly; available tools: {shown}."
    return message


def suggest_tool_name(name: str, available: Sequence[str]) -> str | None:
    """The registered name ``name`` most likely meant, or ``None``: its canonical name when that
    is registered, a case-insensitive match, else the closest spelling (similarity >= 0.6)."""
    if not available:
        return None
    canonical = canonical_name(name)
    if canonical != name and canonical in available:
        return canonical
    folded = {candidate.casefold(): candidate for candidate in available}
    if name.casefold() in folded:
        return folded[name.casefold()]
    import difflib  # only a name that matches nothing is looked up

    close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=0.6)
    return folded[close[0]] if close else None


def _entries(values: Iterable[str] | None) -> list[str]:
    return [value for value in (values or []) if value and value.strip()]


def select_tools(
    tools: Sequence[Tool],
    core: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    *,
    ls_enabled: bool = False,
) -> list[Tool]:
    """The tools left after ``--core-tools`` (allowlist) and ``--exclude-tools`` (denylist)."""
    allow = {parse_rule(entry)[0] for entry in _entries(core)}
    deny = [name for name, specifier in map(parse_rule, _entries(exclude)) if specifier is None]
    chosen: list[Tool] = []
    for tool in tools:
        name = canonical_name(tool.name)
        if name == "list_directory" and not (ls_enabled or name in allow):
            continue
        if allow and name in CORE_TOOLS and name not in allow:
            continue
        if any(rule_matches(rule, name) for rule in deny):
            continue
        chosen.append(tool)
    return chosen
