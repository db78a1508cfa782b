"""The first commands of a Claude Code (or Gemini CLI) user, run as a subprocess against the fake
OpenAI-compatible server: what the model was offered and the exact prompt it received (the fake's
request log), what ran, and what the person was told."""

from __future__ import annotations

import json
import shutil
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
    write(
        tmp_path / "home" / ".headwire" / "settings.json", {"mcpServers": {"fromsettings": entry}}
    )
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


# ---- Claude Code's spellings ---------------------------------------------------------------


def test_print_flag_without_a_value_takes_the_prompt_from_arguments_and_stdin(
    tmp_path: Path,
) -> None:
    with FakeOpenAI([{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]) as fake:
        plain = run_cli(
            ["--auth-type", "openai", "-m", "m", "-p", "--output-format", "json", "hello"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
        )
        piped = run(fake, ["-m", "m", "-p"], tmp_path, stdin=b"from stdin\n")
        both = run(fake, ["-m", "m", "--print", "explain"], tmp_path, stdin=b"file text\n")
        qwen = run(fake, ["-m", "m", "-p", "the qwen way"], tmp_path)
        prompts = [user_text(body) for body in fake.requests]
    assert [p.returncode for p in (plain, piped, both, qwen)] == [0, 0, 0, 0], plain.stderr
    assert prompts == ["hello", "from stdin", "file text\n\nexplain", "the qwen way"]
    assert json.loads(plain.stdout)[-1]["result"] == "a"
    empty = run_cli(["-m", "scripted", "-p"], tmp_path)
    assert empty.returncode == 2 and "No input provided" in empty.stderr


def test_dangerously_skip_permissions_is_yolo(tmp_path: Path) -> None:
    marker = tmp_path / "proj" / "ran"
    shell = {"tool": "run_shell_command", "args": {"command": f"touch {marker}"}}
    with FakeOpenAI([shell, {"text": "ok"}]) as fake:
        proc = run(fake, ["-m", "m", "--dangerously-skip-permissions", "-p", "go"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert marker.exists() and proc.lines()[0]["permission_mode"] == "yolo"


def test_variadic_allowed_tools_keep_the_trailing_prompt(tmp_path: Path) -> None:
    marker = tmp_path / "proj" / "ran"
    touch = {"tool": "run_shell_command", "args": {"command": f"touch {marker}"}}
    with FakeOpenAI([touch, {"text": "ok"}, touch, {"text": "ok"}]) as fake:
        git_only = run(
            fake, ["-m", "m", "--allowedTools", "Bash(git *)", "Edit", "-p", "hello"], tmp_path
        )
        assert not marker.exists()  # Bash(git *) does not allow touch
        spaced = run(
            fake,
            ["-m", "m", "--allowedTools", "Bash(git *) Bash(touch *)", "Edit", "make it"],
            tmp_path,
        )
        prompts = [user_text(body) for body in fake.requests[::2]]
    assert git_only.returncode == spaced.returncode == 0, spaced.stderr
    assert prompts == ["hello", "make it"]
    assert marker.exists()
    assert "not supported" not in spaced.stderr


def test_resume_by_prefix_latest_and_alone(tmp_path: Path) -> None:
    sid = "72552c57-1111-4222-8333-444455556666"
    with FakeOpenAI([{"text": f"answer {n}"} for n in range(5)]) as fake:
        first = run(fake, ["-m", "m", "--session-id", sid, "-p", "remember 7"], tmp_path)
        by_prefix = run(fake, ["-m", "m", "-r", "72552c57", "-p", "second"], tmp_path)
        latest = run(fake, ["-m", "m", "-r", "latest", "-p", "third"], tmp_path)
        alone = run(fake, ["-m", "m", "-p", "fourth", "-r"], tmp_path)
        bodies = list(fake.requests)
        missing = run(fake, ["-m", "m", "-r", "0000dead", "-p", "x"], tmp_path)
        assert len(fake.requests) == 4
    for proc in (first, by_prefix, latest, alone):
        assert proc.returncode == 0, proc.stderr
        assert proc.lines()[0]["session_id"] == sid
    texts = [[m["content"] for m in body["messages"] if m["role"] == "user"] for body in bodies]
    assert texts[3] == ["remember 7", "second", "third", "fourth"]
    assert missing.returncode == 2 and "headwire sessions list" in missing.stderr


def test_continue_without_a_session_says_so_and_starts_one(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "a"}]) as fake:
        proc = run(fake, ["-m", "m", "-c", "-p", "hi"], tmp_path)
        assert user_text(fake.requests[0]) == "hi"
    assert proc.returncode == 0, proc.stderr
    assert "no session in this folder to continue; starting a new one" in proc.stderr


def test_no_session_persistence_and_fork_session(tmp_path: Path) -> None:
    sid = "aaaaaaaa-1111-4222-8333-444455556666"
    chats = tmp_path / "home" / ".headwire" / "projects"
    with FakeOpenAI([{"text": f"answer {n}"} for n in range(4)]) as fake:
        ghost = run(fake, ["-m", "m", "--no-session-persistence", "-p", "x"], tmp_path)
        assert not list(chats.rglob("*.jsonl"))
        run(fake, ["-m", "m", "--session-id", sid, "-p", "one"], tmp_path)
        (original,) = list(chats.rglob("*.jsonl"))
        before = original.read_bytes()
        fork = run(fake, ["-m", "m", "-r", sid, "--fork-session", "-p", "two"], tmp_path)
        forked_id = fork.lines()[0]["session_id"]
        again = run(fake, ["-m", "m", "-r", forked_id, "-p", "three"], tmp_path)
        last = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "user"]
    assert ghost.returncode == fork.returncode == again.returncode == 0, fork.stderr
    assert forked_id != sid and original.read_bytes() == before
    assert last == ["one", "two", "three"]
    bad = run_cli(["-m", "scripted", "--fork-session", "-p", "x"], tmp_path)
    assert bad.returncode == 2 and "--fork-session needs --resume or --continue" in bad.stderr


# ---- a first word that looks like a subcommand ------------------------------------------


def test_a_subcommand_lookalike_is_an_error_and_no_request_is_sent(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "never"}]) as fake:
        typo = run(fake, ["-m", "m", "sesions", "list"], tmp_path)
        peer = run(fake, ["-m", "m", "mcp", "list"], tmp_path)
        codex = run(fake, ["-m", "m", "exec", "fix it"], tmp_path)
        sent = list(fake.requests)
        prompt = run(fake, ["-m", "m", "-p", "mcp list"], tmp_path)
        assert user_text(fake.requests[0]) == "mcp list"
    assert sent == []
    assert typo.returncode == peer.returncode == codex.returncode == 2
    assert "did you mean 'sessions'?" in typo.stderr
    assert "did you mean --mcp-config?" in peer.stderr and "-p 'mcp list'" in peer.stderr
    assert "did you mean -p" in codex.stderr
    assert typo.lines()[-1]["is_error"] is True  # stream-json still ends with a result
    assert prompt.returncode == 0


# ---- every settings key the docs name ----------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
_CATEGORIES = (
    "general|ui|ide|privacy|telemetry|model|context|tools|mcp|security|advanced|experimental"
    "|mcpServers|env|modelPricing|modelFallbacks"
)


def documented_keys() -> list[str]:
    """Every dotted settings key README.md and docs/*.md name in backticks."""
    import re

    pattern = re.compile(rf"`((?:{_CATEGORIES})(?:\.[A-Za-z][A-Za-z0-9]*)+)`")
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = {m for path in texts for m in pattern.findall(path.read_text())}
    return sorted(k for k in found if k.rsplit(".", 1)[1] not in ("md", "json", "py", "png"))


def sample(schema: dict[str, Any], key: str) -> Any:
    """A valid value for ``key`` from the settings schema (KeyError: the schema lacks it)."""
    node: dict[str, Any] = schema
    for part in key.split("."):
        node = node["properties"][part]
    if "anyOf" in node:  # its first form (reasoning: false)
        node = node["anyOf"][0]
    if "const" in node:
        return node["const"]
    kind = node.get("type")
    if "enum" in node:
        return node["enum"][0]
    if kind == "boolean":
        return key != "telemetry.enabled"  # on, it would need the optional extra's exporter
    if kind in ("integer", "number"):
        return max(1, node.get("minimum", 1))
    if kind == "array":
        return []
    if kind == "object":
        return {}
    if key == "telemetry.outfile":
        return "telemetry.jsonl"
    return "QWEN.md" if key == "context.fileName" else "http://127.0.0.1:9/v1"


def nested(key: str, value: Any) -> dict[str, Any]:
    out: Any = value
    for part in reversed(key.split(".")):
        out = {part: out}
    return dict(out)


def test_every_settings_key_the_docs_name_is_accepted(tmp_path: Path) -> None:
    from headwire.runtime.config.settings import settings_schema

    keys = documented_keys()
    assert {"security.auth.selectedType", "security.auth.baseUrl", "model.name"} <= set(keys)
    assert "model.parseTextToolCalls" in keys
    schema = dict(settings_schema())
    missing = [key for key in keys if not _in_schema(schema, key)]
    assert missing == [], f"documented but not in the settings schema: {missing}"
    merged: dict[str, Any] = {}
    for key in keys:
        if key.startswith("tools.executionSandbox") and shutil.which("bwrap") is None:
            continue  # accepted, but the run would stop: no bubblewrap to enforce it here
        _merge(merged, nested(key, sample(schema, key)))
    write(tmp_path / "home" / ".headwire" / "settings.json", merged)
    proc = run_cli(["-m", "scripted:done", "-p", "hi"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "unknown" not in proc.stderr and "ignoring" not in proc.stderr


def _in_schema(schema: dict[str, Any], key: str) -> bool:
    node = schema
    for part in key.split("."):
        props = node.get("properties", {})
        if part not in props:
            return False
        node = props[part]
    return True


def _merge(into: dict[str, Any], add: dict[str, Any]) -> None:
    for k, v in add.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        elif not (isinstance(into.get(k), dict) and v == {}):
            into[k] = v


def test_provider_settings_choose_the_endpoint_model_and_key(tmp_path: Path) -> None:
    written = '<tool_call>{"name": "read_file", "arguments": {"absolute_path": "x"}}</tool_call>'
    with FakeOpenAI([{"text": written}, {"text": "ok"}], require_api_key="sk-settings") as fake:
        settings = {
            "security": {
                "auth": {
                    "selectedType": "openai",
                    "baseUrl": fake.base_url,
                    "apiKey": "sk-settings",
                }
            },
            "model": {"name": "from-settings", "parseTextToolCalls": True},
        }
        write(tmp_path / "home" / ".headwire" / "settings.json", settings)
        proc = run_cli(["-o", "stream-json", "-p", "read x"], tmp_path)
        bodies = list(fake.requests)
    assert proc.returncode == 0, proc.stderr
    assert [b["model"] for b in bodies] == ["from-settings", "from-settings"]
    assert any(m["role"] == "tool" for m in bodies[1]["messages"])  # the text call ran
    assert "no API key" not in proc.stderr


# ---- advice that works ---------------------------------------------------------------------


def _advice(proc: Any) -> str:
    """The refused call's message on the wire (stream-json)."""
    for message in proc.lines():
        if message.get("type") == "user":
            for block in message["message"]["content"]:
                if block.get("type") == "tool_result" and block.get("is_error"):
                    return str(block["content"])
    raise AssertionError("no refused call")


def test_a_denied_commands_advice_allows_that_exact_call(tmp_path: Path) -> None:
    import re
    import shlex

    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    commands = [
        "touch m1 && touch m2",
        "cd sub && touch ../m3",
        "printf x | tail -c 1 > m4",
        "python3 -c \"open('m5', 'w')\"",
    ]
    for number, command in enumerate(commands):
        marker = proj / ("m2", "m3", "m4", "m5")[number]
        script = [{"tool": "run_shell_command", "args": {"command": command}}, {"text": "ok"}]
        with FakeOpenAI(script + script) as fake:
            denied = run(fake, ["-m", "m", "-p", "go"], tmp_path)
            advice = _advice(denied)
            assert not marker.exists(), command
            found = re.search(r"Use --allowed-tools ('[^']*'|\S+)", advice)
            if found is not None:
                flag = ["--allowed-tools", shlex.split(found.group(1))[0]]
            else:
                assert advice.endswith("use --approval-mode yolo."), advice
                flag = ["--approval-mode", "yolo"]
            allowed = run(fake, ["-m", "m", *flag, "-p", "go"], tmp_path)
        assert allowed.returncode == 0 and marker.exists(), (command, advice, allowed.stderr)


def test_the_terminal_view_shows_the_whole_refusal(tmp_path: Path) -> None:
    command = "true && true && true && touch made"
    script = [{"tool": "run_shell_command", "args": {"command": command}}, {"text": "ok"}]
    with FakeOpenAI(script) as fake:
        proc = run_cli(
            ["--auth-type", "openai", "-m", "m", "--verbose", "-p", "go"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
        )
    assert proc.returncode == 0
    assert "--allowed-tools 'run_shell_command(true),run_shell_command(touch)'" in proc.stderr
    assert "or --approval-mode yolo." in proc.stderr and "allow with" not in proc.stderr


# ---- tools mean what upstream's mean ------------------------------------------------------


def test_read_file_errors_name_the_path_and_ls_applies_gitignore_as_upstream(
    tmp_path: Path,
) -> None:
    """Checked against Qwen Code 0.24.4 on the same tree: its model is told "File not found:
    P" / "Path is a directory, not a file: P", and its listing shows ``build`` (a "build/"
    rule does not hide it there) with 2 git-ignored (debug.log and .git)."""
    proj = tmp_path / "proj"
    for folder in (".git", "sub", "node_modules/x", "build"):
        (proj / folder).mkdir(parents=True)
    (proj / ".gitignore").write_text("build/\n*.log\n")
    for name in ("a.txt", "debug.log", "build/out.o"):
        (proj / name).write_text("x")
    write(
        tmp_path / "home" / ".headwire" / "settings.json",
        {"tools": {"listDirectory": {"enabled": True}}},
    )
    script = [
        {"tool": "read_file", "args": {"file_path": str(proj / "missing.txt")}},
        {"tool": "read_file", "args": {"file_path": str(proj / "sub")}},
        {"tool": "list_directory", "args": {"path": str(proj)}},
        {"text": "done"},
    ]
    with FakeOpenAI(script) as fake:
        proc = run(fake, ["-m", "m", "-p", "go"], tmp_path)
        told = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert proc.returncode == 0, proc.stderr
    assert str(proj / "missing.txt") in told[0] and str(proj / "sub") in told[1]
    listing = told[2]
    assert listing.startswith(f"Listed 5 item(s) in {proj}:")
    assert listing.endswith(
        "[DIR] build\n[DIR] node_modules\n[DIR] sub\n.gitignore\na.txt\n\n(2 git-ignored)"
    )
