"""headwire.runtime.policy.live: the live policy, its views, the order of decisions and hints."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.policy.live import MODE_RANK, Policy, stricter
from headwire.runtime.tools.edit import EditTool
from headwire.runtime.tools.read_file import ReadFileTool
from headwire.runtime.tools.shell import ShellTool

MODES = st.sampled_from(sorted(MODE_RANK))
SHELL = ShellTool()


@given(MODES, MODES)
def test_stricter_is_never_looser(a: str, b: str) -> None:
    """Invariant: ``stricter(a, b)`` ranks at or below both."""
    s = stricter(a, b)  # type: ignore[arg-type]
    assert MODE_RANK[s] <= MODE_RANK[a] and MODE_RANK[s] <= MODE_RANK[b]  # type: ignore[index]


@given(MODES, MODES, MODES)
def test_a_narrowed_view_follows_the_session_and_never_loosens(
    start: str, cap: str, later: str
) -> None:
    """Invariant: a subagent's view reads the live mode, capped by its definition."""
    policy = Policy(start)  # type: ignore[arg-type]
    view = policy.narrowed(cap)  # type: ignore[arg-type]
    policy.mode = later  # type: ignore[assignment]
    assert view.mode == stricter(later, cap)  # type: ignore[arg-type]
    assert MODE_RANK[view.mode] <= MODE_RANK[policy.mode]


def test_deny_beats_yolo_and_uncertain_lines_are_asked() -> None:
    policy = Policy.from_flags("yolo", [], ["Bash(rm)"])
    assert policy.decide(SHELL, {"command": "rm -f x"}).verdict == "deny"
    assert policy.decide(SHELL, {"command": "$X -f x"}).verdict == "ask"
    assert policy.decide(SHELL, {"command": "ls"}).verdict == "allow"
    policy.mode = "plan"
    assert policy.decide(SHELL, {"command": "$X -f x"}).verdict == "deny"


def test_allow_rules_and_read_only_shortcut(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "out").symlink_to("/etc/hostname")
    policy = Policy.from_flags("default", ["Bash(git status)"], [], workspace=[tmp_path])
    decide = lambda c: policy.decide(SHELL, {"command": c}).verdict  # noqa: E731
    assert decide("git status --short | git status") == "allow"
    assert decide("git status | wc -l") == "ask"  # a rule or the shortcut, not a mix
    assert decide("git status >&1pwned") == "ask"
    assert decide("cat a.txt") == "allow"
    assert decide("cat out") == "ask"  # a link out of the workspace
    assert decide("du --files0-from=/etc/hostname") == "ask"
    assert policy.decide(SHELL, {"command": "cat a.txt", "is_background": True}).verdict == "ask"


def test_whole_tool_rules_and_hints() -> None:
    policy = Policy.from_flags("default", ["read_file"], ["Edit"])
    assert policy.decide(EditTool(), {"file_path": "/x"}).verdict == "deny"
    assert policy.excludes("write_file")  # the edit family
    assert policy.decide(ReadFileTool(), {"file_path": "/x"}).verdict == "allow"
    ruling = Policy("default").decide(SHELL, {"command": "make test"})
    assert ruling.verdict == "ask" and "--allowed-tools 'run_shell_command(make)'" in (
        ruling.message or ""
    )
    ruling = Policy("default").decide(SHELL, {"command": "echo x > f"})
    assert "--approval-mode yolo" in (ruling.message or "")
    assert "--allowed-tools" not in (ruling.message or "").split("; use")[-1]


def test_updated_input_is_checked() -> None:
    policy = Policy.from_flags("default", [], ["Bash(rm)"])
    assert policy.check_updated(SHELL, {"command": "ls"}) is None
    bad = policy.check_updated(SHELL, {"command": 5})
    assert bad is not None and bad.error_type == "invalid_tool_params"
    denied = policy.check_updated(SHELL, {"command": "rm x"})
    assert denied is not None and denied.error_type == "execution_denied"


def test_deny_sees_through_wrappers_shells_and_spellings() -> None:
    policy = Policy.from_flags("yolo", [], ["Bash(rm)", "Bash(git push)"])
    for command in (
        "/bin/rm x",
        "r''m x",
        "sudo -n rm x",
        "busybox rm x",
        "env -S 'rm -f v'",
        "watch 'rm x'",
        "find . -exec rm {} +",
        "bash -lc 'ls; rm x'",
        "eval 'rm x'",
        "! ! time rm x",
        "echo `rm x`",
        "git -C . push origin",
        "timeout 5 git push",
    ):
        assert policy.decide(SHELL, {"command": command}).verdict == "deny", command
    for command in ("$CMD x", "{rm,x}", 'bash -c "$S"', "$'\\x72m' x", "r? x"):
        assert policy.decide(SHELL, {"command": command}).verdict == "ask", command
    for command in ("git status", "echo rm", "rmdir x", "git log --grep push"):
        expected = "deny" if "push" in command else "allow"
        assert policy.decide(SHELL, {"command": command}).verdict == expected, command


def test_long_fuzz_findings_are_denied_or_asked() -> None:
    """Lines the long runs of benchmarks/fuzz_shell_rules.py let through.  First run: a
    redirection the grammar hangs on a pipeline (its words belong to the last command), a word
    the grammar starts with newlines (bash runs ``rm`` first).  Second run: ``bash -c`` whose
    script is not the word right after ``-c``."""
    policy = Policy.from_flags("yolo", [], ["Bash(rm:*)"])
    for command in (
        "command status x=1 |& command <in.txt -- $(echo rm)>&2 status",
        "X=1 timeout 5 rm\n\n\\echo 2<&/dev/null owned",
        'bash -c -- "rm" x',  # second run: the script after '--'
        "bash -csh -c \"rm y\" 'rm x'",
    ):
        assert policy.decide(SHELL, {"command": command}).verdict != "allow", command
