"""The live permission policy of a session: its approval mode and its allow and deny rules.

One :class:`Policy` object is shared by reference by everything that decides a tool call: the
main agent, every subagent (through a :meth:`Policy.narrowed` view that reads the same state),
the persistent session's ``set_permission_mode`` and ACP's ``session/set_mode``.  It is
consulted at each call, so a change of mode reaches work that is already running: a subagent
started under ``yolo`` stops writing the moment the session switches to ``plan``.

A call is decided in this order (:meth:`Policy.decide`):

1. a deny rule for the whole tool denies it (also in ``yolo``);
2. for the shell, a command deny rule that matches a command of the line denies it; a line
   that cannot be checked against the deny rules is asked, never run on its own (also in
   ``yolo``; see :mod:`headwire.runtime.policy.shell_rules`);
3. ``yolo`` allows;
4. a call that does not need approval under the mode, a read-only shell command inside the
   workspace, or an allow rule that matches allows;
5. ``plan`` denies; any other mode asks (with nobody to ask, the call is denied with a hint
   naming a flag that would allow it).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from headwire.io.stdio import warn
from headwire.records import dataclass
from headwire.runtime.policy.rules import (
    SHELL_TOOL,
    Rule,
    RuleError,
    names_tool,
    parse_rule,
    parse_rules,
)
from headwire.runtime.policy.shell_rules import allows, denies, read_only, suggested_rules
from headwire.runtime.policy.shell_syntax import analyze
from headwire.runtime.tools.base import ApprovalMode, Tool, ToolOutcome

Verdict = Literal["allow", "ask", "deny"]

MODE_RANK: dict[ApprovalMode, int] = {"plan": 0, "default": 1, "auto-edit": 2, "yolo": 3}
"""Approval modes from the strictest to the loosest."""


def stricter(a: ApprovalMode, b: ApprovalMode | None) -> ApprovalMode:
    """The stricter of two modes (``b`` ``None``: ``a``)."""
    if b is None:
        return a
    return a if MODE_RANK[a] <= MODE_RANK[b] else b


@dataclass(frozen=True, slots=True)
class Ruling:
    """A decision and, for ``deny`` (or ``ask`` with nobody to ask), the message the model
    and the wire get."""

    verdict: Verdict
    message: str | None = None


class _State:
    """What every view of one policy shares."""

    def __init__(
        self,
        mode: ApprovalMode,
        allow: list[Rule],
        deny: list[Rule],
        workspace: tuple[Path, ...],
        allow_protected_writes: bool,
    ) -> None:
        self.mode = mode
        self.allow = allow
        self.deny = deny
        self.workspace = workspace
        self.allow_protected_writes = allow_protected_writes


class Policy:
    """A session's approval mode and rules, shared by reference and read at each call."""

    def __init__(
        self,
        mode: ApprovalMode = "default",
        allow: Iterable[Rule] = (),
        deny: Iterable[Rule] = (),
        *,
        workspace: Sequence[Path] = (),
        allow_protected_writes: bool = False,
    ) -> None:
        self._state = _State(
            mode, list(allow), list(deny), tuple(workspace), allow_protected_writes
        )
        self._cap: ApprovalMode | None = None

    @classmethod
    def from_flags(
        cls,
        mode: ApprovalMode,
        allowed: Iterable[str] = (),
        excluded: Iterable[str] = (),
        *,
        workspace: Sequence[Path] = (),
        allow_protected_writes: bool = False,
    ) -> Policy:
        """Build from flag values; raises :class:`~headwire.runtime.policy.rules.RuleError`."""
        return cls(
            mode,
            parse_rules(allowed, "--allowed-tools"),
            parse_rules(excluded, "--exclude-tools"),
            workspace=workspace,
            allow_protected_writes=allow_protected_writes,
        )

    # -- shared state --------------------------------------------------------------------------

    @property
    def mode(self) -> ApprovalMode:
        """The approval mode in force now (a subagent's view: never looser than its cap)."""
        return stricter(self._state.mode, self._cap)

    @mode.setter
    def mode(self, value: ApprovalMode) -> None:
        if value not in MODE_RANK:
            raise ValueError(f"unknown approval mode {value!r}")
        self._state.mode = value

    @property
    def allow_rules(self) -> tuple[Rule, ...]:
        """The allow rules (``--allowed-tools`` and "allow always" answers)."""
        return tuple(self._state.allow)

    @property
    def deny_rules(self) -> tuple[Rule, ...]:
        """The deny rules (``--exclude-tools`` / ``--disallowedTools``)."""
        return tuple(self._state.deny)

    @property
    def workspace(self) -> tuple[Path, ...]:
        """The workspace roots (the working directory first)."""
        return self._state.workspace

    @property
    def allow_protected_writes(self) -> bool:
        """Whether the file tools may write ``.git/`` and ``.headwire/``."""
        return self._state.allow_protected_writes

    def add_allow(self, text: str) -> None:
        """Add an allow rule for the rest of the session (raises ``RuleError``)."""
        self._state.allow.append(parse_rule(text, "allow rule"))

    def set_allow(self, texts: Iterable[str]) -> None:
        """Replace the allow rules; a rule that cannot be read is dropped with a note (an
        allow rule left out only makes the policy ask more, never less)."""
        rules: list[Rule] = []
        for text in texts:
            try:
                rules.append(parse_rule(text, "allow rule"))
            except RuleError as exc:
                warn(f"headwire: {exc}; not added")
        self._state.allow[:] = rules

    def narrowed(self, cap: ApprovalMode | None) -> Policy:
        """A view for a subagent: the same live state, its mode never looser than ``cap``."""
        view = Policy.__new__(Policy)
        view._state = self._state
        view._cap = stricter(cap, self._cap) if cap is not None else self._cap
        return view

    def excludes(self, tool_name: str) -> bool:
        """Whether a deny rule removes the whole tool (any spelling: ``Task``, ``Agent``...)."""
        return any(
            r.whole_tool and names_tool(r, tool_name, families=True) for r in self._state.deny
        )

    # -- deciding --------------------------------------------------------------------------------

    def decide(self, tool: Tool, args: dict[str, Any]) -> Ruling:
        """Decide one call now (see the module doc for the order)."""
        if self.excludes(tool.name):
            return Ruling("deny", f'Tool "{tool.name}" is denied by the rules (--exclude-tools).')
        mode = self.mode
        command = args.get("command")
        if tool.name != SHELL_TOOL or not isinstance(command, str):
            if mode == "yolo" or not tool.needs_approval(args, mode):
                return Ruling("allow")
            if any(r.whole_tool and names_tool(r, tool.name) for r in self._state.allow):
                return Ruling("allow")
            return self._refuse(tool, args, mode)
        if mode == "yolo" and not any(r.words for r in self._state.deny):
            # what follows would allow it without a command deny rule: the line is not
            # parsed (a one-shot ``--yolo`` run never loads the shell parser)
            return Ruling("allow")
        analysis = analyze(command)
        match = denies(analysis, self._state.deny)
        if match.rule is not None:
            return Ruling(
                "deny",
                f"Command denied by the rule {match.rule.text!r} (--exclude-tools): {command}",
            )
        if match.uncertain is not None:
            message = (
                f"Command not run: it cannot be checked against the deny rules "
                f"({match.uncertain}). Rewrite it so every command is spelled out."
            )
            return Ruling("deny" if mode == "plan" else "ask", message)
        if mode == "yolo":
            return Ruling("allow")
        shell_rules = [r for r in self._state.allow if names_tool(r, SHELL_TOOL)]
        if any(r.whole_tool for r in shell_rules) or allows(analysis, shell_rules):
            return Ruling("allow")
        base = self._base(args)
        if not args.get("is_background") and read_only(analysis, base, self.workspace):
            return Ruling("allow")
        return self._refuse(tool, args, mode)

    def check_updated(self, tool: Tool, updated: Any) -> ToolOutcome | None:
        """A client allowed the call with ``updatedInput``: ``None`` when that input may run,
        else the error outcome (it does not fit the tool's schema, or a deny rule refuses it)."""
        from headwire.runtime.tools.schema import tool_input_problem

        problem = tool_input_problem(tool, updated)
        if problem is not None:
            msg = f'The permission answer\'s updatedInput for "{tool.name}" was refused: {problem}'
            return ToolOutcome(llm_text=msg, error=msg, error_type="invalid_tool_params")
        ruling = self.decide(tool, updated)
        if ruling.verdict == "deny":
            msg = ruling.message or f'Tool "{tool.name}" was denied.'
            return ToolOutcome(llm_text=msg, error=msg, error_type="execution_denied")
        return None

    def _base(self, args: dict[str, Any]) -> Path | None:
        directory = args.get("directory")
        if isinstance(directory, str) and directory:
            return Path(directory)
        return self.workspace[0] if self.workspace else None

    def _refuse(self, tool: Tool, args: dict[str, Any], mode: ApprovalMode) -> Ruling:
        return Ruling("deny" if mode == "plan" else "ask", denial_message(tool, mode, args))


def allow_hint(tool: Tool, args: dict[str, Any] | None = None) -> str:
    """The flags that would really let this call run."""
    name = tool.name
    if name == SHELL_TOOL:
        command = (args or {}).get("command")
        rules = suggested_rules(analyze(command)) if isinstance(command, str) else []
        if rules:
            return f"Use --allowed-tools {shlex.quote(','.join(rules))} or --approval-mode yolo."
        if isinstance(command, str):
            return (
                "No --allowed-tools rule can allow this command (it writes a file, assigns a "
                "variable or uses syntax the rules do not read); use --approval-mode yolo."
            )
        return "Use --allowed-tools 'run_shell_command(PROGRAM)' or --approval-mode yolo."
    if tool.kind in ("edit", "delete", "move"):
        return f"Use --approval-mode auto-edit or yolo, or --allowed-tools {name}."
    if name.startswith("mcp__"):
        return (
            f'Use --allowed-tools {name}, "trust": true in its server\'s settings, or '
            "--approval-mode yolo."
        )
    return f"Use --allowed-tools {name} or --approval-mode yolo."


def denial_message(tool: Tool, mode: ApprovalMode, args: dict[str, Any] | None = None) -> str:
    """The error a refused call reports to the model and on the wire, with a working hint."""
    if mode == "plan":
        return (
            f'Tool "{tool.name}" is not allowed in plan mode: plan mode only reads and plans. '
            f"Switch the approval mode to run it, or: {allow_hint(tool, args)}"
        )
    return (
        f'Tool "{tool.name}" requires user approval, but headwire is running non-interactively '
        f'(approval mode "{mode}"). {allow_hint(tool, args)}'
    )


__all__ = [
    "MODE_RANK",
    "Policy",
    "Ruling",
    "Verdict",
    "allow_hint",
    "denial_message",
    "stricter",
]
