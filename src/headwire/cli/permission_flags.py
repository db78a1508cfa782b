"""The permission flags as one live :class:`~headwire.runtime.policy.Policy`.

``--approval-mode``/``--yolo``, ``--allowed-tools`` (and ``--allowedTools``),
``--exclude-tools`` (and ``--disallowedTools``), ``--core-tools`` and
``--allow-protected-writes`` are read here once, checked up front, and turned into the policy
every agent of the session shares.  A rule headwire cannot enforce is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from headwire.cli.flags import split_list
from headwire.runtime.policy import Policy
from headwire.runtime.rules import RuleError, parse_rule, split_rules
from headwire.runtime.tools.base import ApprovalMode


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


def policy_from_args(args: argparse.Namespace, cwd: Path) -> Policy:
    """The session's policy; raises :class:`RuleError` (a usage error) for a bad rule."""
    core_names(args)
    workspace = (cwd, *(Path(d).resolve() for d in split_list(args.include_directories)))
    return Policy.from_flags(
        approval_mode(args),
        split_rules(args.allowed_tools),
        split_rules(args.exclude_tools),
        workspace=workspace,
        allow_protected_writes=bool(getattr(args, "allow_protected_writes", False)),
    )


__all__ = ["approval_mode", "core_names", "policy_from_args"]
