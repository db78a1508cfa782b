"""Claude Code's variadic tool flags, read the way Claude Code reads them, before argparse.

``--allowedTools``, ``--disallowedTools`` and ``--tools`` take a list: rules separated by
commas or spaces outside parentheses, in one argument or in several.  The rule headwire keeps
so that a trailing prompt still works::

    headwire --allowedTools "Bash(git *)" Edit -p hello     allows Bash(git *) and Edit
    headwire --allowedTools Bash Edit "fix the tests"      allows Bash and Edit; the prompt
                                                            is "fix the tests"

* the argument right after the flag is always its value (``--tools ""`` is the empty list);
* each following argument is taken too while every rule in it names a tool (a built-in name
  or alias such as ``Read``, ``mcp__server__tool``, ``Bash(git status)``); the first one that
  does not (a prompt, another flag) ends the list;
* ``--flag=VALUE`` takes that one argument only; ``--`` ends all flags.

Each list reaches argparse as one comma-separated value, so ``Bash(git *) Edit`` and
``Bash(git *),Edit`` mean the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

VARIADIC = frozenset({"--allowedTools", "--allowed_tools", "--disallowedTools", "--tools"})
"""Claude Code's flags that take a list of tool rules."""

_RULE = re.compile(r"[^\s,(]+(?:\([^)]*\)?)?")
"""One rule: a name, optionally followed by a parenthesised specifier (spaces allowed)."""
_GAP = re.compile(r"[\s,]*")


def rules_of(value: str) -> list[str]:
    """The rules of one argument, split at commas and spaces outside parentheses."""
    return _RULE.findall(value)


def _names_a_tool(rule: str) -> bool:
    from headwire.runtime.tools.registry import ALIASES, CORE_TOOLS

    name = rule.split("(", 1)[0]
    return name in ALIASES or name in CORE_TOOLS or name.startswith("mcp__") or name == "agent"


def looks_like_rules(text: str) -> bool:
    """Whether ``text`` is a list of tool rules (so a variadic flag takes it), not a prompt."""
    rules = rules_of(text)
    if not rules or not all(_names_a_tool(rule) for rule in rules):
        return False
    return _GAP.sub("", text) == "".join(_GAP.sub("", r) for r in rules)


def _joined(values: Sequence[str]) -> str:
    return ",".join(rule for value in values for rule in rules_of(value))


def expand_variadic(argv: Sequence[str]) -> list[str]:
    """``argv`` with each variadic tool flag's list gathered into one comma-separated value
    (see the module docstring); every other argument is left as it is."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        i += 1
        if token == "--":
            out += [token, *argv[i:]]
            break
        name, eq, value = token.partition("=")
        if name not in VARIADIC:
            out.append(token)
            continue
        if eq:
            out.append(f"{name}={_joined([value])}")
            continue
        out.append(token)
        if i >= len(argv) or (argv[i].startswith("-") and argv[i] != "-"):
            continue  # no value: argparse says so
        values = [argv[i]]
        i += 1
        while i < len(argv) and not argv[i].startswith("-") and looks_like_rules(argv[i]):
            values.append(argv[i])
            i += 1
        out.append(_joined(values))
    return out


__all__ = ["VARIADIC", "expand_variadic", "looks_like_rules", "rules_of"]
