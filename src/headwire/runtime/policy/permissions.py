"""Answers to permission requests, and the one-shot helpers over
:mod:`headwire.runtime.policy.live`.

The rules themselves live in :class:`headwire.runtime.policy.live.Policy` (the live policy of a
session), :mod:`headwire.runtime.policy.rules` (their grammar) and
:mod:`headwire.runtime.policy.shell_rules` (shell commands decided on the parsed line).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from headwire.records import dataclass
from headwire.runtime.policy.live import Policy, Verdict, denial_message
from headwire.runtime.tools.base import ApprovalMode, Tool


@dataclass(frozen=True, slots=True)
class Decision:
    """An answer to a permission request (from a client or a rule)."""

    allow: bool
    updated_input: dict[str, Any] | None = None
    message: str | None = None
    interrupt: bool = False


def verdict(
    tool: Tool, args: dict[str, Any], mode: ApprovalMode, allowed: Iterable[str]
) -> Verdict:
    """Decide one call with a throw-away policy of ``mode`` and ``allowed`` rules."""
    return Policy.from_flags(mode, allowed).decide(tool, args).verdict


__all__ = ["Decision", "Verdict", "denial_message", "verdict"]
