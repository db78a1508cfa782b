"""Skills (issue 24): found in the user's and the project's folders, offered to the model, loaded
by the skill tool, run as ``/name args``, read confined, gated by trust and the settings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from headwire.cli.run.slash import parse
from tests.e2e.helpers import run_cli
from tests.fakes.fake_openai import FakeOpenAI

FLAGS = ["--auth-type", "openai", "-o", "stream-json", "-m", "m"]


def skill(root: Path, folder: str, name: str, description: str, body: str, **extra: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    more = "".join(f"{k}: {v}\n" for k, v in extra.items())
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{more}---\n{body}\n")
    return path


def run(fake: FakeOpenAI, tmp: Path, *args: str, trust: bool = True, **env: str) -> Any:
    extra = {"HEADWIRE_TRUST_PROJECT": "1"} if trust else {}
    return run_cli([*FLAGS, *args], tmp, OPENAI_BASE_URL=fake.base_url, **extra, **env)


def init_of(stdout: bytes) -> dict[str, Any]:
    first: dict[str, Any] = json.loads(stdout.splitlines()[0])
    assert first["subtype"] == "init"
    return first


def layout(tmp: Path) -> tuple[Path, Path]:
    home, proj = tmp / "home", tmp / "proj"
    skill(home / ".headwire" / "skills", "greet", "greet", "Says hello.", "Say hello in French.")
    skill(home / ".claude" / "skills", "greet", "greet", "Shadowed.", "never used")
    skill(
        proj / ".qwen" / "skills",
        "review",
        "review",
        "Reviews code <changes>.",
        "Review $ARGUMENTS carefully.",
        **{"allowed-tools": "[read_file]"},
    )
    skill(proj / ".agents" / "skills", "hidden", "hidden", "Off.", "x")
    (proj / ".headwire").mkdir(parents=True, exist_ok=True)
    settings = {"skills": {"disabled": ["HIDDEN"]}}
    (proj / ".headwire" / "settings.json").write_text(json.dumps(settings))
    return home, proj


def test_catalogue_skill_tool_and_init(tmp_path: Path) -> None:
    layout(tmp_path)
    load = {"tool": "skill", "args": {"skill": "review", "args": "HEAD~1"}}
    with FakeOpenAI([load, {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "hello")
        first, second = fake.requests[0], fake.requests[1]
    assert proc.returncode == 0, proc.stderr
    init = init_of(proc.stdout)
    assert init["slash_commands"] == ["greet", "review"]
    assert "skill" in init["tools"]
    prompt = first["messages"][-1]["content"]
    assert prompt.endswith("\n\nhello") and "<available_skills>" in prompt
    assert "<name>\nreview\n</name>" in prompt and "Reviews code &lt;changes&gt;." in prompt
    assert "Says hello." in prompt and "Shadowed." not in prompt and "hidden" not in prompt
    loaded = second["messages"][-1]["content"]
    assert "Review HEAD~1 carefully." in loaded
    assert str(tmp_path / "proj" / ".qwen" / "skills" / "review") in loaded
    # the catalogue comes once per session, not with later prompts (nor in the second request)
    assert sum("<available_skills>" in str(m["content"]) for m in second["messages"]) == 1


def test_slash_name_prompt_runs_the_skill(tmp_path: Path) -> None:
    layout(tmp_path)
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "/review src/app.py")
        prompt = fake.requests[0]["messages"][-1]["content"]
    assert proc.returncode == 0, proc.stderr
    assert "Review src/app.py carefully." in prompt
    assert parse("/review x", {"review": object()}) == "/review x"  # the REPL sends it too


def test_untrusted_project_skills_are_skipped_with_a_note(tmp_path: Path) -> None:
    layout(tmp_path)
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "hello", trust=False)
        prompt = fake.requests[0]["messages"][-1]["content"]
    assert proc.returncode == 0, proc.stderr
    assert "review" not in prompt and "greet" in prompt
    assert "project skills skipped" in proc.stderr and "not a trusted folder" in proc.stderr


def test_skill_files_are_read_confined(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / ".headwire" / "skills"
    outside = skill(tmp_path / "elsewhere", "x", "escape", "Outside.", "secret body")
    (root / "link").mkdir(parents=True)
    (root / "link" / "SKILL.md").symlink_to(outside)
    (root / "dirlink").symlink_to(outside.parent)  # a folder link leading out
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "SKILL.md")
    big = skill(root, "big", "big", "Too big.", "x")
    big.write_text(big.read_text() + "y" * 300_000)
    skill(root, "bad", "bad name!", "Bad.", "x")
    skill(root, "ok", "ok", "Fine.", "fine body")
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "hello", timeout=60)
        prompt = fake.requests[0]["messages"][-1]["content"]
    assert proc.returncode == 0, proc.stderr
    assert "Fine." in prompt
    for word in ("Outside.", "Too big.", "Bad."):
        assert word not in prompt
    assert proc.stderr.count("headwire: note: skill ") == 5, proc.stderr


def test_no_skills_no_skill_tool(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "hello")
        request = fake.requests[0]
    assert proc.returncode == 0, proc.stderr
    assert request["messages"][-1]["content"] == "hello"
    assert "skill" not in [t["function"]["name"] for t in request["tools"]]
    assert init_of(proc.stdout)["slash_commands"] == []
