"""A shell command line as bash would run it: its simple commands and its redirections.

The line is parsed with tree-sitter's bash grammar (the ``tree-sitter`` and
``tree-sitter-bash`` wheels).  :func:`analyze` walks the tree and returns every simple command
the line can run -- in lists, pipelines, subshells, ``{ ...; }`` groups, ``!``, command and
process substitutions, here-document bodies, arithmetic -- each as its words after quote
removal, and every redirection with whether it writes to a file.

What the walk does not understand is listed in :attr:`Analysis.problems`: a syntax error, a
variable assignment, a compound command (``if``, ``for``, ``while``, ``case``, functions),
declarations, ``[[ ... ]]``.  Permission rules treat such a line as one they cannot vouch for:
it is asked, never allowed by a rule.  A word that bash would expand (``$x``, ``$(...)``,
``$'...'``) has no literal text (``None``); a word with unquoted glob, brace or tilde
characters is marked ``pattern``.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

from headwire.records import dataclass, field

WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
"""Redirection operators that open their target for writing."""
DUP_OPERATORS = frozenset({">&", "<&"})
"""``N>&M`` / ``N<&M``: duplicate a descriptor (``>&WORD`` with a non-number writes a file)."""
CLOSE_OPERATORS = frozenset({">&-", "<&-"})
HARMLESS_TARGETS = frozenset({"/dev/null"})
"""Write targets that are not files: output sent there is discarded."""

_STRUCTURE = frozenset(
    {"program", "list", "pipeline", "subshell", "compound_statement", "negated_command"}
)
_WORDS = frozenset(
    {
        "word",
        "number",
        "string",
        "raw_string",
        "concatenation",
        "ansi_c_string",
        "translated_string",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
    }
)
SYNTAX_ERROR = "the command cannot be parsed reliably"
"""The problem reported when the line does not parse, or parses into something bash would not
run that way (the grammar and bash disagree)."""
RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until"}
    | {"for", "in", "select", "function", "{", "}", "[[", "]]"}
)
"""Reserved words: as a command name they mean the grammar and bash read the line apart."""
_COMMENT_AFTER = frozenset(b" \t\n;&|()")
"""Bytes after which a ``#`` starts a word (and so a comment)."""
_BLANK = re.compile(r"(?<!\\)[ \t\n]")
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_PATTERN_CHARS = frozenset("*?[]{}~")
_DOUBLE_QUOTE_ESCAPES = frozenset('$`"\\\n')


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: ``text`` after quote removal (``None`` when bash would expand it) and
    ``pattern`` when unquoted glob, brace or tilde characters may turn it into other words."""

    text: str | None
    raw: str
    pattern: bool = False

    @property
    def literal(self) -> str | None:
        """The word's text when it stands for exactly itself, else ``None``."""
        return None if self.pattern else self.text


@dataclass(slots=True)
class Command:
    """A simple command: its words (name first) and whether it assigns variables."""

    words: list[Word] = field(default_factory=list)
    assigns: bool = False

    @property
    def name(self) -> str | None:
        """The command name's literal text (``None``: computed, or no name at all)."""
        return self.words[0].literal if self.words else None


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection: its operator, target word (``None`` for a close) and whether it
    writes to a file (a write to a non-literal target counts as one)."""

    operator: str
    target: Word | None
    writes: bool


@dataclass(slots=True)
class Analysis:
    """Everything a command line can run and write, as far as the parser can tell."""

    commands: list[Command] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def understood(self) -> bool:
        """Whether the line is made only of constructs the walk models."""
        return not self.problems

    @property
    def writes_file(self) -> bool:
        """Whether some redirection writes to a file (or to a target only known at run time)."""
        return any(r.writes for r in self.redirects)


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
"""Characters tree-sitter-bash's scanner cannot take."""


@functools.cache
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def analyze(command: str) -> Analysis:
    """Parse ``command`` and collect its commands, redirections and problems."""
    out = Analysis()
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError:
        out.problems.append("the command is not valid text")
        return out
    if b"\0" in source:
        out.problems.append("the command holds a NUL byte")
        return out
    if _ASTRAL.search(command) is not None:
        # tree-sitter-bash's scanner corrupts memory on characters beyond U+FFFF (a segfault
        # some thousands of lines later, found by the property test): such a line is not
        # parsed, so it is not understood and is asked
        out.problems.append("the command holds a character beyond U+FFFF")
        return out
    root = _parser().parse(source).root_node
    if root.has_error:
        out.problems.append(SYNTAX_ERROR)
    _Walker(out, source).statement(root)
    return out


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8")


def _unquoted(raw: str) -> tuple[str | None, bool]:
    """Quote removal for an unquoted word: backslash escapes; ``None`` if it expands."""
    out: list[str] = []
    pattern = False
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\":
            if i + 1 < len(raw) and raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if ch in "$`'\"":
            return None, pattern
        pattern = pattern or ch in _PATTERN_CHARS
        out.append(ch)
        i += 1
    return "".join(out), pattern


def _double_quoted(inner: str) -> str | None:
    """Quote removal inside ``"..."`` (no expansions left: the caller checked)."""
    out: list[str] = []
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch == "\\" and i + 1 < len(inner) and inner[i + 1] in _DOUBLE_QUOTE_ESCAPES:
            if inner[i + 1] != "\n":
                out.append(inner[i + 1])
            i += 2
            continue
        if ch in "$`":
            return None
        out.append(ch)
        i += 1
    return "".join(out)


class _Walker:
    """Fills an :class:`Analysis` from a tree-sitter tree."""

    def __init__(self, out: Analysis, source: bytes) -> None:
        self.out = out
        self.source = source

    def problem(self, what: str) -> None:
        if what not in self.out.problems:
            self.out.problems.append(what)

    # -- statements ---------------------------------------------------------------------------

    def statement(self, node: Any) -> Command | None:
        kind = node.type
        if node.is_missing or kind == "ERROR":
            self.problem(SYNTAX_ERROR)
            self.children(node)
            return None
        if kind == "comment":
            if not self.comment_starts_a_word(node.start_byte):
                self.problem(SYNTAX_ERROR)  # ``status\<newline>#x; rm y``: no comment in bash
            return None
        if not node.is_named:
            return None
        if kind in _STRUCTURE:
            last = None
            for child in node.children:
                last = self.statement(child) or last
            # ``a | b >f x``: the grammar hangs the redirection on the pipeline; bash gives it
            # (and ``x``) to the last command
            return last if kind == "pipeline" else None
        if kind == "command":
            return self.command(node)
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            cmd = self.statement(body) if body is not None else None
            for index, child in enumerate(node.children):
                if node.field_name_for_child(index) == "redirect":
                    self.redirect(child, cmd)
            return None
        if kind in _WORDS:
            self.word(node)
            return None
        if kind in ("variable_assignment", "variable_assignments"):
            self.problem("it assigns a variable")
            self.substitutions(node)
            return None
        self.problem(f"it uses {kind.replace('_', ' ')}")
        self.children(node)
        return None

    def comment_starts_a_word(self, at: int) -> bool:
        """Whether bash reads a ``#`` at byte ``at`` as a comment: at the start of a word,
        after any line continuations (backslash-newline) are removed."""
        i = at
        while i >= 2 and self.source[i - 2 : i] == b"\\\n":
            i -= 2
        return i == 0 or self.source[i - 1] in _COMMENT_AFTER

    def children(self, node: Any) -> None:
        for child in node.children:
            self.statement(child)

    def one_line(self, node: Any) -> None:
        """A newline between the parts of one command means the grammar joined two commands
        (``echo 0<newline>exec rm``); bash runs them apart."""
        children = node.children
        for left, right in itertools.pairwise(children):
            gap = self.source[left.end_byte : right.start_byte].replace(b"\\\n", b"")
            if b"\n" in gap:
                self.problem(SYNTAX_ERROR)
                return

    def command(self, node: Any) -> Command:
        cmd = Command()
        self.out.commands.append(cmd)
        self.one_line(node)
        pieces: list[Any] = []
        for index, child in enumerate(node.children):
            name = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                cmd.assigns = True
                self.problem("it assigns a variable")
                self.substitutions(child)
            elif name == "redirect":
                self.redirect(child, cmd)
            elif name == "name":
                pieces.extend(child.children)
            elif name == "argument" or child.is_named:
                pieces.append(child)
        cmd.words.extend(self.words(pieces))
        if cmd.words and cmd.words[0].text in RESERVED:
            self.problem(SYNTAX_ERROR)
        return cmd

    def words(self, nodes: list[Any]) -> list[Word]:
        """Words of adjacent nodes: nodes with no blank between them are one bash word."""
        out: list[Word] = []
        run: list[Any] = []
        for node in nodes:
            if run and not self.adjacent(run[-1], node):
                out.append(self.joined(run))
                run = []
            run.append(node)
        if run:
            out.append(self.joined(run))
        return out

    def adjacent(self, left: Any, right: Any) -> bool:
        """No blank between the nodes: only line continuations (backslash-newline) or nothing."""
        gap = self.source[left.end_byte : right.start_byte]
        return not gap.replace(b"\\\n", b"")

    def joined(self, nodes: list[Any]) -> Word:
        parts = [self.word(n) for n in nodes]
        if len(parts) == 1:
            return parts[0]
        raw = "".join(p.raw for p in parts)
        if any(p.text is None for p in parts):
            return Word(None, raw, any(p.pattern for p in parts))
        return Word("".join(p.text or "" for p in parts), raw, any(p.pattern for p in parts))

    # -- words --------------------------------------------------------------------------------

    def word(self, node: Any) -> Word:
        """The word's literal value; substitutions inside it are walked as statements."""
        kind = node.type
        raw = _text(node)
        if node.is_missing or kind == "ERROR":
            self.problem(SYNTAX_ERROR)
            self.substitutions(node)
            return Word(None, raw)
        if kind == "word":
            text, pattern = _unquoted(raw)
            if _BLANK.search(raw.replace("\\\\", "").replace("\\\n", "")):
                self.problem(SYNTAX_ERROR)  # a blank inside one word: the grammar misread it
            return Word(text, raw, pattern)
        if kind == "number":
            return Word(raw if raw.isdigit() else None, raw)
        if kind == "raw_string":
            return Word(raw[1:-1], raw)
        if kind == "string":
            self.substitutions(node)
            plain = all(c.type == "string_content" for c in node.children if c.is_named)
            return Word(_double_quoted(raw[1:-1]) if plain else None, raw)
        if kind == "concatenation":
            return self.joined(list(node.children))
        self.substitutions(node)
        return Word(None, raw, kind == "brace_expression")

    def substitutions(self, node: Any) -> None:
        """Walk the commands of ``node`` when it is a substitution, else of every
        substitution inside it."""
        if node.type in _SUBSTITUTIONS:
            self.children(node)
        elif node.type == "ERROR" or node.is_missing:
            self.problem(SYNTAX_ERROR)
            self.children(node)
        else:
            for child in node.children:
                self.substitutions(child)

    # -- redirections -------------------------------------------------------------------------

    def redirect(self, node: Any, cmd: Command | None) -> None:
        kind = node.type
        before = self.source[node.start_byte - 1 : node.start_byte] if node.start_byte else b""
        descriptor = node.child_by_field_name("descriptor")
        if descriptor is None and (before.isdigit() or before == b"}"):
            # ``0<<<f cmd`` / ``0>> f cmd``: the grammar reads the descriptor as a command
            # name; bash does not.  The line's meaning is not what the tree says.
            self.problem(SYNTAX_ERROR)
        if kind == "file_redirect":
            self.file_redirect(node, cmd)
        elif kind == "herestring_redirect":
            self.substitutions(node)
        elif kind == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            quoted = start is not None and any(q in _text(start) for q in "'\"\\")
            for child in node.children:
                if child.type in ("heredoc_start", "heredoc_end", "heredoc_content"):
                    continue
                if child.type == "heredoc_body":
                    self.substitutions(child)
                    if b"`" in bytes(child.text) and not quoted:
                        self.problem(SYNTAX_ERROR)  # the grammar skips `...` in a body
                elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                    self.redirect(child, cmd)
                else:
                    self.statement(child)
        else:
            self.problem(f"it uses {kind.replace('_', ' ')}")
            self.children(node)

    def file_redirect(self, node: Any, cmd: Command | None) -> None:
        self.one_line(node)
        operator = ""
        targets: list[Any] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if field_name == "destination":
                targets.append(child)
            elif field_name == "descriptor":
                if not _text(child).isdigit():
                    self.problem("it redirects a named descriptor")
            elif not child.is_named:
                operator += child.type
            else:
                self.problem(f"it uses {child.type.replace('_', ' ')} in a redirection")
        words = self.words(targets)
        if operator in CLOSE_OPERATORS:
            words.insert(0, Word(None, ""))  # ``>&-`` takes no target: the words are arguments
        target = words[0] if words else None
        if cmd is not None:
            cmd.words.extend(words[1:])  # ``cmd >f x`` passes ``x`` to cmd
        elif len(words) > 1:  # words the grammar could not place: bash may run them
            self.problem(SYNTAX_ERROR)
            self.out.commands.append(Command(words[1:]))
        if operator in CLOSE_OPERATORS:
            target = None
        self.out.redirects.append(Redirect(operator, target, self._writes(operator, target)))

    def _writes(self, operator: str, target: Word | None) -> bool:
        if operator in CLOSE_OPERATORS:
            return False
        if target is None:
            self.problem(f"the redirection {operator!r} has no target")
            return True
        if operator in DUP_OPERATORS:
            if target.raw.isdigit():
                return False
            if operator == "<&":
                self.problem("it duplicates a descriptor from a word")
                return True
            operator = "&>"  # ``>&WORD``: stdout and stderr to the file WORD
        if operator in WRITE_OPERATORS:
            return target.literal not in HARMLESS_TARGETS
        if operator in ("<", "<<", "<<-", "<<<"):
            return False
        self.problem(f"it uses the redirection {operator!r}")
        return True


__all__ = ["Analysis", "Command", "Redirect", "Word", "analyze"]
