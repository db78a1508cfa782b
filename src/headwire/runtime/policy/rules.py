"""Permission rules: the grammar of ``--allowed-tools``, ``--exclude-tools``, ``--core-tools``
(and Claude Code's ``--allowedTools`` / ``--disallowedTools``).

::

    rule       = tool | tool "(" command ")"
    tool       = any name of :data:`headwire.runtime.tools.registry.ALIASES`
                 (run_shell_command, Shell, Bash, read_file, Read, Task, Agent, ...),
                 or mcp__SERVER, mcp__SERVER__TOOL, mcp__SERVER__*
    command    = shell words, optionally ending in ":*" or " *"  (shell tools only)

``Bash(git status)``, ``Bash(git status:*)`` and ``Bash(git status *)`` all mean "a command
whose words begin with ``git status``".  A specifier on any other tool (``Read(./.env)``,
``WebFetch(domain:x)``), a wildcard that is not at the end, an empty or unbalanced specifier
cannot be enforced and is refused with :class:`RuleError` (exit 2) -- never ignored.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from headwire.errors import UsageError
from headwire.records import dataclass
from headwire.runtime.tools.registry import ALIASES, FAMILIES

SHELL_TOOL = "run_shell_command"


class RuleError(UsageError):
    """A permission rule headwire cannot enforce; the message names the flag and the rule."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: the canonical tool name and, for the shell, the command's leading words."""

    text: str
    tool: str
    words: tuple[str, ...] | None = None

    @property
    def whole_tool(self) -> bool:
        """Whether the rule names the tool without a command specifier."""
        return self.words is None


def _command_words(specifier: str, text: str, flag: str) -> tuple[str, ...] | None:
    try:
        words = shlex.split(specifier)
    except ValueError as exc:
        raise RuleError(f"{flag} {text!r}: cannot read the command: {exc}") from None
    if words and words[-1] == "*":
        words.pop()
    elif words and words[-1].endswith(":*"):
        words[-1] = words[-1][:-2]
        if not words[-1]:
            words.pop()
    if any(ch in word for word in words for ch in "*?"):
        raise RuleError(
            f"{flag} {text!r}: only a trailing wildcard (':*' or ' *') is supported in a "
            "command rule"
        )
    return tuple(words) or None


def parse_rule(text: str, flag: str = "rule") -> Rule:
    """Parse one rule; raises :class:`RuleError` for a form headwire cannot enforce."""
    raw = text.strip()
    if not raw:
        raise RuleError(f"{flag}: an empty rule")
    open_at = raw.find("(")
    if open_at < 0:
        if ")" in raw:
            raise RuleError(f"{flag} {text!r}: unbalanced parenthesis")
        return Rule(raw, ALIASES.get(raw, raw))
    name = raw[:open_at].strip()
    if not raw.endswith(")"):
        raise RuleError(f"{flag} {text!r}: a specifier must end with ')'")
    specifier = raw[open_at + 1 : -1].strip()
    tool = ALIASES.get(name, name)
    if not name:
        raise RuleError(f"{flag} {text!r}: the rule names no tool")
    if tool != SHELL_TOOL:
        raise RuleError(
            f"{flag} {text!r}: specifiers are supported for the shell tool only "
            f"(run_shell_command(...), Bash(...)); name the whole tool ({name}) instead"
        )
    if not specifier:
        raise RuleError(f"{flag} {text!r}: an empty command")
    return Rule(raw, tool, _command_words(specifier, text, flag))


def parse_rules(values: Iterable[str], flag: str) -> list[Rule]:
    """Parse every rule of a flag (values already split at commas)."""
    return [parse_rule(value, flag) for value in values if value.strip()]


def split_rules(values: Iterable[str] | None) -> list[str]:
    """Flag values as rules: split at commas outside parentheses, blanks dropped
    (``Bash(git add a,b)`` stays one rule)."""
    out: list[str] = []
    for value in values or ():
        depth, start = 0, 0
        for i, ch in enumerate(value):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            elif ch == "," and depth == 0:
                out.append(value[start:i])
                start = i + 1
        out.append(value[start:])
    return [v.strip() for v in out if v.strip()]


def _mcp_matches(rule: str, name: str) -> bool:
    if rule == name:
        return True
    if rule.endswith("*"):
        return name.startswith(rule[:-1])
    return len(rule.split("__")) == 2 and name.startswith(rule + "__")


def names_tool(rule: Rule, name: str, *, families: bool = False) -> bool:
    """Whether ``rule`` is about the tool ``name`` (canonical).  With ``families`` (deny and
    exclude rules), a rule for ``read_file`` also covers ``grep_search``, ``glob``,
    ``list_directory``, one for ``edit`` also ``write_file``, as upstream excludes them."""
    canonical = ALIASES.get(name, name)
    if rule.tool.startswith("mcp__") or canonical.startswith("mcp__"):
        return _mcp_matches(rule.tool, canonical)
    if rule.tool == canonical:
        return True
    return families and canonical in FAMILIES.get(rule.tool, frozenset())


__all__ = [
    "SHELL_TOOL",
    "Rule",
    "RuleError",
    "names_tool",
    "parse_rule",
    "parse_rules",
    "split_rules",
]
