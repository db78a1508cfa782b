"""Claude Code's variadic tool flags (:mod:`headwire.cli.flags.claude_argv`) and the subcommand
look-alikes (:func:`headwire.cli.flags.parsing.subcommand_slip`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from headwire.cli.flags.claude_argv import VARIADIC, expand_variadic, looks_like_rules
from headwire.cli.flags.parsing import PEER_SUBCOMMANDS, SUBCOMMANDS, subcommand_slip

words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(st.lists(words.filter(lambda w: w.partition("=")[0] not in VARIADIC), max_size=8))
def test_other_arguments_are_left_as_they_are(argv: list[str]) -> None:
    assert expand_variadic(argv) == argv


@given(st.lists(words, max_size=8))
def test_nothing_after_double_dash_changes(tail: list[str]) -> None:
    argv = ["--allowedTools", "Read", "--", "--tools", *tail]
    assert expand_variadic(argv) == ["--allowedTools", "Read", "--", "--tools", *tail]


def test_lists_gather_until_a_prompt_or_a_flag() -> None:
    assert expand_variadic(["--allowedTools", "Bash(git *)", "Edit", "-p", "hi"]) == [
        "--allowedTools",
        "Bash(git *),Edit",
        "-p",
        "hi",
    ]
    assert expand_variadic(["--disallowedTools", "Bash Write", "Read", "fix it", "now"]) == [
        "--disallowedTools",
        "Bash,Write,Read",
        "fix it",
        "now",
    ]
    assert expand_variadic(["--tools", "", "hello"]) == ["--tools", "", "hello"]
    assert expand_variadic(["--tools=Read Grep", "Edit"]) == ["--tools=Read,Grep", "Edit"]
    assert expand_variadic(["--allowedTools", "-p"]) == ["--allowedTools", "-p"]
    assert not looks_like_rules("fix the bug") and looks_like_rules("mcp__s__t, Bash(ls -la)")


def test_subcommands_and_plain_prompts() -> None:
    for name in SUBCOMMANDS:
        assert subcommand_slip(name[0] + name[2:] if len(name) > 4 else name + "s")
    for name in PEER_SUBCOMMANDS:
        assert "did you mean" in (subcommand_slip(name) or "")
    for prompt in ("hello", "found", "lessons", "fix", "explain", "test", "summarize"):
        assert subcommand_slip(prompt) is None


@given(st.text(max_size=40))
def test_slip_is_none_or_one_line(word: str) -> None:
    found = subcommand_slip(word)
    assert found is None or ("\n" not in found and "did you mean" in found)
