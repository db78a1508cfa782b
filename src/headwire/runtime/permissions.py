"""Approval rules: whether a tool call runs, asks, or is denied (upstream semantics).

* ``yolo`` runs everything; a tool that does not need approval under the mode runs;
* a call matching ``--allowed-tools`` runs (``name`` or ``name(prefix)`` for shell commands);
* in ``plan`` mode a call that would change something is denied;
* otherwise the user is asked; with nobody to ask (plain headless runs) the call is denied and
  lands in ``permission_denials``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from headwire.runtime.tools.base import ApprovalMode, Tool

Verdict = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, slots=True)
class Decision:
    """An answer to a permission request (from a client or a rule)."""

    allow: bool
    updated_input: dict[str, Any] | None = None
    message: str | None = None
    interrupt: bool = False


def _matches(rule: str, tool: Tool, args: dict[str, Any]) -> bool:
    rule = rule.strip()
    if rule in (tool.name, tool.display_name):
        return True
    name, sep, rest = rule.partition("(")
    if not sep or name.strip() not in (tool.name, tool.display_name):
        return False
    prefix = rest.rstrip(")").strip()
    command = args.get("command")
    return isinstance(command, str) and (command == prefix or command.startswith(prefix + " "))


def verdict(tool: Tool, args: dict[str, Any], mode: ApprovalMode, allowed: Iterable[str]) -> Verdict:
    """Decide locally whether ``tool`` may run with ``args`` under ``mode``."""
    if mode == "yolo" or not tool.needs_approval(args, mode):
        return "allow"
    if any(_matches(rule, tool, args) for rule in allowed):
        return "allow"
    if mode == "plan":
        return "deny"
    return "ask"


def denial_message(tool: Tool, mode: ApprovalMode) -> str:
    """The error a denied call reports to the model and on the wire."""
    if mode == "plan":
        return (
            f'Tool "{tool.name}" is not allowed in plan mode: plan mode only reads and plans. '
            "Switch the approval mode to run it."
        )
    return (
        f'Tool "{tool.name}" requires user approval, but headwire is running non-interactively '
        f'(approval mode "{mode}"). Use --approval-mode auto-edit or yolo, or '
        f"--allowed-tools {tool.name}."
    )
