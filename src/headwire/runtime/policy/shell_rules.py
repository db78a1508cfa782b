"""Shell permission rules decided on the parsed command
(:mod:`headwire.runtime.policy.shell_syntax`).

* **Allow** (``Bash(git status)``): every simple command of the line -- in chains, pipelines,
  subshells, groups, command and process substitutions, here-documents -- begins with the
  rule's words, taken literally; nothing assigns a variable; no redirection writes to a file
  (``/dev/null`` and descriptor copies such as ``2>&1`` are not files); and the parser
  understood the whole line.  Anything else is not allowed by the rule (it is asked).
* **Read-only shortcut** (the commands of :data:`READ_ONLY_COMMANDS` run without asking, in
  plan mode too): the same structure, every word literal, no option that reads a list of file
  names or follows links, and every word that names a path stays in the workspace: no
  absolute, ``~`` or ``..`` paths (also glued to an option: ``--files0-from=/x``, ``-f/x``),
  and a path that exists must resolve (through symlinks) inside a workspace root.
* **Deny** (``Bash(rm)``): a command of the line whose program (its base name, so ``/bin/rm``
  too) is the rule's first word and whose arguments hold the rule's other words in order --
  also behind wrappers (``env``, ``sudo``, ``xargs``, ``nohup``, ``timeout``, ``find -exec``
  ...) and inside ``bash -c '...'`` and ``eval``.  When the line cannot be read well enough to
  tell (a syntax error, a computed command name, ``bash -c "$x"``), the answer is *uncertain*:
  the call is asked, never run on its own, even in ``yolo``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

from headwire.records import dataclass
from headwire.runtime.policy.rules import Rule
from headwire.runtime.policy.shell_syntax import SYNTAX_ERROR, Analysis, Command, Word, analyze

READ_ONLY_COMMANDS = frozenset(
    {
        "basename",
        "cat",
        "dirname",
        "du",
        "echo",
        "grep",
        "head",
        "id",
        "ls",
        "pwd",
        "realpath",
        "stat",
        "tail",
        "true",
        "uname",
        "wc",
        "which",
        "whoami",
    }
)
"""Commands that only read; they run without asking when their arguments stay inside."""

_FORBIDDEN_SHORT = {"grep": frozenset("Rf"), "du": frozenset("LX")}
"""Short options that read file names from a file or follow links out of the workspace."""
_FORBIDDEN_LONG = frozenset(
    {
        "--files0-from",
        "--file",
        "--exclude-from",
        "--dereference",
        "--dereference-recursive",
    }
)

WRAPPERS = frozenset(
    {
        "!",
        "builtin",
        "busybox",
        "chroot",
        "command",
        "coproc",
        "doas",
        "env",
        "exec",
        "find",
        "flock",
        "ionice",
        "nice",
        "nohup",
        "nsenter",
        "parallel",
        "setsid",
        "stdbuf",
        "strace",
        "sudo",
        "taskset",
        "time",
        "timeout",
        "unshare",
        "watch",
        "xargs",
    }
)
"""Programs that run another program named among their arguments."""
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"})
_MAX_NESTING = 8


# -- allow ------------------------------------------------------------------------------------


def _begins_with(words: Sequence[Word], prefix: Sequence[str]) -> bool:
    if not words or len(words) < len(prefix):
        return False
    return all(word.literal == want for word, want in zip(words, prefix, strict=False))


def plain_structure(analysis: Analysis) -> bool:
    """Understood, something to run, nothing assigned and no file written."""
    return (
        analysis.understood
        and bool(analysis.commands)
        and not analysis.writes_file
        and all(cmd.words and not cmd.assigns for cmd in analysis.commands)
    )


def allows(analysis: Analysis, rules: Iterable[Rule]) -> bool:
    """Whether the command rules admit every command of the line (see the module doc)."""
    prefixes = [rule.words for rule in rules if rule.words]
    if not prefixes or not plain_structure(analysis):
        return False
    return all(any(_begins_with(cmd.words, p) for p in prefixes) for cmd in analysis.commands)


# -- read-only ----------------------------------------------------------------------------------


def _option_ok(program: str, word: str) -> str | None:
    """``None`` when the option is harmless, else the path-like value to check (or ``""`` to
    refuse)."""
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        if name in _FORBIDDEN_LONG:
            return ""
        return value if eq else None
    letters = word[1:]
    if set(letters) & _FORBIDDEN_SHORT.get(program, frozenset()) or "/" in letters:
        return ""
    return None


def _path_ok(text: str, base: Path | None, roots: Sequence[Path]) -> bool:
    if text.startswith(("/", "~")) or ".." in text.split("/"):
        return False
    if base is None or not roots or not text:
        return True
    candidate = base / text
    if not os.path.lexists(candidate):
        return True
    real = Path(os.path.realpath(candidate))
    return any(real == root or real.is_relative_to(root) for root in roots)


def _read_only_command(cmd: Command, base: Path | None, roots: Sequence[Path]) -> bool:
    program = cmd.name
    if program not in READ_ONLY_COMMANDS:
        return False
    options = True
    for word in cmd.words[1:]:
        text = word.literal
        if text is None:
            return False
        if options and text == "--":
            options = False
            continue
        if options and text.startswith("-") and text != "-":
            value = _option_ok(program, text)
            if value is None:
                continue
            if not value or not _path_ok(value, base, roots):
                return False
            continue
        if not _path_ok(text, base, roots):
            return False
    return True


def read_only(analysis: Analysis, base: Path | None = None, roots: Sequence[Path] = ()) -> bool:
    """Whether the line only runs read-only commands on paths inside ``roots`` (relative
    paths resolved from ``base``; without ``base`` only the words themselves are checked)."""
    if not plain_structure(analysis):
        return False
    real_roots = [Path(os.path.realpath(root)) for root in roots]
    for redirect in analysis.redirects:
        if redirect.operator == "<":
            target = redirect.target.literal if redirect.target else None
            if target is None or not _path_ok(target, base, real_roots):
                return False
    return all(_read_only_command(cmd, base, real_roots) for cmd in analysis.commands)


def is_read_only_command(command: str) -> bool:
    """:func:`read_only` on the text alone (no file system look-ups)."""
    return read_only(analyze(command))


# -- deny ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DenyMatch:
    """The deny rule a line matched (``rule``), or that it could not be told (``uncertain``)."""

    rule: Rule | None = None
    uncertain: str | None = None


def _subsequence(wanted: Sequence[str], words: Sequence[Word]) -> bool | None:
    """Whether ``wanted`` appears in order among ``words``; ``None``: cannot tell."""
    index = 0
    unknown = False
    for word in words:
        if index == len(wanted):
            break
        text = word.literal
        if text is None:
            unknown = True
        elif text == wanted[index]:
            index += 1
    if index == len(wanted):
        return True
    return None if unknown else False


class _DenyCheck:
    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = [r for r in rules if r.words]
        self.uncertain: str | None = None

    def doubt(self, why: str) -> None:
        self.uncertain = self.uncertain or why

    def line(self, analysis: Analysis, depth: int) -> Rule | None:
        if SYNTAX_ERROR in analysis.problems:
            self.doubt("the command cannot be parsed")
        for cmd in analysis.commands:
            hit = self.words(cmd.words, depth)
            if hit is not None:
                return hit
        return None

    def words(self, words: Sequence[Word], depth: int) -> Rule | None:
        if not words:
            return None
        name = words[0].literal
        if name is None:
            self.doubt(f"the command name {words[0].raw!r} is computed when it runs")
            return None
        program = os.path.basename(name)
        for rule in self.rules:
            assert rule.words is not None
            if program != rule.words[0]:
                continue
            found = _subsequence(rule.words[1:], words[1:])
            if found:
                return rule
            if found is None:
                self.doubt(f"the arguments of {program} are computed when it runs")
        if depth >= _MAX_NESTING:
            self.doubt("the command nests too deeply")
            return None
        if program in SHELLS:
            return self.shell(words, depth)
        if program == "eval":
            return self.script(words[1:], depth)
        if program in WRAPPERS:
            for start in range(1, len(words)):
                hit = self.words(words[start:], depth + 1)
                if hit is None and any(ch in (words[start].literal or "") for ch in " \t\n;|&"):
                    hit = self.script(words[start : start + 1], depth)  # env -S 'rm x', watch
                if hit is not None:
                    return hit
        return None

    def shell(self, words: Sequence[Word], depth: int) -> Rule | None:
        """``bash … -c SCRIPT …``: every word after the ``-c`` option may be the script
        (``bash -c -- 'rm x'``, ``bash -csh -c 'rm x'``), so each is read as one."""
        for index, word in enumerate(words[1:], 1):
            text = word.literal
            if text is None:
                self.doubt("the shell's arguments are computed when it runs")
                return None
            if text.startswith("-") and not text.startswith("--") and "c" in text:
                for candidate in words[index + 1 :]:
                    hit = self.script([candidate], depth)
                    if hit is not None:
                        return hit
                return None
        return None

    def script(self, words: Sequence[Word], depth: int) -> Rule | None:
        texts = [w.literal for w in words]
        if any(t is None for t in texts):
            self.doubt("the script it runs is computed when it runs")
            return None
        return self.line(analyze(" ".join(t or "" for t in texts)), depth + 1)


def denies(analysis: Analysis, rules: Sequence[Rule]) -> DenyMatch:
    """The first command deny rule the line matches, or why it cannot be told."""
    check = _DenyCheck(rules)
    if not check.rules:
        return DenyMatch()
    hit = check.line(analysis, 0)
    if hit is not None:
        return DenyMatch(rule=hit)
    return DenyMatch(uncertain=check.uncertain)


def suggested_rules(analysis: Analysis) -> list[str]:
    """``run_shell_command(PROGRAM)`` rules that would allow this line, or ``[]`` when no
    command rule can (it writes a file, assigns, or is not understood)."""
    if not plain_structure(analysis):
        return []
    names: list[str] = []
    for cmd in analysis.commands:
        name = cmd.name
        if name is None:
            return []
        if name not in names:
            names.append(name)
    return [f"run_shell_command({shlex.quote(name)})" for name in names]


__all__ = [
    "READ_ONLY_COMMANDS",
    "SHELLS",
    "WRAPPERS",
    "DenyMatch",
    "allows",
    "denies",
    "is_read_only_command",
    "plain_structure",
    "read_only",
    "suggested_rules",
]
