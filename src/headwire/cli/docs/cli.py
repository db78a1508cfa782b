"""The command-line reference (``docs/cli.md``), generated from the real parsers.

``python -m headwire.cli.docs.cli > docs/cli.md`` rewrites the committed file; a test asserts the
file equals :func:`render`, so a flag added, removed or reworded without regenerating the
reference fails the suite.  The output depends only on the parsers (never on the terminal
width or the Python version's help layout): each command gets its module docstring, then one
table per argument group with every flag, its argument, default and help.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from types import ModuleType

from headwire.cli.commands import bound as bound_cmd
from headwire.cli.commands import doctor as doctor_cmd
from headwire.cli.commands import schema as schema_cmd
from headwire.cli.commands import sessions as sessions_cmd
from headwire.cli.commands import trust as trust_cmd
from headwire.cli.flags import agent as flags

GENERATOR = "python -m headwire.cli.docs.cli > docs/cli.md"

_IGNORED_PREFIX = "ignored_"
"""``dest`` prefix of the Claude Code flags the agent accepts and ignores (with a note)."""


def _cell(text: str) -> str:
    """``text`` made safe for one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _rst_to_markdown(text: str) -> str:
    """Docstring markup to Markdown: ``code`` becomes `code`, roles lose their prefix."""
    for role in (":func:", ":class:", ":data:", ":mod:", ":attr:", ":meth:"):
        text = text.replace(role, "")
    return text.replace("``", "`")


def _argument(action: argparse.Action) -> str:
    """What follows the flag: ``{a,b}``, ``METAVAR``, or nothing for a switch."""
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    metavar = action.metavar
    if isinstance(metavar, tuple):
        return " ".join(metavar)
    name = metavar or action.dest.upper()
    if action.nargs in ("*", "+"):
        return f"[{name} ...]" if action.nargs == "*" else f"{name} [{name} ...]"
    if action.nargs == "?":
        return f"[{name}]"
    return name


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS, False, []):
        return ""
    return f"`{action.default}`"


def _help(action: argparse.Action, prog: str) -> str:
    if action.dest.startswith(_IGNORED_PREFIX):
        return "accepted for compatibility and ignored (a note on stderr says so)"
    text = action.help or ""
    if "%" in text:
        text = text % {**vars(action), "prog": prog}
    if isinstance(action, argparse._AppendAction) and "repeatable" not in text:
        text += " (repeatable)" if text else "repeatable"
    return text


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    return ", ".join(f"`{flag}`" for flag in action.option_strings)


def _section(
    parser: argparse.ArgumentParser, module: ModuleType | None, level: str = "##"
) -> list[str]:
    out = [f"{level} `{parser.prog}`", ""]
    doc = inspect.getdoc(module) if module is not None else None
    if doc:
        out += [_rst_to_markdown(doc), ""]
    if parser.description:
        out += [" ".join(parser.description.split()), ""]
    for group in parser._action_groups:
        actions = [
            a
            for a in group._group_actions
            if a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)
        ]
        if not actions:
            continue
        title = (group.title or "options").strip()
        out += [f"{level}# {title[0].upper()}{title[1:]}", ""]
        if group.description:
            out += [" ".join(group.description.split()), ""]
        out += ["| flag | argument | default | description |", "| --- | --- | --- | --- |"]
        for action in actions:
            argument = _argument(action)
            cells = (
                _flags(action),
                f"`{_cell(argument)}`" if argument else "",
                _default(action),
                _cell(_help(action, parser.prog)),
            )
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if parser.epilog:
        out += ["```text", parser.epilog.rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _section(sub, None, level + "#")
    return out


def render() -> str:
    """The whole reference, as Markdown."""
    lines = [
        "# Command-line reference",
        "",
        f"<!-- Generated from the argument parsers by `{GENERATOR}`; do not edit by hand. -->",
        "",
        "Every flag `headwire` accepts, straight from its parsers. `headwire --help`, "
        "`headwire sessions --help`, `headwire bound --help`, `headwire schema --help` and "
        "`headwire doctor --help` print the same in the terminal.",
        "",
    ]
    lines += _section(flags.build_parser(), flags)
    lines += _section(sessions_cmd.build_parser(), sessions_cmd)
    lines += _section(bound_cmd._parser(), bound_cmd)
    lines += _section(schema_cmd._parser(), schema_cmd)
    lines += _section(doctor_cmd._parser(), doctor_cmd)
    lines += _section(trust_cmd._parser(), trust_cmd)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    """Print the reference on stdout."""
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
