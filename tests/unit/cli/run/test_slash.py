"""The REPL's slash commands: parsing, help, the session listing."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.cli.run.slash import (
    COMMANDS,
    SlashCommand,
    format_sessions,
    help_text,
    parse,
    recent_sessions,
    resolve_session,
)
from headwire.errors import UsageError
from headwire.runtime.store.storage import chats_dir


def test_commands_are_parsed_with_their_argument() -> None:
    assert parse("/help") == SlashCommand("help", "")
    assert parse("  /model  qwen-max ") == SlashCommand("model", "qwen-max")
    assert parse("/exit") == SlashCommand("quit", "")
    assert parse("/approval-mode yolo") == SlashCommand("approval-mode", "yolo")
    assert parse("/resume 1234") == SlashCommand("resume", "1234")
    assert parse("/compact") == SlashCommand("compact", "")
    assert parse("/compress") == parse("/summarize") == SlashCommand("compact", "")


def test_other_lines_are_prompts() -> None:
    assert parse("what does /etc/hosts do?") == "what does /etc/hosts do?"
    assert parse("/etc/hosts: explain") == "/etc/hosts: explain"
    assert parse("//help me") == "/help me"
    assert parse("") == ""


def test_an_unknown_command_never_reaches_the_model() -> None:
    with pytest.raises(UsageError, match=r"Unknown command /hepl\. Did you mean /help\?"):
        parse("/hepl")
    with pytest.raises(UsageError, match=r"Unknown command /zzz\. /help lists"):
        parse("/zzz please")


@given(st.text())
def test_parse_sends_a_line_to_the_model_only_when_it_is_no_command_word(line: str) -> None:
    """A line is a command only when it starts with ``/`` and a lowercase word; ``//`` escapes."""
    try:
        parsed = parse(line)
    except UsageError:
        assert line.strip().startswith("/") and not line.strip().startswith("//")
        return
    if isinstance(parsed, SlashCommand):
        assert parsed.name in COMMANDS
        assert line.strip().startswith("/")
    elif line.strip().startswith("//"):
        assert parsed == line.strip()[1:]
    else:
        assert parsed == line


def test_help_lists_every_command() -> None:
    text = help_text()
    for name in COMMANDS:
        assert f"/{name}" in text


def _recording(root: Path, cwd: Path, session_id: str, prompt: str, mtime: float) -> Path:
    folder = chats_dir(root, cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    user = {"type": "user", "message": {"role": "user", "content": prompt}}
    path.write_bytes(orjson.dumps(user) + b"\n" + b'{"type":"assistant"}\n')
    os.utime(path, (mtime, mtime))
    return path


def test_sessions_newest_first_with_their_first_prompt(tmp_path: Path) -> None:
    root, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    assert recent_sessions(root, cwd) == []
    _recording(root, cwd, "aaa-1", "first", 1_000)
    _recording(root, cwd, "bbb-2", "second\x1b[2J", 3_000)
    huge = _recording(root, cwd, "aab-3", "x", 2_000)
    huge.write_bytes(b'{"message": "' + b"y" * 1_000_000 + b'"}\n')
    os.utime(huge, (2_000, 2_000))
    sessions = recent_sessions(root, cwd)
    assert [(s.session_id, s.first_prompt) for s in sessions] == [
        ("bbb-2", "second\x1b[2J"),
        ("aab-3", ""),
        ("aaa-1", "first"),
    ]
    table = format_sessions(sessions, current="aaa-1")
    assert "\x1b" not in table and "second^[[2J" in table
    assert table.splitlines()[2].startswith("* aaa-1")
    assert recent_sessions(root, cwd, limit=1)[0].session_id == "bbb-2"


def test_resume_takes_an_id_its_prefix_or_the_latest_other(tmp_path: Path) -> None:
    root, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    _recording(root, cwd, "aaa-1", "first", 1_000)
    _recording(root, cwd, "aab-3", "third", 2_000)
    _recording(root, cwd, "bbb-2", "second", 3_000)
    assert resolve_session(root, cwd, "", current="bbb-2") == "aab-3"
    assert resolve_session(root, cwd, "b", current="x") == "bbb-2"
    assert resolve_session(root, cwd, "aaa-1", current="x") == "aaa-1"
    with pytest.raises(UsageError, match="2 sessions start with 'aa'"):
        resolve_session(root, cwd, "aa", current="x")
    with pytest.raises(UsageError, match="No recorded session 'zz'"):
        resolve_session(root, cwd, "zz", current="x")
    with pytest.raises(UsageError, match="No other recorded session"):
        resolve_session(tmp_path / "empty", cwd, "", current="x")
