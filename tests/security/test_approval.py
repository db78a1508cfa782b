"""Approval modes hold on every path a tool call can take: the main agent, a subagent (the
``agent`` tool) and MCP servers.

With nobody to ask (a plain headless run), a call that needs approval is denied: the wire shows
an ``is_error`` tool result, the final ``result`` lists it in ``permission_denials``, and the
call has no effect.  ``default`` denies writes, edits, shell commands and untrusted MCP tools;
``plan`` also denies them (and trusted MCP tools that are not read-only); ``auto-edit`` allows
writes and edits only; ``yolo`` allows everything.  ``--allowed-tools`` lets a named tool (or
one shell command prefix) through, and nothing more.

Each CLI run batches many calls (one scripted turn may hold several), so the suite stays fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import Proc, run_cli, write_script

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
MODES = ("default", "plan", "auto-edit", "yolo")

# Which of the calls of :func:`_calls` run, by mode: write, edit, shell, untrusted MCP tool,
# read, trusted MCP tool (``trust: true`` skips the question, but plan mode runs only trusted
# read-only tools).
ALLOWED: dict[str, list[bool]] = {
    "default": [False, False, False, False, True, True],
    "plan": [False, False, False, False, True, False],
    "auto-edit": [True, True, False, False, True, True],
    "yolo": [True, True, True, True, True, True],
}


def _calls(proj: Path, tag: str, *, mcp: bool = True) -> list[dict[str, Any]]:
    """One call of each kind; each leaves a trace (named with ``tag``) in ``proj`` if it runs."""
    (proj / f"target-{tag}.txt").write_text("before\n")
    calls = [
        {
            "name": "write_file",
            "args": {"file_path": str(proj / f"written-{tag}.txt"), "content": "w"},
        },
        {  # edits the file just written: the session has seen it (read before write)
            "name": "edit",
            "args": {
                "file_path": str(proj / f"written-{tag}.txt"),
                "old_string": "w",
                "new_string": "after\n",
            },
        },
        {"name": "run_shell_command", "args": {"command": f"touch shell-ran-{tag}"}},
        {"name": "mcp__bigout__echo", "args": {"text": "mcp-ran"}},
        {"name": "read_file", "args": {"file_path": str(proj / f"target-{tag}.txt")}},
        {"name": "mcp__trusted__echo", "args": {"text": "trusted-ran"}},
    ]
    return calls if mcp else calls[:3]


def _effects(proj: Path, tag: str) -> list[bool]:
    """Whether the write, the edit and the shell command of ``tag`` happened."""
    return [
        (proj / f"written-{tag}.txt").exists(),
        (proj / f"written-{tag}.txt").exists()
        and (proj / f"written-{tag}.txt").read_text() == "after\n",
        (proj / f"shell-ran-{tag}").exists(),
    ]


def _mcp() -> str:
    """Two instances of the fake server: ``bigout`` (untrusted) and ``trusted``."""
    servers = {
        name: {"command": sys.executable, "args": [str(SERVER)], "trust": name == "trusted"}
        for name in ("bigout", "trusted")
    }
    return json.dumps({"mcpServers": servers})


def _results(messages: list[dict[str, Any]]) -> list[tuple[str | None, dict[str, Any]]]:
    """``(parent_tool_use_id, tool_result block)`` in wire order."""
    return [
        (m.get("parent_tool_use_id"), b)
        for m in messages
        if m.get("type") == "user"
        for b in m["message"]["content"]
        if b.get("type") == "tool_result"
    ]


def _run(tmp: Path, turns: list[dict[str, Any]], *flags: str) -> list[dict[str, Any]]:
    """Run the script with ``-o json``; the messages."""
    script = write_script(tmp / "script.jsonl", turns)
    proc: Proc = run_cli(["--script", str(script), "-o", "json", *flags, "-p", "go"], tmp)
    assert proc.returncode == 0, proc.stderr
    messages: list[dict[str, Any]] = json.loads(proc.stdout)
    return messages


def _check_blocks(
    blocks: list[dict[str, Any]], calls: list[dict[str, Any]], allowed: list[bool]
) -> list[str]:
    """Each block is an error exactly when its call is not allowed; the denied names."""
    assert len(blocks) == len(calls)
    for call, allow, block in zip(calls, allowed, blocks, strict=True):
        assert block["is_error"] is (not allow), (call["name"], block)
    return [c["name"] for c, a in zip(calls, allowed, strict=True) if not a]


@pytest.mark.parametrize("mode", MODES)
def test_main_agent_and_subagent_calls_follow_the_mode(tmp_path: Path, mode: str) -> None:
    """The main agent makes one call of each kind, then delegates to a subagent that makes the
    same calls: both meet the same rules, and the subagent's refusals reach the final
    ``permission_denials`` after the main agent's."""
    proj = tmp_path / "proj"
    proj.mkdir()
    main, sub = _calls(proj, "main"), _calls(proj, "sub")
    agent = {"name": "agent", "args": {"description": "d", "prompt": "p"}}
    messages = _run(
        tmp_path,
        [{"tools": [*main, agent]}, {"tools": sub}, {"text": "child done"}, {"text": "done"}],
        "--approval-mode",
        mode,
        "--mcp-config",
        _mcp(),
    )
    results = _results(messages)
    top = [b for p, b in results if p is None]
    agent_block = top[-1]
    assert agent_block["is_error"] is False and agent_block["content"] == "child done"
    child = [b for p, b in results if p == agent_block["tool_use_id"]]
    denied = _check_blocks(top[:-1], main, ALLOWED[mode]) + _check_blocks(child, sub, ALLOWED[mode])
    denials = messages[-1]["permission_denials"]
    assert [d["tool_name"] for d in denials] == denied
    assert all(d["tool_input"] and d["tool_use_id"] for d in denials)
    assert _effects(proj, "main") == ALLOWED[mode][:3]
    assert _effects(proj, "sub") == ALLOWED[mode][:3]


def test_compat_flags_map_to_the_same_rules(tmp_path: Path) -> None:
    """``--permission-mode plan`` (Claude Code) denies like ``--approval-mode plan``, an
    explicit ``--approval-mode`` wins over it, ``-y`` is ``yolo``."""
    proj = tmp_path / "proj"
    proj.mkdir()
    for tag, flags, allowed in (
        ("plan", ["--permission-mode", "plan"], [False] * 3),
        (
            "both",
            ["--permission-mode", "bypassPermissions", "--approval-mode", "plan"],
            [False] * 3,
        ),
        ("edits", ["--permission-mode", "acceptEdits"], [True, True, False]),
        ("yolo", ["-y"], [True] * 3),
    ):
        calls = _calls(proj, tag, mcp=False)
        messages = _run(tmp_path, [{"tools": calls}, {"text": "done"}], *flags)
        denied = _check_blocks([b for _, b in _results(messages)], calls, allowed)
        assert [d["tool_name"] for d in messages[-1]["permission_denials"]] == denied, tag
        assert _effects(proj, tag) == allowed, tag


SHELL_CASES: list[tuple[str, bool]] = [
    ("touch ok-1", True),
    ("touch -- ok-2", True),
    ("touch ok-3 && touch ok-4", True),
    ("touch ok-5 2>&1", True),
    ("touch ok-6 >/dev/null 2>&1", True),
    ("touch ok-7 && mkdir pwned-and", False),
    ("touch ok-8; mkdir pwned-semicolon", False),
    ("touch ok-9 | tee pwned-pipe", False),
    ("touch ok-10 || mkdir pwned-or", False),
    ("touch ok-11 & mkdir pwned-background", False),
    ("touch ok-12\nmkdir pwned-newline", False),
    ("touch $(echo pwned-substitution)", False),
    ("touch `echo pwned-backtick`", False),
    ("touch <(mkdir pwned-process-substitution)", False),
    ("touch ok-13 > pwned-redirect", False),
    ("touch ok-14 2>pwned-stderr", False),
    ("touch ok-15 >/dev/null/../pwned-devnull", False),
    ("touch ok-16 >>pwned-append", False),
    ("touchy pwned-prefix", False),
]


def test_allowed_shell_prefix_lets_nothing_else_through(tmp_path: Path) -> None:
    """``--allowed-tools 'run_shell_command(touch)'`` (default mode) allows ``touch ...`` and
    chains of it, not a chain with another command, a substitution or a redirection that
    happens to start with it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    calls = [{"name": "run_shell_command", "args": {"command": c}} for c, _ in SHELL_CASES]
    messages = _run(
        tmp_path,
        [{"tools": calls}, {"text": "done"}],
        "--allowed-tools",
        "run_shell_command(touch)",
    )
    blocks = [b for _, b in _results(messages)]
    assert len(blocks) == len(SHELL_CASES)
    denied_ids = {d["tool_use_id"] for d in messages[-1]["permission_denials"]}
    for (command, runs), block in zip(SHELL_CASES, blocks, strict=True):
        assert (block["tool_use_id"] not in denied_ids) is runs, command
        assert block["is_error"] is (not runs), (command, block)
    assert not [p.name for p in proj.iterdir() if p.name.startswith("pwned")]
    assert (proj / "ok-1").exists() and (proj / "ok-4").exists() and (proj / "ok-6").exists()


def test_allowed_tool_names_are_exact(tmp_path: Path) -> None:
    """``--allowed-tools write_file`` admits write_file only (not edit, not the shell)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    calls = _calls(proj, "names", mcp=False)
    messages = _run(tmp_path, [{"tools": calls}, {"text": "done"}], "--allowed-tools", "write_file")
    denied = _check_blocks([b for _, b in _results(messages)], calls, [True, False, False])
    assert [d["tool_name"] for d in messages[-1]["permission_denials"]] == denied
    assert _effects(proj, "names") == [True, False, False]


def test_parsed_commands_unit() -> None:
    """The parser behind the command rules: every command of the line, quotes understood."""
    from headwire.runtime.policy.shell_syntax import analyze

    def names(command: str) -> list[list[str | None]]:
        return [[w.literal for w in c.words] for c in analyze(command).commands]

    assert names("ls -la") == [["ls", "-la"]]
    assert names("ls && git status; pwd | wc -l & echo x || true") == [
        ["ls"],
        ["git", "status"],
        ["pwd"],
        ["wc", "-l"],
        ["echo", "x"],
        ["true"],
    ]
    assert names("echo 'a;b'") == [["echo", "a;b"]]
    assert not analyze("make 2>&1 >/dev/null").writes_file
    for command in ("ls > out", "ls >> out", "ls 2> err", "ls >/dev/nullx", "ls &>out", "ls >&1x"):
        assert analyze(command).writes_file, command
    for command in ("echo $(id)", "echo `id`", "diff <(id) <(id)", "tee >(id)"):
        assert ["id"] in names(command), command
