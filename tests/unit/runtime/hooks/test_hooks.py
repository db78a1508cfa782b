"""The pure half of hooks: matchers, answers, verdicts (properties of the docstrings)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.hooks.decide import (
    HookAnswer,
    combine,
    hook_table,
    interpret,
    matches,
    selected,
    tool_names,
)
from headwire.runtime.hooks.runner import run_command

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20)


@given(names, st.sampled_from(["", "*", ".*"]))
def test_match_all_matchers_match_everything(target: str, matcher: str) -> None:
    assert matches(matcher, target)


@given(names, names)
def test_an_exact_name_matches_and_a_list_matches_when_an_entry_does(a: str, b: str) -> None:
    assert matches(a, a)
    assert matches(f"{b} | {a}", a)


def test_claude_names_are_aliases_compared_exactly() -> None:
    shell = tool_names("run_shell_command")
    assert {"Bash", "Shell", "run_shell_command"} <= shell
    assert matches("Bash", "run_shell_command", shell)
    assert matches("Write|Bash", "run_shell_command", shell)
    assert matches("^run_shell", "run_shell_command", shell)
    assert not matches("^Bash$", "run_shell_command", shell)  # a regex sees the id only
    assert not matches("read_file", "run_shell_command", shell)
    assert not matches("(unclosed", "run_shell_command", shell)  # does not compile: no match
    assert not matches("|", "run_shell_command", shell)


@given(st.lists(st.sampled_from(["allow", "deny", "ask", None]), max_size=6))
def test_a_deny_wins_over_ask_and_ask_over_allow(decisions: list[str | None]) -> None:
    answers = [HookAnswer("success", decision=d) for d in decisions]
    verdict = combine(answers)
    if "deny" in decisions:
        assert verdict.blocked
    elif "ask" in decisions:
        assert verdict.decision == "ask"
    elif "allow" in decisions:
        assert verdict.decision == "allow"
    else:
        assert verdict.decision is None
    assert verdict.ran == len(answers)


@given(st.integers(min_value=-5, max_value=300).filter(lambda c: c not in (0, 2)))
def test_other_exit_codes_never_block(code: int) -> None:
    answer = interpret("PreToolUse", code, '{"decision": "block"}', "err")
    assert answer.outcome == "error" and not answer.blocked


def test_interpret_exit_codes_and_output() -> None:
    assert interpret("PreToolUse", 2, "ignored", "why\n").reason == "why"
    assert interpret("PreToolUse", 2, "", "").blocked
    assert interpret("PreToolUse", None, "", "").outcome == "timeout"
    assert interpret("SessionStart", 0, "ctx\n", "").context == "ctx"
    assert interpret("PreToolUse", 0, "note", "").message == "note"
    assert interpret("PreToolUse", 0, "{broken", "").outcome == "error"
    pre = {
        "hookSpecificOutput": {
            "permissionDecision": "deny",
            "permissionDecisionReason": "r",
            "updatedInput": {"command": "x"},
        }
    }
    answer = interpret("PreToolUse", 0, json.dumps(pre), "")
    assert answer.blocked and answer.reason == "r" and answer.updated_input == {"command": "x"}
    stop = interpret("Stop", 0, json.dumps({"continue": False, "stopReason": "s"}), "")
    assert stop.blocked and stop.stop and stop.reason == "s"


def test_hook_table_and_selection() -> None:
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "timeout": 5}]},
            {"matcher": "^edit$", "hooks": [{"type": "command", "command": "b", "timeout": 5000}]},
        ],
        "Stop": [{"matcher": "ignored", "hooks": [{"type": "command", "command": "c"}]}],
    }
    table = hook_table([("user", hooks)])
    assert [s.timeout_s for s in table["PreToolUse"]] == [5.0, 5.0]  # 5000 reads as ms
    assert [
        s.command for s in selected(table["PreToolUse"], "PreToolUse", "run_shell_command")
    ] == ["a"]
    assert len(selected(table["Stop"], "Stop", None)) == 1


def test_run_command_kills_the_whole_group_at_the_timeout(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    command = f"(sleep 3; touch {marker}) & sleep 30"
    started = time.monotonic()
    code, _, err = asyncio.run(
        run_command(command, b"{}", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout_s=0.5)
    )
    assert code is None and "timed out" in err
    assert time.monotonic() - started < 10
    time.sleep(3.5)
    assert not marker.exists()  # the background child died with its group


def test_run_command_is_cancellable(tmp_path: Path) -> None:
    async def main() -> float:
        task = asyncio.ensure_future(
            run_command("sleep 30", b"", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout_s=60)
        )
        await asyncio.sleep(0.3)
        started = time.monotonic()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(main()) < 1.0
