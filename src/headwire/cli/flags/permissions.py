"""The permission flags as one live :class:`~headwire.runtime.policy.live.Policy`.

``--approval-mode``/``--yolo``, ``--allowed-tools`` (and ``--allowedTools``),
``--exclude-tools`` (and ``--disallowedTools``), ``--core-tools``, ``--tools`` and
``--allow-protected-writes`` are read here once, checked up front, and turned into the policy
every agent of the session shares.  A rule headwire cannot enforce is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from headwire.cli.flags.agent import split_list
from headwire.io.stdio import warn
from headwire.runtime.agents.tool import AGENT_TOOL_NAME
from headwire.runtime.policy.live import Policy
from headwire.runtime.policy.rules import RuleError, parse_rule, split_rules
from headwire.runtime.tools.base import ApprovalMode
from headwire.runtime.tools.registry import CORE_TOOLS

KNOWN_TOOLS = CORE_TOOLS | {AGENT_TOOL_NAME}
"""The built-in tool names ``--tools`` may keep."""


def approval_mode(args: argparse.Namespace) -> ApprovalMode:
    """The approval mode the flags ask for."""
    mode: ApprovalMode = "yolo" if args.yolo else (args.approval_mode or "default")
    return mode


def core_names(args: argparse.Namespace) -> list[str]:
    """``--core-tools`` as canonical tool names; a command specifier there is refused (it
    would widen the whole tool, not restrict it: put command rules in --allowed-tools)."""
    names: list[str] = []
    for value in split_rules(args.core_tools):
        if "(" in value:
            raise RuleError(
                f"--core-tools {value!r}: --core-tools selects whole tools; put command rules "
                "in --allowed-tools"
            )
        names.append(parse_rule(value, "--core-tools").tool)
    return names


def only_tools(args: argparse.Namespace) -> frozenset[str] | None:
    """``--tools`` (Claude Code's "only these built-in tools") as canonical names: ``None``
    when absent or ``default`` (every tool), empty for ``''`` (no built-in tool).  A name that
    is no headwire tool is noted on stderr and offers nothing (the flag can only narrow)."""
    values = getattr(args, "only_tools", None)
    if values is None:
        return None
    entries = split_rules(values)
    if entries == ["default"]:
        return None
    names: set[str] = set()
    for value in entries:
        if "(" in value:
            raise RuleError(
                f"--tools {value!r}: --tools selects whole tools; put command rules in "
                "--allowedTools"
            )
        name = parse_rule(value, "--tools").tool
        if name not in KNOWN_TOOLS:
            warn(f"headwire: note: --tools {value!r} is not a headwire tool; it offers nothing")
            continue
        names.add(name)
    return frozenset(names)


def policy_from_args(args: argparse.Namespace, cwd: Path) -> Policy:
    """The session's policy; raises :class:`RuleError` (a usage error) for a bad rule."""
    core_names(args)
    only_tools(args)
    workspace = (cwd, *(Path(d).resolve() for d in split_list(args.include_directories)))
    return Policy.from_flags(
        approval_mode(args),
        split_rules(args.allowed_tools),
        split_rules(args.exclude_tools),
        workspace=workspace,
        allow_protected_writes=bool(getattr(args, "allow_protected_writes", False)),
    )


__all__ = ["approval_mode", "core_names", "only_tools", "policy_from_args"]
