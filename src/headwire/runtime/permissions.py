"""Approval rules: whether a tool call runs, asks, or is denied (upstream semantics).

* ``yolo`` runs everything; a tool that does not need approval under the mode runs;
* a call matching ``--allowed-tools`` runs (``name``, or ``name(prefix)`` for shell commands:
  every command of a chain must match, and substitutions or output redirections never do);
* in ``plan`` mode a call that would change something is denied;
* otherwise the user is asked; with nobody to ask (plain headless runs) the call is denied and
  lands in ``permission_denials``.
"""

from __future__ import annotations

import re
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


_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")
_HARMLESS_REDIRECTIONS = re.compile(r"(?:\d*>>?|&>)[ \t]*/dev/null(?=[\s;&|]|$)|\d*>&\d+")
_REDIRECTION = re.compile(r">")
_SEPARATORS = re.compile(r"&&|\|\||[;&|\n\r]")


def shell_segments(command: str) -> list[str] | None:
    """The simple commands of ``command``, split at ``&&``, ``||``, ``;``, ``|``, ``&`` and
    newlines; ``None`` when it substitutes commands (``$(...)``, backquotes, ``<(...)``) or
    redirects output (``>``) anywhere but to ``/dev/null`` or another descriptor (``2>&1``),
    which no prefix rule can vouch for.

    Quotes are not parsed: a separator inside quotes splits too, which can only make a rule
    match less (the call then asks), never more.
    """
    if _SUBSTITUTION.search(command):
        return None
    command = _HARMLESS_REDIRECTIONS.sub(" ", command)
    if _REDIRECTION.search(command):
        return None
    return [part.strip() for part in _SEPARATORS.split(command) if part.strip()]


def _names(tool: Tool) -> tuple[str, str]:
    return tool.name, tool.display_name


def _prefix(rule: str, tool: Tool) -> str | None:
    """The command prefix of a ``Name(prefix)`` rule for ``tool``, else ``None``."""
    name, sep, rest = rule.partition("(")
    if not sep or name.strip() not in _names(tool):
        return None
    return rest.rstrip(")").strip()


def allowed_by_rules(tool: Tool, args: dict[str, Any], allowed: Iterable[str]) -> bool:
    """Whether ``--allowed-tools`` rules admit this call.

    A bare name (``write_file``, ``Shell``) admits every call of the tool.  ``Name(prefix)``
    admits a shell command only when every simple command in it (see :func:`shell_segments`)
    is ``prefix`` or starts with ``prefix`` and a space, for one of the rules' prefixes, as
    Qwen Code checks each command of a chain; ``ls && rm -rf ~`` is not admitted by
    ``run_shell_command(ls)``.
    """
    rules = [rule.strip() for rule in allowed]
    if any(rule in _names(tool) for rule in rules):
        return True
    prefixes = [p for p in (_prefix(rule, tool) for rule in rules) if p]
    command = args.get("command")
    if not prefixes or not isinstance(command, str):
        return False
    segments = shell_segments(command)
    return bool(segments) and all(
        any(seg == p or seg.startswith(p + " ") for p in prefixes) for seg in segments or ()
    )


def verdict(
    tool: Tool, args: dict[str, Any], mode: ApprovalMode, allowed: Iterable[str]
) -> Verdict:
    """Decide locally whether ``tool`` may run with ``args`` under ``mode``."""
    if mode == "yolo" or not tool.needs_approval(args, mode):
        return "allow"
    if allowed_by_rules(tool, args, allowed):
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
