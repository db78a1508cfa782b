"""The first commands of a Claude Code (or Gemini CLI) user, run as a subprocess against the fake
OpenAI-compatible server: what the model was offered and the exact prompt it received (the fake's
request log), what ran, and what the person was told."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.e2e.helpers import run_cli
from tests.fakes.fake_openai import FakeOpenAI

FLAGS = ["--auth-type", "openai", "-o", "stream-json"]
MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"


def run(fake: FakeOpenAI, args: list[str], tmp: Path, **kw: Any) -> Any:
    return run_cli([*FLAGS, *args], tmp, OPENAI_BASE_URL=fake.base_url, **kw)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def user_text(body: dict[str, Any]) -> str:
    """The text of the last user message the model received."""
    last = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = last["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


# ---- issue 21, finding 8: a restricting flag is never ignored ----------------------------


def test_tools_flag_offers_only_those_tools_and_a_shell_call_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "proj" / "ran"
    shell = {"tool": "run_shell_command", "args": {"command": f"touch {marker}"}}
    with FakeOpenAI([shell, {"text": "ok"}]) as fake:
        proc = run(fake, ["-m", "m", "--yolo", "--tools", "read_file", "-p", "hi"], tmp_path)
        offered = tool_names(fake.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert offered == ["read_file"]
    assert not marker.exists()
    assert "not supported" not in proc.stderr and "ignor" not in proc.stderr
    assert proc.lines()[0]["tools"] == ["read_file"]


def test_tools_flag_claude_names_empty_and_default(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "a"}, {"text": "b"}, {"text": "c"}]) as fake:
        one = run(fake, ["-m", "m", "--tools", "Read,Grep", "-p", "hi"], tmp_path)
        none = run(fake, ["-m", "m", "--tools", "", "-p", "hi"], tmp_path)
        every = run(fake, ["-m", "m", "--tools", "default", "-p", "hi"], tmp_path)
        offered = [tool_names(body) for body in fake.requests]
    assert one.returncode == none.returncode == every.returncode == 0
    assert sorted(offered[0]) == ["grep_search", "read_file"]
    assert offered[1] == []
    assert "run_shell_command" in offered[2] and "agent" in offered[2]


def test_tools_flag_narrows_core_tools_and_refuses_command_rules(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "a"}]) as fake:
        proc = run(
            fake,
            ["-m", "m", "--core-tools", "read_file,edit", "--tools", "Read,Bash", "-p", "hi"],
            tmp_path,
        )
        offered = tool_names(fake.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert offered == ["read_file"]
    bad = run_cli(["-m", "scripted", "--tools", "Bash(git *)", "-p", "x"], tmp_path)
    assert bad.returncode == 2 and "--tools selects whole tools" in bad.stderr


def test_strict_mcp_config_uses_only_the_flags_servers(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(MCP_SERVER)]}
    write(tmp_path / "home" / ".headwire" / "settings.json", {"mcpServers": {"fromsettings": entry}})
    flag = json.dumps({"mcpServers": {"fromflag": entry}})
    with FakeOpenAI([{"text": "a"}, {"text": "b"}]) as fake:
        loose = run(fake, ["-m", "m", "--mcp-config", flag, "-p", "hi"], tmp_path)
        strict = run(
            fake, ["-m", "m", "--mcp-config", flag, "--strict-mcp-config", "-p", "hi"], tmp_path
        )
        offered = [tool_names(body) for body in fake.requests]
    assert loose.returncode == 0 and strict.returncode == 0, strict.stderr
    assert any(n.startswith("mcp__fromsettings__") for n in offered[0])
    assert any(n.startswith("mcp__fromflag__") for n in offered[1])
    assert not any(n.startswith("mcp__fromsettings__") for n in offered[1])
    assert [s["name"] for s in strict.lines()[0]["mcp_servers"]] == ["fromflag"]


def test_setting_sources_chooses_the_settings_files(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".headwire" / "settings.json", {"model": {"name": "user-model"}})
    write(tmp_path / "proj" / ".headwire" / "settings.json", {"tools": {"exclude": ["edit"]}})
    with FakeOpenAI([{"text": "a"}, {"text": "b"}, {"text": "c"}]) as fake:
        both = run(fake, ["-p", "hi"], tmp_path)
        project = run(fake, ["-m", "m", "--setting-sources", "project,local", "-p", "hi"], tmp_path)
        none = run(fake, ["-m", "m", "--setting-sources=", "-p", "hi"], tmp_path)
        bodies = list(fake.requests)
    assert both.returncode == project.returncode == none.returncode == 0, none.stderr
    assert bodies[0]["model"] == "user-model" and "edit" not in tool_names(bodies[0])
    assert bodies[1]["model"] == "m" and "edit" not in tool_names(bodies[1])
    assert "edit" in tool_names(bodies[2])
    bad = run_cli(["-m", "scripted", "--setting-sources", "user,policy", "-p", "x"], tmp_path)
    assert bad.returncode == 2 and "--setting-sources: unknown source 'policy'" in bad.stderr
