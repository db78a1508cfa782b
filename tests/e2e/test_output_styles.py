"""Output styles side by side with Qwen Code 0.24.4: which style a run takes, and what it does.

Each case sets up a home (user settings, user style files) and a project (its style files),
runs each CLI once with ``-p`` against a scripted OpenAI-compatible server, and reads the first
model request: the style named by the system prompt's ``# Output Style: NAME`` section (or
none), whether the built-in coding guidance is still there (upstream's "Software Engineering
Tasks" section, headwire's "Use the tools to inspect and change the workspace"), whether the
style's text reached the prompt, and whether the user turn starts with the reminder ``NAME
output style is active.``.  Both CLIs read user styles from ``~/.qwen/output-styles`` and
project styles from ``.qwen/output-styles`` (headwire's project ones only in a trusted folder:
``--trust-project`` here; upstream trusts every folder unless folder trust is turned on).  What
upstream did is committed in ``tests/data/output-styles/upstream-0.24.4.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import check_capture, each_case, needs_upstream, side_by_side
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import ROOT

CAPTURE = ROOT / "tests" / "data" / "output-styles" / "upstream-0.24.4.json"

Setup = Callable[[Path, Path], None]
"""Writes a case's files: ``(home, project)``."""


def _file(where: str, name: str, text: str | bytes) -> Setup:
    def write(home: Path, proj: Path) -> None:
        folder = (home if where == "user" else proj) / ".qwen" / "output-styles"
        folder.mkdir(parents=True, exist_ok=True)
        data = text.encode() if isinstance(text, str) else text
        (folder / name).write_bytes(data)

    return write


def _settings(value: dict[str, Any]) -> Setup:
    def write(home: Path, proj: Path) -> None:
        for folder in (home / ".qwen", home / ".headwire"):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "settings.json").write_text(json.dumps(value))

    return write


def _symlink(home: Path, proj: Path) -> None:
    source = proj / "elsewhere.md"
    source.write_text("---\nname: Linked\n---\nLINKED-STYLE-BODY\n")
    folder = proj / ".qwen" / "output-styles"
    folder.mkdir(parents=True)
    (folder / "linked.md").symlink_to(source)


def _hard_link(home: Path, proj: Path) -> None:
    source = proj / "elsewhere.md"
    source.write_text("---\nname: Linked\n---\nLINKED-STYLE-BODY\n")
    folder = proj / ".qwen" / "output-styles"
    folder.mkdir(parents=True)
    os.link(source, folder / "linked.md")


REVIEWER = (
    "---\nname: Reviewer\ndescription: Reviews code\nkeep-coding-instructions: false\n---\n\n"
    "<!-- a note for teammates: NOT-FOR-THE-MODEL -->\nREVIEWER-STYLE-BODY: findings by severity.\n"
)


def _sized(size: int) -> str:
    head = "---\nname: Sized\n---\nSIZED-STYLE-BODY "
    return head + "x" * (size - len(head) - 1) + "\n"


CASES: dict[str, tuple[list[str], list[Setup], str]] = {
    "no style": ([], [], ""),
    "built-in by flag": (["--output-style", "Concise"], [], ""),
    "name in another case": (["--output-style", "explanatory"], [], ""),
    "default by flag": (["--output-style", "default"], [], ""),
    "learning in a headless run": (["--output-style", "Learning"], [], ""),
    "unknown name": (["--output-style", "Bogus"], [], ""),
    "from the settings": ([], [_settings({"general": {"outputStyle": "Proactive"}})], ""),
    "flag over the settings": (
        ["--output-style", "Concise"],
        [_settings({"general": {"outputStyle": "Proactive"}})],
        "",
    ),
    "a user style, coding guidance dropped": (
        ["--output-style", "reviewer"],
        [_file("user", "reviewer.md", REVIEWER)],
        "REVIEWER-STYLE-BODY",
    ),
    "a user style named by its file": (
        ["--output-style", "Terse"],
        [_file("user", "Terse.md", "TERSE-STYLE-BODY\nsecond line\n")],
        "TERSE-STYLE-BODY",
    ),
    "a rewritten built-in keeps the coding guidance": (
        ["--output-style", "Concise"],
        [_file("user", "concise.md", "MY-CONCISE-BODY\n")],
        "MY-CONCISE-BODY",
    ),
    "a body of comments only": (
        ["--output-style", "Empty"],
        [_file("user", "Empty.md", "<!-- nothing for the model -->\n")],
        "",
    ),
    "a style named default": (
        ["--output-style", "default"],
        [_file("user", "x.md", "---\nname: default\n---\nDEFAULT-STYLE-BODY\n")],
        "DEFAULT-STYLE-BODY",
    ),
    "a project style": (
        ["--output-style", "Team"],
        [_file("project", "team.md", "---\nname: Team\n---\nTEAM-STYLE-BODY\n")],
        "TEAM-STYLE-BODY",
    ),
    "the project's style over the user's": (
        ["--output-style", "Team"],
        [
            _file("user", "team.md", "---\nname: Team\n---\nUSER-TEAM-BODY\n"),
            _file("project", "team.md", "---\nname: Team\n---\nPROJECT-TEAM-BODY\n"),
        ],
        "PROJECT-TEAM-BODY",
    ),
    "a project style through a symbolic link": (
        ["--output-style", "Linked"],
        [_symlink],
        "LINKED-STYLE-BODY",
    ),
    "a project style through a hard link": (
        ["--output-style", "Linked"],
        [_hard_link],
        "LINKED-STYLE-BODY",
    ),
    "a style of 25,000 bytes": (
        ["--output-style", "Sized"],
        [_file("user", "sized.md", _sized(25_000))],
        "SIZED-STYLE-BODY",
    ),
    "a style of 25,001 bytes": (
        ["--output-style", "Sized"],
        [_file("user", "sized.md", _sized(25_001))],
        "SIZED-STYLE-BODY",
    ),
    "a style that is not UTF-8": (
        ["--output-style", "Latin"],
        [_file("user", "Latin.md", b"LATIN-STYLE-BODY caf\xe9\n")],
        "LATIN-STYLE-BODY",
    ),
    "a replaced system prompt": (
        ["--output-style", "Concise", "--system-prompt", "You are a planner."],
        [],
        "",
    ),
}
"""Each case: the flags, what it writes first, and a text of the style's body to look for."""


def _first_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


def run_case(tmp: Path, which: str, case: str) -> dict[str, Any]:
    """What one run of ``which`` sent in its first model request, as the module says."""
    flags, setups, marker = CASES[case]
    tmp = tmp / case.replace(" ", "-").replace(",", "").replace("'", "") / which
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True)
    proj.mkdir()
    for setup in setups:
        setup(home, proj)
    trust = ["--trust-project"] if which == "headwire" else []
    args = [*flags, *trust, "--auth-type", "openai", "-m", "m", "--yolo", "-o", "json", "-p", "hi"]
    with FakeOpenAI({"replies": [], "default": {"text": "done"}}) as fake:
        argv, env = side_by_side(which, home, args, fake.base_url)
        done = subprocess.run(argv, env=env, cwd=proj, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        messages = fake.requests[0]["messages"]
    system = _first_text(messages[0]["content"])
    user = _first_text(messages[1]["content"])
    header = next((ln for ln in system.splitlines() if ln.startswith("# Output Style: ")), None)
    name = header.removeprefix("# Output Style: ") if header else None
    coding = (
        "## Software Engineering Tasks" in system
        if which == "upstream"
        else "Use the tools to inspect and change the workspace" in system
    )
    return {
        "style": name,
        "coding_guidance": coding if name else None,
        "body_sent": bool(marker) and marker in system,
        "comment_sent": "NOT-FOR-THE-MODEL" in system,
        "reminder": bool(name) and f"{name} output style is active." in user,
    }


@pytest.mark.slow
def test_headwire_takes_the_style_the_capture_says(tmp_path: Path) -> None:
    expected = json.loads(CAPTURE.read_text())
    got = each_case(lambda case: run_case(tmp_path, "headwire", case), CASES)
    for case in CASES:
        assert got[case] == expected[case], case


@pytest.mark.slow
@needs_upstream
def test_upstream_takes_the_style_the_capture_says(tmp_path: Path) -> None:
    check_capture(CAPTURE, each_case(lambda case: run_case(tmp_path, "upstream", case), CASES))


def test_subagents_run_without_the_style_and_every_turn_is_reminded(tmp_path: Path) -> None:
    """A persistent session under ``--output-style Concise``: each user turn's message starts
    with the reminder, the main agent's prompt carries the style, and a subagent's requests
    carry neither (subagents run their own prompts)."""
    from tests.e2e.helpers import run_cli

    task = {"tool": "agent", "args": {"description": "d", "prompt": "look around"}}
    script = [task, {"text": "sub done"}, {"text": "first"}, {"text": "second"}]
    turns = [
        json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"
        for text in ("go", "again")
    ]
    flags = ["--auth-type", "openai", "-m", "m", "--yolo", "--output-style", "concise"]
    flags += ["--input-format", "stream-json", "-o", "stream-json"]
    with FakeOpenAI(script) as fake:
        proc = run_cli(
            flags,
            tmp_path,
            stdin="".join(turns).encode(),
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="k",
        )
        requests = list(fake.requests)
    assert proc.returncode == 0, proc.stderr
    assert len(requests) == 4
    main_first, sub, main_after, second_turn = requests
    for body in (main_first, main_after, second_turn):
        assert "# Output Style: Concise" in _first_text(body["messages"][0]["content"])
    assert "# Output Style" not in _first_text(sub["messages"][0]["content"])
    assert "output style is active" not in json.dumps(sub["messages"])
    user_turns = [_first_text(m["content"]) for m in second_turn["messages"] if m["role"] == "user"]
    assert len(user_turns) == 2
    assert all(
        t.startswith("<system-reminder>\nConcise output style is active.") for t in user_turns
    )
