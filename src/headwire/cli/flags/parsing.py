"""The argument parser every ``headwire`` command uses: short errors, no abbreviations.

argparse's own error prints the whole usage block (forty lines for the agent) before the
message.  :class:`Parser` prints one line instead, on stderr, with exit code 2::

    headwire: unknown option '--yollo' (did you mean '--yolo'?); see 'headwire --help'
    headwire: -o/--output-format: invalid value 'yaml' (choose from text, json, stream-json); ...

Unique prefixes of long options (``--output`` for ``--output-format``) are refused
(``allow_abbrev=False``): a script that works today keeps its meaning when a flag is added.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from typing import Any, NoReturn

from headwire.errors import ExitCode
from headwire.io.stdio import warn

__all__ = [
    "PEER_SUBCOMMANDS",
    "SUBCOMMANDS",
    "Parser",
    "did_you_mean",
    "subcommand_slip",
]

_UNRECOGNIZED = "unrecognized arguments: "


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the first candidate ``word`` begins (``--output``: the
    first defined of ``--output-format`` and ``--output-style``), else the closest one, or
    ``""`` when none is close."""
    import difflib  # only for a usage error: a run that parses its flags never loads it

    names = list(candidates)
    started = [n for n in names if n.startswith(word) and len(word) > 2]
    match = started[:1] or difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


SUBCOMMANDS = ("bound", "schema", "doctor", "sessions", "trust")
"""headwire's subcommands (the first word of the command line)."""

_SETTINGS = "~/.headwire/settings.json or .headwire/settings.json (docs/settings.md)"
_KEY = "OPENAI_API_KEY (or ANTHROPIC_API_KEY, GEMINI_API_KEY) and OPENAI_BASE_URL"
PEER_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "mcp": ("--mcp-config", "MCP servers come from --mcp-config or mcpServers in " + _SETTINGS),
    "exec": ("-p 'PROMPT'", "headwire runs a prompt as it is"),
    "run": ("-p 'PROMPT'", "headwire runs a prompt as it is"),
    "resume": ("-r [ID]", "-r alone resumes the latest session here, -c continues it"),
    "continue": ("-c", "-c continues the latest session here"),
    "config": ("--settings", "settings are read from " + _SETTINGS),
    "settings": ("--settings", "settings are read from " + _SETTINGS),
    "login": ("an API key", "set " + _KEY),
    "logout": ("an API key", "unset " + _KEY),
    "auth": ("--auth-type", "set " + _KEY),
    "setup-token": ("an API key", "set " + _KEY),
    "update": ("pip install -U headwire", "update with your installer"),
    "upgrade": ("pip install -U headwire", "update with your installer"),
    "install": ("--help", "headwire is installed already"),
    "extensions": ("--help", "headwire has no extensions"),
    "plugin": ("--help", "headwire has no plugins"),
    "help": ("--help", "headwire --help lists the flags and subcommands"),
    "version": ("--version", "headwire --version prints the version"),
}
"""First words that are subcommands of Claude Code, Qwen Code, Gemini CLI or Codex: what to
type in headwire instead, and why."""


def _distance(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute, swap two neighbours) of two short words."""
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]


def subcommand_slip(word: str, prompt: str | None = None) -> str | None:
    """The error for a first word that is not a prompt but a mistyped headwire subcommand
    (same first letter, one edit away, two for words of seven letters or more) or a peer's
    subcommand; ``None`` for anything else (a prompt).  Only a lone word of at most 20
    letters is considered.  ``prompt`` (the whole prompt) is quoted in the way out: ``-p``."""
    if not word or len(word) > 20 or not word.replace("-", "").isalpha():
        return None
    lowered = word.lower()
    escape = f"to send {prompt or word!r} to the model, use -p {prompt or word!r}"
    if lowered in PEER_SUBCOMMANDS:
        instead, why = PEER_SUBCOMMANDS[lowered]
        return f"unknown command {word!r} (did you mean {instead}? {why}); {escape}"
    allowed = 2 if len(word) >= 7 else 1 if len(word) >= 4 else 0
    close = [c for c in SUBCOMMANDS if c[0] == lowered[0] and _distance(lowered, c) <= allowed]
    if close:
        return f"unknown command {word!r} (did you mean {close[0]!r}?); {escape}"
    return None


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` reads it (``COLUMNS``, then the
    terminal on fd 1, else 80), without importing ``shutil`` (and its compression modules)
    on every run: argparse makes a help formatter for each argument it adds."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size().columns  # the terminal on fd 1, as shutil asks
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Parser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` with ``allow_abbrev=False`` and one-line errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def _get_formatter(self) -> argparse.HelpFormatter:
        """argparse's formatter at argparse's width (the terminal's, less 2), read here."""
        make: Any = self.formatter_class  # typeshed's protocol leaves ``width`` out
        formatter: argparse.HelpFormatter = make(prog=self.prog, width=_columns() - 2)
        return formatter

    def _options(self) -> list[str]:
        """Every option string of this parser and of its subcommands."""
        found: list[str] = []
        for action in self._actions:
            found += action.option_strings
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    if isinstance(sub, Parser):
                        found += sub._options()
        return found

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            names = [str(c) for c in choices]
            hint = did_you_mean(str(value), names)
            if isinstance(action, argparse._SubParsersAction):
                message = f"unknown command {value!r} (choose from {', '.join(names)}){hint}"
                raise argparse.ArgumentError(None, message)
            message = f"invalid value {value!r} (choose from {', '.join(names)}){hint}"
            raise argparse.ArgumentError(action, message)

    def friendly(self, message: str) -> str:
        """argparse's error ``message`` as the one line :meth:`error` prints."""
        if message.startswith(_UNRECOGNIZED):
            words = message[len(_UNRECOGNIZED) :].split()
            flag = next((w for w in words if w.startswith("-")), None)
            if flag is not None:
                name = flag.split("=", 1)[0]
                return f"unknown option {name!r}{did_you_mean(name, self._options())}"
            return f"unexpected argument {words[0]!r}" if words else message
        return message.removeprefix("argument ")

    last_error: str | None = None
    """The one line of the last :meth:`error` (a stream-JSON startup failure result says it)."""

    def error(self, message: str) -> NoReturn:
        """Print one line (no usage block) and exit with :attr:`ExitCode.USAGE`."""
        prog = self.prog
        self.last_error = self.friendly(message)
        warn(f"{prog}: {self.last_error}; see '{prog} --help'")
        sys.exit(ExitCode.USAGE)
