"""Settings, context files, prompt files, --fallback-model and --agents, seen where they land:
in the requests the fake OpenAI-compatible server received, and on the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.helpers import run_cli
from tests.fakes.fake_openai import FakeOpenAI

FLAGS = ["--auth-type", "openai", "-o", "stream-json"]


def run(fake: FakeOpenAI, args: list[str], tmp: Path, **env: str) -> Any:
    return run_cli([*FLAGS, *args], tmp, OPENAI_BASE_URL=fake.base_url, **env)


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def system_of(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_context_files_reach_the_model_in_upstream_order(tmp_path: Path) -> None:
    home, proj = tmp_path / "home" / ".headwire", tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    write(home / "QWEN.md", "user qwen")
    write(home / "AGENTS.md", "user agents")
    write(tmp_path / "QWEN.md", "parent of the repository")  # above the root: not read
    write(proj / "QWEN.md", "project qwen")
    write(proj / "AGENTS.md", "project agents")
    write(proj / "append.txt", "appended from a file")
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(
            fake,
            ["-m", "m", "--append-system-prompt-file", "append.txt", "-p", "hi"],
            tmp_path,
        )
        system = system_of(fake.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert "parent of the repository" not in system
    bodies = [
        "user qwen",
        "project qwen",
        "user agents",
        "project agents",
        "appended from a file",
    ]
    positions = [system.index(text) for text in bodies]
    assert positions == sorted(positions), system
    assert "--- Context from: QWEN.md ---\nproject qwen\n--- End of Context from: QWEN.md ---" in (
        system
    )
    assert "--- Context from: ../home/.headwire/QWEN.md ---\nuser qwen" in system
    assert "\n\n---\n\nappended from a file" in system


def test_system_prompt_file_and_custom_context_names(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    write(proj / "prompt.md", "You are a test prompt.")
    write(proj / "RULES.md", "custom rules")
    write(proj / "QWEN.md", "not loaded")
    write(proj / ".headwire" / "settings.json", {"context": {"fileName": "RULES.md"}})
    with FakeOpenAI([{"text": "ok"}, {"text": "ok"}]) as fake:
        args = ["-m", "m", "--system-prompt-file", "prompt.md", "-p", "hi"]
        proc = run(fake, args, tmp_path, HEADWIRE_TRUST_PROJECT="1")
        untrusted = run(fake, args, tmp_path)
        system, default = (system_of(body) for body in fake.requests)
    assert proc.returncode == 0, proc.stderr
    assert system.startswith("You are a test prompt.\n\n---\n\n--- Context from: RULES.md ---")
    assert "not loaded" not in system
    assert untrusted.returncode == 0 and "ignoring context.fileName" in untrusted.stderr
    assert "not loaded" in default and "custom rules" not in default  # the default names
    both = run_cli(
        ["--system-prompt", "a", "--system-prompt-file", "prompt.md", "-p", "x"], tmp_path
    )
    assert both.returncode == 2 and "cannot be used together" in both.stderr
    missing = run_cli(["--system-prompt-file", "nope.md", "-p", "x"], tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip().endswith("nope.md: no such file")


def test_each_setting_takes_effect_with_flags_over_settings(tmp_path: Path) -> None:
    home, proj = tmp_path / "home" / ".headwire", tmp_path / "proj"
    write(
        home / "settings.json",
        {
            "model": {"name": "user-model"},
            "tools": {"exclude": ["run_shell_command"], "todoWrite": {"enabled": True}},
        },
    )
    write(
        proj / ".headwire" / "settings.json",
        {
            "model": {"name": "project-model"},
            "tools": {"exclude": ["glob"], "listDirectory": {"enabled": True}},
        },
    )
    script = [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    with FakeOpenAI(script) as fake:
        first = run(fake, ["-p", "hi"], tmp_path)
        second = run(fake, ["--settings", '{"model": {"name": "cli-model"}}', "-p", "hi"], tmp_path)
        third = run(
            fake,
            ["-m", "flag-model", "--settings", '{"model": {"name": "x"}}', "-p", "hi"],
            tmp_path,
        )
        bodies = list(fake.requests)
    for proc in (first, second, third):
        assert proc.returncode == 0, proc.stderr
    assert [b["model"] for b in bodies] == ["project-model", "cli-model", "flag-model"]
    names = tool_names(bodies[0])
    assert "run_shell_command" not in names and "glob" not in names  # excludes add up
    assert "todo_write" in names and "list_directory" in names
    assert "web_fetch" in names and "notebook_edit" in names


def test_settings_env_core_tools_approval_and_turn_limit(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    with FakeOpenAI(
        [{"tool": "write_file", "args": {"file_path": str(proj / "out.txt"), "content": "x"}}]
        + [{"tool": "read_file", "args": {"absolute_path": str(proj / "out.txt")}}] * 3
    ) as fake:
        write(
            proj / ".headwire" / "settings.json",
            {
                "env": {"OPENAI_BASE_URL": fake.base_url, "OPENAI_MODEL": "env-model"},
                "tools": {"core": ["write_file", "read_file"], "approvalMode": "yolo"},
                "model": {"maxSessionTurns": 2},
            },
        )
        proc = run_cli([*FLAGS, "-p", "write it"], tmp_path, HEADWIRE_TRUST_PROJECT="1")
        bodies = list(fake.requests)
    assert proc.returncode == 53, proc.stderr
    assert (proj / "out.txt").read_text() == "x"  # yolo from the settings
    assert len(bodies) == 2 and bodies[0]["model"] == "env-model"  # env from the settings
    assert sorted(tool_names(bodies[0])) == ["read_file", "write_file"]
    result = proc.lines()[-1]
    assert result["subtype"] == "error_max_turns"
    assert "model.maxSessionTurns in settings.json" in json.dumps(result)


def test_bad_settings_file_is_one_line_naming_file_and_key(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    path = proj / ".headwire" / "settings.json"
    write(path, {"tools": {"todoWrite": {"enabeld": True}}})
    for mode in (["-o", "text"], ["-o", "stream-json"], ["--experimental-acp"]):
        proc = run_cli([*mode, "-m", "scripted", "-p", "hi"], tmp_path)
        assert proc.returncode == 2
        if mode[-1] == "stream-json":  # the run contract: one result, saying the same
            (result,) = proc.lines()
            assert "tools.todoWrite.enabeld: unknown key" in result["errors"][0]
        else:
            assert proc.stdout == b""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"headwire: {path}: tools.todoWrite.enabeld: unknown key")
        assert "did you mean enabled?" in lines[0]
    write(path, '{"model": {"name": "m"},}')
    proc = run_cli(["-m", "scripted", "-p", "hi"], tmp_path)
    assert proc.returncode == 2 and f"{path}: not valid JSON" in proc.stderr
    write(path, {"mcpServers": {"s": {"args": ["x"]}}})  # read in a trusted folder only
    proc = run_cli(["-m", "scripted", "-p", "hi"], tmp_path, HEADWIRE_TRUST_PROJECT="1")
    assert proc.returncode == 2 and f"{path}: mcpServers.s: needs 'command'" in proc.stderr


def test_fallback_model_after_retries_on_overload(tmp_path: Path) -> None:
    overloaded = {"error_status": 529, "message": "Overloaded", "retry_after": 0}
    with FakeOpenAI([overloaded] * 4 + [{"text": "from the fallback"}]) as fake:
        proc = run(fake, ["-m", "big", "--fallback-model", "small,tiny", "-p", "hi"], tmp_path)
        models = [b["model"] for b in fake.requests]
    assert proc.returncode == 0, proc.stderr
    assert models == ["big"] * 4 + ["small"]  # the provider's 3 retries first
    assert proc.lines()[-1]["result"] == "from the fallback"
    assert "model big is overloaded" in proc.stderr and "fallback model small (1/2)" in proc.stderr
    with FakeOpenAI([{"error_status": 400, "message": "bad"}]) as fake:
        proc = run(fake, ["-m", "big", "--fallback-model", "small", "-p", "hi"], tmp_path)
        assert [b["model"] for b in fake.requests] == ["big"]
    assert proc.returncode == 1


def test_inline_agents(tmp_path: Path) -> None:
    agents = {"reviewer": {"description": "Reviews", "prompt": "Review it.", "tools": ["Read"]}}
    proc = run_cli(
        ["-o", "stream-json", "-m", "scripted:done", "--agents", json.dumps(agents), "-p", "x"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.lines()[0]["agents"] == ["general-purpose", "reviewer"]
    assert "not supported by headwire" not in proc.stderr
    bad = run_cli(["-m", "scripted", "--agents", '{"r": {"prompt": "p"}}', "-p", "x"], tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip() == "headwire: --agents: 'r': 'description' must be a non-empty string"


def test_disabled_tool_error_names_the_setting(tmp_path: Path) -> None:
    with FakeOpenAI([{"tool": "todo_write", "args": {"todos": []}}, {"text": "ok"}]) as fake:
        proc = run(fake, ["-m", "m", "--yolo", "-p", "plan"], tmp_path)
        tool_message = next(m for m in fake.requests[1]["messages"] if m["role"] == "tool")
    assert proc.returncode == 0, proc.stderr
    assert "tools.todoWrite.enabled" in tool_message["content"]
    result = next(line for line in proc.lines() if line["type"] == "user")
    assert "tools.todoWrite.enabled" in json.dumps(result)


def test_acp_session_in_another_folder_uses_that_folders_settings(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.e2e.helpers import env_for

    home, proj, other, bad = (tmp_path / n for n in ("home", "proj", "other", "bad"))
    for d in (home, proj, other, bad):
        d.mkdir()
    write(other / ".headwire" / "settings.json", {"tools": {"approvalMode": "plan"}})
    write(bad / ".headwire" / "settings.json", {"tools": {"approvalMode": "auto"}})
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--experimental-acp", "-m", "scripted:done"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=proj,
        env=env_for(home),
    )
    requests = [
        {"id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"id": 2, "method": "session/new", "params": {"cwd": str(other), "mcpServers": []}},
        {"id": 3, "method": "session/new", "params": {"cwd": str(bad), "mcpServers": []}},
    ]
    text = "".join(json.dumps({"jsonrpc": "2.0", **r}) + "\n" for r in requests)
    out, err = proc.communicate(text.encode(), timeout=60)
    answers = {m["id"]: m for m in map(json.loads, out.splitlines()) if "id" in m}
    assert answers[2]["result"]["modes"]["currentModeId"] == "plan"
    error = answers[3]["error"]
    assert error["code"] == -32602
    assert error["message"].startswith(f"{bad}/.headwire/settings.json: tools.approvalMode: ")
    assert b"Traceback" not in err
