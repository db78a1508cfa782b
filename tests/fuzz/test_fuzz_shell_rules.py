"""The shell permission rules against the real bash (:mod:`tests.fuzz.shell_lines`).

Generated command lines never make ``Bash(echo)`` / ``Bash(git status)`` admit a line that
writes a file or runs another program, never make the read-only shortcut admit a line that
writes, runs a non-read-only command or prints a file outside the workspace, and never let a
line past ``Bash(rm)`` (neither denied nor asked) that runs ``rm``.  Lines the rules admit are
run with ``bash -c`` in a sandbox with logging shims; the long run is
``benchmarks/fuzz_shell_rules.py``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.policy.shell_rules import allows, denies, read_only
from headwire.runtime.policy.shell_syntax import analyze
from tests.fuzz.common import fuzz_settings
from tests.fuzz.shell_lines import (
    ALLOW_RULES,
    DENY_RULES,
    Sandbox,
    check_allow,
    check_deny,
    check_read_only,
    gen_allow_line,
    gen_deny_line,
    gen_read_only_line,
)

SEEDS = st.integers(min_value=0, max_value=2**63)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    yield box
    box.close()


@fuzz_settings(300, shrink=False)
@given(seed=SEEDS)
def test_allow_rules_never_admit_a_write_or_another_program(sandbox: Sandbox, seed: int) -> None:
    line = gen_allow_line(random.Random(seed))
    assert check_allow(line, sandbox) is None


@fuzz_settings(300, shrink=False)
@given(seed=SEEDS)
def test_read_only_shortcut_stays_read_only_and_inside(sandbox: Sandbox, seed: int) -> None:
    line = gen_read_only_line(random.Random(seed), sandbox)
    assert check_read_only(line, sandbox) is None


@fuzz_settings(300, shrink=False)
@given(seed=SEEDS)
def test_deny_rule_lets_no_rm_through(sandbox: Sandbox, seed: int) -> None:
    line = gen_deny_line(random.Random(seed))
    assert check_deny(line, sandbox) is None


@fuzz_settings(500)
@given(
    line=st.text(alphabet=st.sampled_from(list("echo rm>&<|;$()`'\"\\\n#{}*=12 -/")), max_size=60)
)
def test_arbitrary_text_never_crashes_and_writes_are_never_admitted(line: str) -> None:
    """Any text: the analysis returns; a line it says writes a file is never allowed."""
    analysis = analyze(line)
    if analysis.writes_file or not analysis.understood:
        assert not allows(analysis, ALLOW_RULES)
        assert not read_only(analysis)
    match = denies(analysis, DENY_RULES)
    assert match.rule is None or match.uncertain is None
