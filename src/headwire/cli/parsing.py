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
import difflib
import sys
from collections.abc import Iterable
from typing import Any, NoReturn

from headwire.errors import ExitCode
from headwire.io.stdio import warn

__all__ = [
    "Parser",
    "did_you_mean",
]

_UNRECOGNIZED = "unrecognized arguments: "


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest candidate, or ``""`` when none is close."""
    match = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


class Parser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` with ``allow_abbrev=False`` and one-line errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

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
