"""Agent definitions: the built-in ``general-purpose`` agent and user-defined ones.

A user-defined agent is a Markdown file in ``<data dir>/agents/`` or the project's
``.headwire/agents/`` (the project wins on a name clash)::

    ---
    name: reviewer
    description: Reviews a diff
    tools: read_file, grep_search        # or a YAML list; omitted = every tool
    approvalMode: plan                   # optional (or Claude's permissionMode)
    ---
    You are a careful reviewer...        # the system prompt

A definition narrows its parent, never widens it: ``tools`` picks among the parent's tools
(any alias: ``Read``, ``Bash``), and ``approvalMode`` can only make the subagent stricter than
the parent's mode at each call (``plan`` < ``default`` < ``auto-edit`` < ``yolo``).  Project
definitions are read only in a trusted folder (:mod:`headwire.runtime.trust`).

Malformed files are skipped with a note (never a crash).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from headwire.io.lines import open_regular
from headwire.records import dataclass
from headwire.runtime.front_matter import AgentFileError as AgentFileError
from headwire.runtime.front_matter import _parse_list, split_front_matter
from headwire.runtime.tools.base import ApprovalMode

_MODES: dict[str, ApprovalMode] = {
    "plan": "plan",
    "default": "default",
    "auto-edit": "auto-edit",
    "autoEdit": "auto-edit",
    "acceptEdits": "auto-edit",
    "yolo": "yolo",
    "bypassPermissions": "yolo",
    "dontAsk": "default",
}

GENERAL_PURPOSE_PROMPT = (
    "You are a general-purpose subagent of headwire. Carry out the task you are given with the "
    "tools you have, then reply with a concise report of what you found or did."
)


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """A subagent type: its name, description, allowed tools (``None`` = all) and prompt."""

    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None = None
    source: str = "built-in"
    approval_mode: ApprovalMode | None = None
    """The strictest mode the subagent may run in (``None``: its parent's)."""


BUILTIN_AGENTS = (
    AgentDefinition(
        "general-purpose",
        "General-purpose agent for researching questions and running multi-step tasks.",
        GENERAL_PURPOSE_PROMPT,
    ),
)


def parse_agent_file(text: str, source: str) -> AgentDefinition:
    """Parse a Markdown agent file with a front-matter block."""
    fields, lists, body = split_front_matter(text, source)
    name = fields.get("name", "")
    if not name:
        raise AgentFileError(f"{source}: the front matter needs a name")
    tools = None
    if "tools" in fields:
        tools = _parse_list(fields["tools"], lists.get("tools", []))
    raw_mode = fields.get("approvalMode") or fields.get("permissionMode")
    mode = _MODES.get(raw_mode) if raw_mode else None
    if raw_mode and mode is None:
        raise AgentFileError(
            f"{source}: unknown approvalMode {raw_mode!r}; one of {', '.join(sorted(_MODES))}"
        )
    return AgentDefinition(name, fields.get("description", ""), body, tools, source, mode)


MAX_AGENT_FILE_BYTES = 1024 * 1024
"""An agent file larger than this is skipped with a note."""


def load_agents(
    user_dir: Path, project_dir: Path | None, warn: Callable[[str], None] | None = None
) -> dict[str, AgentDefinition]:
    """Built-in agents, then the user's, then the project's (later wins; ``project_dir`` is
    ``None`` in a folder that is not trusted)."""
    agents = {a.name: a for a in BUILTIN_AGENTS}
    for folder in (user_dir, project_dir):
        if folder is None or not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:  # a FIFO or a device named *.md must not block the start
                with os.fdopen(open_regular(path), "rb") as handle:
                    raw = handle.read(MAX_AGENT_FILE_BYTES + 1)
                if len(raw) > MAX_AGENT_FILE_BYTES:
                    raise AgentFileError(f"{path}: larger than {MAX_AGENT_FILE_BYTES} bytes")
                definition = parse_agent_file(raw.decode("utf-8"), str(path))
            except (OSError, UnicodeDecodeError, AgentFileError) as exc:
                if warn is not None:
                    warn(f"headwire: skipping agent file: {exc}")
                continue
            agents[definition.name] = definition
    return agents


_INLINE_KEYS = frozenset({"description", "prompt", "tools", "model"})
_CLAUDE_ONLY_KEYS = frozenset(
    {
        "disallowedTools",
        "skills",
        "memory",
        "mcpServers",
        "initialPrompt",
        "maxTurns",
        "background",
        "effort",
        "permissionMode",
    }
)
"""Claude Code's other agent keys: accepted, not used (a note says so)."""


def agents_from_json(
    text: str, source: str = "--agents", note: Callable[[str], None] | None = None
) -> dict[str, AgentDefinition]:
    """Subagents given inline, in Claude Code's ``--agents`` format::

        {"reviewer": {"description": "...", "prompt": "...", "tools": ["Read"], "model": "x"}}

    ``description`` and ``prompt`` are required; ``tools`` is optional (every tool when
    omitted); ``model`` is accepted and not used (subagents run on the session's model), and
    so are Claude Code's other keys (``disallowedTools``, ``maxTurns``...), with a ``note``.
    Raises :class:`AgentFileError` with a one-line message naming the agent and the key.
    """
    import json

    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise AgentFileError(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise AgentFileError(f"{source}: expected a JSON object of agents by name")
    agents: dict[str, AgentDefinition] = {}
    for name, raw in data.items():
        where = f"{source}: {name!r}"
        if not name.strip():
            raise AgentFileError(f"{source}: an agent name must not be empty")
        if not isinstance(raw, dict):
            raise AgentFileError(f"{where}: expected an object")
        unused = sorted(set(raw) & _CLAUDE_ONLY_KEYS)
        if unused and note is not None:
            note(f"headwire: note: {where}: not used here: {', '.join(unused)}")
        unknown = sorted(set(raw) - _INLINE_KEYS - _CLAUDE_ONLY_KEYS)
        if unknown:
            raise AgentFileError(
                f"{where}: unknown key {unknown[0]!r} (expected description, prompt, tools, "
                "model, or another key of Claude Code's agent definitions)"
            )
        for key in ("description", "prompt"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise AgentFileError(f"{where}: {key!r} must be a non-empty string")
        tools = raw.get("tools")
        if tools is not None and (
            not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)
        ):
            raise AgentFileError(f"{where}: 'tools' must be an array of tool names")
        if raw.get("model") is not None and not isinstance(raw["model"], str):
            raise AgentFileError(f"{where}: 'model' must be a string")
        agents[name] = AgentDefinition(
            name,
            raw["description"],
            raw["prompt"],
            None if tools is None else tuple(t.strip() for t in tools if t.strip()),
            source,
        )
    return agents
