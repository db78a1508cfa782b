"""headwire.runtime.policy.rules: the rule grammar, and what cannot be enforced."""

from __future__ import annotations

import pytest

from headwire.runtime.policy.rules import RuleError, names_tool, parse_rule, split_rules


@pytest.mark.parametrize(
    ("text", "tool", "words"),
    [
        ("run_shell_command(git status)", "run_shell_command", ("git", "status")),
        ("Bash(rm:*)", "run_shell_command", ("rm",)),
        ("Bash(git commit:*)", "run_shell_command", ("git", "commit")),
        ("Shell(npm run test *)", "run_shell_command", ("npm", "run", "test")),
        ("Bash(*)", "run_shell_command", None),
        ("Bash", "run_shell_command", None),
        ("Task", "agent", None),
        ("Agent", "agent", None),
        ("LS", "list_directory", None),
        ("mcp__srv__*", "mcp__srv__*", None),
        ("Bash('a b' c)", "run_shell_command", ("a b", "c")),
    ],
)
def test_accepted(text: str, tool: str, words: tuple[str, ...] | None) -> None:
    rule = parse_rule(text)
    assert (rule.tool, rule.words) == (tool, words)


@pytest.mark.parametrize(
    "text",
    [
        "Read(./.env)",
        "WebFetch(domain:x)",
        "Bash(git * --force)",
        "Bash()",
        "Bash(rm",
        "x)",
        "(ls)",
        "Bash('x)",
    ],
)
def test_refused(text: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(text, "--exclude-tools")


def test_split_keeps_commas_inside_parentheses() -> None:
    assert split_rules(["Bash(git add a,b),read_file", " Task "]) == [
        "Bash(git add a,b)",
        "read_file",
        "Task",
    ]


def test_families_for_deny_rules() -> None:
    assert names_tool(parse_rule("Read"), "grep_search", families=True)
    assert not names_tool(parse_rule("Read"), "grep_search")
    assert names_tool(parse_rule("mcp__s"), "mcp__s__t")
