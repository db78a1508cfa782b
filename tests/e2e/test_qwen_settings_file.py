"""A Qwen Code user's settings file, copied as it is: comments, the keys of Qwen Code's own
interface (``ui``, ``ide``, ``privacy``, ``review``, most of ``general`` and ``output``) and
``general.chatRecording``.

Qwen Code 0.24.4 reads its settings with ``strip-json-comments`` (``//`` and ``/* */`` outside
strings; a trailing comma is still an error) after dropping a byte order mark; headwire's
loader does the same.  Interface keys load and do nothing; the few keys whose effect headwire
does not reproduce are named in one note each; ``chatRecording: false`` records nothing.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.config.settings import (
    SettingsError,
    dropped_notes,
    load_settings,
    parse_settings_text,
    strip_comments,
)
from tests.e2e.helpers import check_capture, each_case, needs_upstream, run_cli, side_by_side
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import ROOT

QWEN_FILE = """\ufeff{
  // copied from ~/.qwen/settings.json
  "general": {
    "vimMode": true,
    "preferredEditor": "code", /* the editor the TUI opens */
    "outputLanguage": "French",
    "gitCoAuthor": {"commit": true, "pr": false},
    "defaultFileEncoding": "utf-8-bom",
    "outputStyle": "Concise"
  },
  "ui": {"theme": "GitHub", "hideBanner": true, "accessibility": {"screenReader": false}},
  "ide": {"enabled": false},
  "privacy": {"usageStatisticsEnabled": false},
  "review": {"effort": "high"},
  "output": {"format": "json", "showTimestamps": true},
  "model": {"name": "qwen3-coder-plus"} // a model name with "//" after it
}
"""

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.sampled_from('ab/*"\\\n ')),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet=st.sampled_from("ab/*")), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(JSON_VALUES)
def test_json_without_comments_is_left_as_it_is(value: Any) -> None:
    """Slashes and stars inside strings are never taken for comments."""
    for text in (json.dumps(value), json.dumps(value, indent=1, ensure_ascii=False)):
        assert strip_comments(text) == text


@given(JSON_VALUES, st.text(alphabet=st.sampled_from("ab/* \"'")))
def test_comments_between_tokens_change_nothing_but_keep_lines(value: Any, note: str) -> None:
    """A ``//`` comment after every line and a ``/* */`` one before it parse to the same value
    on the same lines (an error further down names the line of the file)."""
    lines = json.dumps(value, indent=1).splitlines()
    block = note.replace("/", "")  # cannot close the block comment early
    text = "\n".join(f"/*{block}*/{line} //{note}" for line in lines)
    stripped = strip_comments(text)
    assert stripped.count("\n") == text.count("\n")
    assert len(stripped) == len(text)
    assert json.loads(stripped) == value


def test_a_qwen_code_settings_file_loads_with_notes_for_what_is_not_applied(
    tmp_path: Path,
) -> None:
    user = tmp_path / "home"
    user.mkdir()
    (user / "settings.json").write_text(QWEN_FILE, encoding="utf-8")
    settings = load_settings(user, tmp_path)
    assert settings.model_name == "qwen3-coder-plus"
    assert settings.chat_recording is True and settings.new_file_bom is True
    notes = [n.split(" in ")[0] for n in dropped_notes(settings)]
    assert notes == ["headwire: note: general.gitCoAuthor"]  # outputStyle applies
    assert settings.output_style == "Concise"
    quiet = {"general": {"outputLanguage": "auto", "gitCoAuthor": {"commit": False}}}
    quiet["output"] = {"format": "text"}
    (user / "settings.json").write_text(json.dumps(quiet))
    assert dropped_notes(load_settings(user, tmp_path)) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"ui": {"themee": "GitHub"}}', "s: ui.themee: unknown key (expected one of: theme,"),
        ('{"ui": {"themee": 1}}', "did you mean theme?"),
        ('{"general": {"vimmode": true}}', "did you mean vimMode?"),
        ('{"general": {"chatRecording": "no"}}', "general.chatRecording: expected a boolean"),
        (
            '{"general": {"outputLanguage": "French\\nIgnore"}}',
            "general.outputLanguage: expected one line without control characters",
        ),
        (
            '{"general": {"outputLanguage": "' + "x" * 81 + '"}}',
            "general.outputLanguage: expected at most 80 characters",
        ),
        ('{"a": 1, // x\n "b": 2,}', "(line 2 column"),
        ('{\n// one\n/* two\n*/ "ui": [}', "(line 4 column"),
    ],
)
def test_mistakes_are_named(text: str, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings_text(text, "s")
    assert message in str(caught.value)


def test_chat_recording_off_records_nothing_and_a_project_cannot_turn_it_off(
    tmp_path: Path,
) -> None:
    chats = tmp_path / "home" / ".headwire" / "projects"
    off = '{"general": {"chatRecording": false} /* as Qwen Code */}'
    with FakeOpenAI([{"text": "a"}, {"text": "b"}, {"text": "c"}]) as fake:
        env = {"OPENAI_BASE_URL": fake.base_url}
        flags = ["--auth-type", "openai", "-m", "m", "-o", "stream-json"]
        quiet = run_cli([*flags, "--settings", off, "-p", "x"], tmp_path, **env)
        assert quiet.returncode == 0, quiet.stderr
        assert not list(chats.rglob("*.jsonl"))
        project = tmp_path / "proj" / ".headwire" / "settings.json"
        project.parent.mkdir(parents=True, exist_ok=True)
        project.write_text(off)
        kept = run_cli([*flags, "-p", "y"], tmp_path, **env)
        assert kept.returncode == 0, kept.stderr
        assert "ignoring general.chatRecording" in kept.stderr
        assert len(list(chats.rglob("*.jsonl"))) == 1
        trusted = run_cli([*flags, "--trust-project", "-p", "z"], tmp_path, **env)
        assert trusted.returncode == 0, trusted.stderr
        assert len(list(chats.rglob("*.jsonl"))) == 1


# -- side by side with Qwen Code 0.24.4 -------------------------------------------------------

CAPTURE = ROOT / "tests" / "data" / "qwen-settings" / "upstream-0.24.4.json"
STREAM = ["-o", "stream-json"]
FILES: dict[str, tuple[str, list[str]]] = {
    "qwen code file with comments": (QWEN_FILE, STREAM),
    "chat recording off": ('{"general": {"chatRecording": false}} // no record', STREAM),
    "trailing comma": ('{"ui": {"theme": "GitHub"},}', STREAM),
    "output format stream-json": ('{"output": {"format": "stream-json"}}', []),
    "output format json, flag text": ('{"output": {"format": "json"}}', ["-o", "text"]),
}
"""Each case: the user settings file, and the flags besides ``-p hi``."""


def run_file(tmp: Path, which: str, case: str) -> dict[str, Any]:
    """Whether the CLI ran its prompt with the case's settings file and flags, whether it
    recorded the session, and what its stdout was."""
    text, extra = FILES[case]
    tmp = tmp / case.replace(" ", "-").replace(",", "")
    home = tmp / which / "home"
    folder = home / (".qwen" if which == "upstream" else ".headwire")
    folder.mkdir(parents=True)
    (folder / "settings.json").write_text(text, encoding="utf-8")
    proj = tmp / which / "proj"
    proj.mkdir()
    flags = ["--auth-type", "openai", "-m", "m", *extra, "-p", "hi"]
    with FakeOpenAI([{"text": "a"}, {"text": "a"}]) as fake:
        argv, env = side_by_side(which, home, flags, fake.base_url)
        done = subprocess.run(argv, env=env, cwd=proj, capture_output=True, timeout=120)
        asked = bool(fake.requests)
    ran = done.returncode == 0 and asked
    return {
        "ran": ran,
        "recorded": any("chats" in p.parts for p in folder.rglob("*.jsonl")),
        # a failed start: Qwen Code dies with a stack trace; headwire writes the run
        # contract's error result in the format asked for (README, "Exit codes")
        "stdout": _shape(done.stdout) if ran else None,
    }


def _shape(out: bytes) -> str:
    """What a run wrote: ``stream-json`` (one object per line), ``json`` (one array) or
    ``text``."""
    lines = out.strip().splitlines()
    if lines and lines[0].startswith(b"{") and lines[-1].startswith(b"{"):
        return "stream-json"
    return "json" if out.startswith(b"[") else "text"


def test_headwire_reads_the_files_as_the_capture_says(tmp_path: Path) -> None:
    got = {case: run_file(tmp_path, "headwire", case) for case in FILES}
    assert got == json.loads(CAPTURE.read_text())


@needs_upstream
def test_upstream_reads_the_files_as_the_capture_says(tmp_path: Path) -> None:
    got = each_case(lambda case: run_file(tmp_path, "upstream", case), FILES)
    check_capture(CAPTURE, got)


def test_output_language_tells_the_model_which_language_to_answer_in(tmp_path: Path) -> None:
    """``general.outputLanguage`` is a rule in the system prompt's context, as Qwen Code's
    ``output-language.md`` is; ``auto`` says nothing."""
    flags = ["--auth-type", "openai", "-m", "m", "-o", "stream-json"]
    systems = []
    for value in ("French", "auto"):
        setting = json.dumps({"general": {"outputLanguage": value}})
        with FakeOpenAI([{"text": "d'accord"}]) as fake:
            done = run_cli(
                [*flags, "--settings", setting, "-p", "hi"], tmp_path, OPENAI_BASE_URL=fake.base_url
            )
            assert done.returncode == 0, done.stderr
            systems.append(fake.requests[0]["messages"][0]["content"])
    french, auto = systems
    assert "Write every answer in French, whatever language the user writes in" in french
    assert "Answer language" not in auto
    assert french.startswith(auto.split("\n\n---\n\n")[0])


def test_a_repository_cannot_turn_the_answer_into_the_transcript(tmp_path: Path) -> None:
    """``output.format`` from an untrusted project's settings is dropped with a note: a script
    that prints ``headwire -p``'s answer to a public log would otherwise print everything the
    tools read."""
    project = tmp_path / "proj" / ".headwire" / "settings.json"
    project.parent.mkdir(parents=True)
    project.write_text('{"output": {"format": "stream-json"}}')
    flags = ["--auth-type", "openai", "-m", "m", "-p", "hi"]
    with FakeOpenAI([{"text": "the answer"}, {"text": "the answer"}]) as fake:
        plain = run_cli(flags, tmp_path, OPENAI_BASE_URL=fake.base_url)
        trusted = run_cli([*flags, "--trust-project"], tmp_path, OPENAI_BASE_URL=fake.base_url)
    assert plain.returncode == trusted.returncode == 0, plain.stderr
    assert plain.stdout == b"the answer\n"
    assert "ignoring output.format" in plain.stderr
    assert trusted.stdout.startswith(b'{"type":"system"')


def test_an_unclosed_string_of_escaped_quotes_is_read_once() -> None:
    """A file of escaped quotes after an opening one is one unclosed string to its end (as
    ``strip-json-comments`` reads it): each quote is not a new string tried to the end again,
    which took 13 s for 64 KB and would hold the start (or an ACP session/new) for hours at
    the 4 MiB limit."""
    text = '"' + '\\"' * 100_000 + "//"
    started = time.perf_counter()
    assert strip_comments(text) == text
    assert time.perf_counter() - started < 10  # linear: milliseconds; quadratic: minutes
    with pytest.raises(SettingsError, match="not valid JSON"):
        parse_settings_text(text, "s")
