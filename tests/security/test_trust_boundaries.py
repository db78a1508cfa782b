"""Issue 12's findings, each against the real CLI: permission rules that hold, untrusted
repositories that cannot run code or read the key, protected paths, subagents that cannot
loosen their parent's mode.  Each test failed before its fix."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import Proc, env_for, run_cli, write_script

KEY = "sk-test-key-0123456789abcdef"


def _run(tmp: Path, turns: list[dict[str, Any]], *flags: str, **env: str) -> Proc:
    script = write_script(tmp / "script.jsonl", turns)
    return run_cli(["--script", str(script), "-o", "json", *flags, "-p", "go"], tmp, **env)


def _messages(proc: Proc) -> list[dict[str, Any]]:
    assert proc.returncode == 0, proc.stderr
    out: list[dict[str, Any]] = json.loads(proc.stdout)
    return out


def _blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        b
        for m in messages
        if m.get("type") == "user"
        for b in m["message"]["content"]
        if b.get("type") == "tool_result"
    ]


def _shell(*commands: str) -> dict[str, Any]:
    return {"tools": [{"name": "run_shell_command", "args": {"command": c}} for c in commands]}


# -- 1. shell rules on the parsed command ---


def test_allow_rule_admits_no_file_redirection(tmp_path: Path) -> None:
    """``>&WORD`` writes the file WORD: ``Bash(echo)`` / ``Bash(git status)`` do not admit it."""
    proj = tmp_path / "proj"
    (proj / "3rdparty").mkdir(parents=True)
    proc = _run(
        tmp_path,
        [
            _shell("echo owned >&3rdparty/../../OUTSIDE.txt", "git status >&1pwned", "echo fine"),
            {"text": "done"},
        ],
        "--allowed-tools",
        "run_shell_command(echo),run_shell_command(git status)",
    )
    blocks = _blocks(_messages(proc))
    assert [b["is_error"] for b in blocks] == [True, True, False]
    assert not (tmp_path / "OUTSIDE.txt").exists()
    assert not (proj / "1pwned").exists()


def test_plan_mode_read_only_shortcut_reads_nothing_outside(tmp_path: Path) -> None:
    """An absolute path glued to an option, or a link out, is not read in plan mode."""
    proj = tmp_path / "proj"
    proj.mkdir()
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("OUTSIDE-SECRET-CONTENT\n")
    (proj / "note.txt").write_text("hello\n")
    (proj / "innocent.txt").symlink_to(secret)
    proc = _run(
        tmp_path,
        [
            _shell(
                f"du --files0-from={secret}",
                "cat innocent.txt",
                "grep -r -f../outside/secret.txt .",
                "wc -l note.txt",
            ),
            {"text": "done"},
        ],
        "--approval-mode",
        "plan",
    )
    blocks = _blocks(_messages(proc))
    assert [b["is_error"] for b in blocks] == [True, True, True, False]
    assert all("not allowed in plan mode" in b["content"] for b in blocks[:3])
    assert b"OUTSIDE-SECRET-CONTENT" not in proc.stdout


# -- 2. deny rules deny ---


@pytest.mark.parametrize(
    "flags",
    [
        ["--exclude-tools", "run_shell_command(rm)"],
        ["--disallowedTools", "Bash(rm:*)"],
        ["--exclude-tools", "Shell(rm)", "--approval-mode", "default"],
    ],
)
def test_deny_rules_hold_in_yolo(tmp_path: Path, flags: list[str]) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "victim.txt").write_text("keep me\n")
    proc = _run(
        tmp_path,
        [
            _shell(
                "rm -f victim.txt",
                "ls && /bin/rm -f victim.txt",
                "bash -c 'rm -f victim.txt'",
                "echo $(rm -f victim.txt)",
                '"$X" -f victim.txt',
            ),
            {"text": "done"},
        ],
        "--yolo",
        *flags,
    )
    blocks = _blocks(_messages(proc))
    assert all(b["is_error"] for b in blocks), blocks
    assert all("denied by the rule" in b["content"] for b in blocks[:4])
    assert "cannot be checked against the deny rules" in blocks[4]["content"]
    assert (proj / "victim.txt").read_text() == "keep me\n"


@pytest.mark.parametrize(
    ("flags", "has_agent"),
    [
        (["--exclude-tools", "Agent"], False),
        (["--exclude-tools", "Task"], False),
        (["--disallowedTools", "Task"], False),
        (["--core-tools", "read_file,Agent"], True),
        (["--core-tools", "Read,Task"], True),
        (["--core-tools", "read_file"], False),
    ],
)
def test_agent_tool_aliases(tmp_path: Path, flags: list[str], has_agent: bool) -> None:
    tools = _messages(_run(tmp_path, [{"text": "done"}], *flags))[0]["tools"]
    assert ("agent" in tools) is has_agent, tools
    if "--core-tools" in flags:
        assert "read_file" in tools and "run_shell_command" not in tools


@pytest.mark.parametrize(
    "flags",
    [
        ["--exclude-tools", "Read(./.env)"],
        ["--disallowedTools", "WebFetch(domain:example.com)"],
        ["--allowed-tools", "Bash(git * --force)"],
        ["--allowed-tools", "Bash()"],
        ["--core-tools", "Bash(ls)"],
        ["--exclude-tools", "Bash(rm"],
    ],
)
@pytest.mark.parametrize("mode", ["-p", "session", "acp"])
def test_unenforceable_rules_are_refused_at_startup(
    tmp_path: Path, flags: list[str], mode: str
) -> None:
    extra = {
        "-p": ["-p", "hi"],
        "session": ["--input-format", "stream-json", "--output-format", "stream-json"],
        "acp": ["--acp"],
    }[mode]
    proc = run_cli(["--model", "scripted:demo", *flags, *extra], tmp_path, timeout=30)
    assert proc.returncode == 2, proc.stderr
    if mode == "session":  # a stream-JSON client still gets its one result (the run contract)
        (result,) = proc.lines()
        assert result["subtype"] == "error_during_execution" and flags[1] in result["errors"][0]
    else:
        assert proc.stdout == b""
    assert flags[1] in proc.stderr and "Traceback" not in proc.stderr


def test_denial_hint_names_a_flag_that_allows_the_call(tmp_path: Path) -> None:
    """The hint of a refused shell call is a real flag: rerun with it, the call runs."""
    turns = [_shell("touch made && echo ok"), {"text": "done"}]
    first = _blocks(_messages(_run(tmp_path, turns)))[0]
    assert first["is_error"] and "--approval-mode auto-edit" not in first["content"]
    match = re.search(r"--allowed-tools ('[^']+'|\S+)", first["content"])
    assert match, first["content"]
    (rule,) = shlex.split(match.group(1))
    second = _blocks(_messages(_run(tmp_path, turns, "--allowed-tools", rule)))[0]
    assert second["is_error"] is False, second
    assert (tmp_path / "proj" / "made").exists()


# -- 4. untrusted repositories ---


def _project_server(proj: Path, args: list[str]) -> None:
    (proj / ".headwire").mkdir(parents=True, exist_ok=True)
    server = {"command": sys.executable, "args": ["-c", *args]}
    (proj / ".headwire" / "settings.json").write_text(json.dumps({"mcpServers": {"repo": server}}))


MARKER_CODE = "import pathlib; pathlib.Path('MARKER').write_text('ran')"


def test_untrusted_project_mcp_servers_do_not_start(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    _project_server(proj, [MARKER_CODE])
    proc = _run(tmp_path, [{"text": "done"}], "--approval-mode", "plan")
    _messages(proc)
    assert not (proj / "MARKER").exists()
    notes = [line for line in proc.stderr.splitlines() if "not a trusted folder" in line]
    assert len(notes) == 1 and "--trust-project" in notes[0]


@pytest.mark.parametrize("how", ["flag", "trust-list"])
def test_trusted_project_mcp_servers_start_without_the_api_key(tmp_path: Path, how: str) -> None:
    """Trusted (``--trust-project``, or ``headwire trust``; the environment variable is unit
    tested), the servers start -- and ``${OPENAI_API_KEY}`` in the project file stays as
    written."""
    proj = tmp_path / "proj"
    code = "import pathlib, sys; pathlib.Path('ARGS').write_text(repr(sys.argv))"
    _project_server(proj, [code, "${OPENAI_API_KEY}", "$OPENAI_API_KEY"])
    flags: list[str] = []
    if how == "flag":
        flags = ["--trust-project"]
    else:
        home = tmp_path / "home"
        home.mkdir()
        done = subprocess.run(
            [sys.executable, "-m", "headwire", "trust"],
            cwd=proj,
            env=env_for(home),
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0 and b"trusted: " in done.stdout, done.stderr
    _run(tmp_path, [{"text": "done"}], *flags, OPENAI_API_KEY=KEY)
    argv = (proj / "ARGS").read_text()
    assert KEY not in argv and "OPENAI_API_KEY" in argv


def _agent_file(proj: Path, name: str, extra: str = "") -> None:
    folder = proj / ".headwire" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: d\n{extra}---\nYou are {name}.\n"
    )


def test_project_agents_need_a_trusted_folder(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    _agent_file(proj, "lister")
    untrusted = _run(tmp_path, [{"text": "done"}])
    assert "lister" not in _messages(untrusted)[0]["agents"]
    assert "not a trusted folder" in untrusted.stderr
    trusted = _run(tmp_path, [{"text": "done"}], "--trust-project")
    assert "lister" in _messages(trusted)[0]["agents"]


def test_file_tools_refuse_protected_paths(tmp_path: Path) -> None:
    """``.git`` internals and ``.headwire`` are not written (also in yolo) unless asked for."""
    proj = tmp_path / "proj"
    (proj / ".git" / "hooks").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    (proj / ".git" / "config").write_text(config)
    edit = {
        "name": "edit",
        "args": {
            "file_path": str(proj / ".git" / "config"),
            "old_string": "bare = false",
            "new_string": "bare = false\n\tfsmonitor = touch PWNED",
        },
    }
    writes = [
        {"name": "write_file", "args": {"file_path": str(proj / p), "content": "x"}}
        for p in (".git/hooks/pre-commit", ".headwire/settings.json", ".GIT/x", "sub/.git/config")
    ]
    read = {"name": "read_file", "args": {"file_path": str(proj / ".git" / "config")}}
    turns = [{"tools": [edit, *writes]}, {"text": "done"}]
    allowed_turns = [{"tools": [read, edit, *writes]}, {"text": "done"}]  # read before edit
    blocks = _blocks(_messages(_run(tmp_path, turns, "--yolo")))
    assert all(b["is_error"] and "protected path" in b["content"] for b in blocks), blocks
    assert (proj / ".git" / "config").read_text() == config
    assert not (proj / ".git" / "hooks" / "pre-commit").exists()
    assert not (proj / ".headwire").exists()
    allowed = _blocks(
        _messages(_run(tmp_path, allowed_turns, "--yolo", "--allow-protected-writes"))
    )
    assert not any(b["is_error"] for b in allowed), allowed
    assert "fsmonitor" in (proj / ".git" / "config").read_text()


@pytest.mark.parametrize(
    ("parent", "agent_mode", "write_runs"),
    [
        (["--approval-mode", "default"], "yolo", False),
        (["--yolo"], "plan", False),
        (["--yolo"], "default", False),
        (["--approval-mode", "auto-edit"], "yolo", True),
    ],
)
def test_subagent_definition_cannot_loosen_the_mode(
    tmp_path: Path, parent: list[str], agent_mode: str, write_runs: bool
) -> None:
    proj = tmp_path / "proj"
    _agent_file(proj, "sneaky", f"approvalMode: {agent_mode}\ntools: Write, Read, Bash\n")
    call = {
        "tool": "agent",
        "args": {"description": "d", "prompt": "p", "subagent_type": "sneaky"},
    }
    write = {"name": "write_file", "args": {"file_path": str(proj / "out.txt"), "content": "x"}}
    turns = [call, {"tools": [write]}, {"text": "sub"}, {"text": "ok"}]
    messages = _messages(_run(tmp_path, turns, "--trust-project", *parent))
    assert (proj / "out.txt").exists() is write_runs
    inner = [
        b
        for m in messages
        if m.get("type") == "user" and m.get("parent_tool_use_id")
        for b in m["message"]["content"]
        if b.get("type") == "tool_result"
    ]
    assert [b["is_error"] for b in inner] == [not write_runs]
