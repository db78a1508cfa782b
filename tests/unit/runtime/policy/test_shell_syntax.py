"""headwire.runtime.policy.shell_syntax: commands and redirections of a parsed line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.policy.shell_syntax import SYNTAX_ERROR, analyze


def words(line: str) -> list[list[str | None]]:
    return [[w.literal for w in c.words] for c in analyze(line).commands]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("echo hi", [["echo", "hi"]]),
        ('"git" st"at"us', [["git", "status"]]),
        ("r\\m -f x", [["rm", "-f", "x"]]),
        ("rm\\\ndir x", [["rmdir", "x"]]),
        ("echo >f x", [["echo", "x"]]),
        ("git >/dev/null push", [["git", "push"]]),
        ("echo $(rm x)", [["echo", None], ["rm", "x"]]),
        (
            "echo `rm x` <(rm y) $((1+$(rm z)))",
            [["echo", None, None, None], ["rm", "x"], ["rm", "y"], ["rm", "z"]],
        ),
        ("cat <<EOF\n$(rm q)\nEOF", [["cat"], ["rm", "q"]]),
        ("cat <<'EOF'\n$(rm q)\nEOF", [["cat"]]),
        ("(cd /; rm x) | cat", [["cd", "/"], ["rm", "x"], ["cat"]]),
        ("echo {a,b} * ~", [["echo", None, None, None]]),
        ("3>| f eval 1<&- rm", [["eval", "rm"]]),
    ],
)
def test_commands(line: str, expected: list[list[str | None]]) -> None:
    assert words(line) == expected


@pytest.mark.parametrize(
    ("line", "writes"),
    [
        ("echo owned >&3rdparty/../../OUTSIDE.txt", True),
        ("git status >&1pwned", True),
        ("git status >&1 pwned", False),
        ("git status 2>&1", False),
        ("echo x >/dev/null 2>&1", False),
        ("echo x >&-", False),
        ("echo x >| f", True),
        ("echo x &>> f", True),
        ('echo x >"$F"', True),
        ("cat < in.txt", False),
        ("cat <<< x", False),
    ],
)
def test_redirections(line: str, writes: bool) -> None:
    assert analyze(line).writes_file is writes


@pytest.mark.parametrize(
    "line",
    [
        "echo 'unterminated",
        "x=1 git status",
        "if true; then echo; fi",
        "f() { echo; }",
        "0<<<f rm x",
        "cat <<EOF\n`rm x`\nEOF",
        "echo x 3<>f",
    ],
)
def test_not_understood(line: str) -> None:
    assert not analyze(line).understood


@given(st.text(max_size=80))
def test_any_text_is_analyzed_without_raising(line: str) -> None:
    """Invariant: :func:`analyze` returns for any text; a syntax error is a problem, never an
    exception."""
    analysis = analyze(line)
    assert isinstance(analysis.problems, list)
    if "\0" in line:
        assert not analysis.understood


def test_syntax_error_marker() -> None:
    assert SYNTAX_ERROR in analyze("echo (").problems


def test_a_hash_after_a_line_continuation_is_not_a_comment() -> None:
    """Third long fuzz run: ``git status\\<newline>#x; rm y`` is ``git status#x; rm y`` to
    bash; the grammar reads a comment there, so the line is not understood."""
    assert not analyze("git status\\\n#x; rm y").understood
    assert analyze("echo a # comment; rm y").understood
    assert analyze("echo a\\\n # comment").understood


def test_a_newline_inside_one_command_means_two_commands() -> None:
    """Fourth long fuzz run: the grammar joined ``echo 0<newline>exec rm`` into one command
    (inside ``x || a | b | echo 0``); bash runs ``exec rm``.  Not understood."""
    line = "x || command |nohup rm-- '$x' | echo 0\nexec rm<in.txt"
    assert not analyze(line).understood
    assert analyze("echo x >f\nrm y").understood


CRASHER = """
import random, sys
from headwire.runtime.policy.shell_syntax import analyze

rng = random.Random(3)
for _ in range(30_000):
    chars = [
        chr(rng.randint(32, 126)) if rng.random() < 0.6 else chr(rng.randint(0x10000, 0x10FFFF))
        for _ in range(rng.randint(0, 80))
    ]
    analyze("".join(chars))
print("ok")
"""


def test_characters_beyond_the_bmp_never_reach_the_parser() -> None:
    """Finding: tree-sitter-bash's scanner corrupted memory on characters beyond U+FFFF, and
    the process died with SIGSEGV some thousands of lines later (this script, exit -11 before).
    Such a line is not parsed: it is not understood, so it is asked."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", CRASHER], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    analysis = analyze("echo \U0001f600")
    assert not analysis.understood
    assert "the command holds a character beyond U+FFFF" in analysis.problems
