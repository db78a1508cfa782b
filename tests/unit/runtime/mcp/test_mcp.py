"""MCP: configuration, naming, result texts, and real servers (stdio and streamable HTTP).

The server is ``tests/fakes/mcp_server.py`` (official SDK) run as a real subprocess; no mocks.
Server-backed tests group many calls per connection because starting a Python MCP server
costs seconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headwire.runtime.mcp.config import (
    DEFAULT_TIMEOUT_MS,
    McpConfigError,
    ServerConfig,
    expand_vars,
    load_mcp_servers,
    parse_acp_servers,
    parse_mcp_config_arg,
    parse_mcp_servers,
    parse_server,
)
from headwire.runtime.mcp.results import render
from headwire.runtime.mcp.tool import McpTool, mcp_tool_name, provider_safe_name, stable_name_hash
from headwire.runtime.policy.permissions import verdict
from headwire.runtime.tools.base import ToolContext, ToolOutcome
from tests.paths import FAKES

SERVER = FAKES / "mcp_server.py"


def stdio(*mode: str, **extra: Any) -> dict[str, Any]:
    """A settings entry starting the fake server over stdio."""
    return {"command": sys.executable, "args": [str(SERVER), *mode], **extra}


class Sink:
    """An artifact store in a temp directory (what the CLI's ArtifactStore does)."""

    def __init__(self, root: Path) -> None:
        self.directory = root
        self.saved: list[Path] = []

    def save(self, tool_name: str, data: bytes) -> Path:
        path = self.directory / f"{tool_name}_{len(self.saved)}.output"
        path.write_bytes(data)
        self.saved.append(path)
        return path


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return False


# ---------------------------------------------------------------------------------------------
# Configuration (pure).


def test_parse_stdio_http_and_claude_spellings() -> None:
    env = {"TOKEN": "s3cret", "HOME": "/home/u"}
    servers, problems = parse_mcp_servers(
        {
            "mcpServers": {
                "a": {
                    "command": "node",
                    "args": ["$HOME/srv.js"],
                    "env": {"K": "${TOKEN}"},
                    "cwd": "/tmp",
                    "timeout": 5000,
                    "trust": True,
                },
                "b": {
                    "httpUrl": "https://example.test/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
                "c": {"url": "http://127.0.0.1:9/mcp"},
                "d": {"type": "http", "url": "https://x.test/mcp"},
                "e": {"type": "sse", "url": "https://x.test/sse"},
                "f": {
                    "type": "stdio",
                    "command": "srv",
                    "includeTools": ["x"],
                    "excludeTools": ["y"],
                },
                "g": {"command": "off", "disabled": True},
            }
        },
        "settings.json",
        env,
    )
    assert problems == []
    assert sorted(servers) == ["a", "b", "c", "d", "e", "f"]
    a = servers["a"]
    assert (a.transport, a.command, a.args, a.env, a.cwd, a.timeout_ms, a.trust) == (
        "stdio",
        "node",
        ("/home/u/srv.js",),
        {"K": "s3cret"},
        "/tmp",
        5000,
        True,
    )
    assert servers["b"].transport == "http" and not servers["b"].sse_fallback
    assert servers["b"].headers == {"Authorization": "Bearer s3cret"}
    assert servers["c"].transport == "http" and servers["c"].sse_fallback
    assert servers["d"].transport == "http" and servers["e"].transport == "sse"
    assert servers["f"].include_tools == ("x",) and servers["f"].exclude_tools == ("y",)
    assert a.timeout_ms is not None and servers["b"].timeout_ms is None
    assert DEFAULT_TIMEOUT_MS == 600_000


def test_expand_vars_keeps_unknown_and_uses_defaults() -> None:
    env = {"A": "1"}
    assert expand_vars("$A-${A}-${B:-two}-$B-${C}", env) == "1-1-two-$B-${C}"


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({}, "needs 'command' (stdio) or 'httpUrl' / 'url' (HTTP)"),
        ({"command": ""}, "'command' must be a non-empty string"),
        ({"command": "x", "args": "a b"}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"A": ["no"]}}, "'env' must be an object of string values"),
        ({"command": "x", "timeout": -1}, "'timeout' must be a positive number of milliseconds"),
        ({"command": "x", "trust": "yes"}, "'trust' must be true or false"),
        ({"type": "websocket", "url": "ws://x"}, "'type' must be one of"),
        ({"type": "http"}, "an HTTP server needs 'url' or 'httpUrl'"),
        ({"httpUrl": "ftp://x"}, "'url' must start with http:// or https://"),
        ("node srv.js", "must be an object"),
    ],
)
def test_invalid_entries_name_the_file_and_server(entry: Any, fragment: str) -> None:
    with pytest.raises(McpConfigError) as info:
        parse_server("srv", entry, "/home/u/.headwire/settings.json")
    message = str(info.value)
    assert message.startswith("/home/u/.headwire/settings.json: mcpServers.srv: ")
    assert fragment in message


def test_settings_problems_are_collected_not_raised() -> None:
    servers, problems = parse_mcp_servers(
        {"mcpServers": {"ok": {"command": "x"}, "bad": {"args": []}}}, "p.json"
    )
    assert list(servers) == ["ok"]
    assert problems == [
        "p.json: mcpServers.bad: needs 'command' (stdio) or 'httpUrl' / 'url' (HTTP)"
    ]
    assert parse_mcp_servers([], "p.json") == ({}, ["p.json: expected a JSON object"])
    assert parse_mcp_servers({"mcpServers": 3}, "p.json")[1] == [
        "p.json: 'mcpServers' must be an object of servers"
    ]
    assert parse_mcp_servers({"other": 1}, "p.json") == ({}, [])


def _sources(home: Path, proj: Path) -> list[tuple[str, Any]]:
    from headwire.runtime.config.settings import load_settings

    return load_settings(home, proj).mcp_sources()


def test_merge_user_project_cli_later_wins(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    (proj / ".headwire").mkdir(parents=True)
    home.mkdir()
    (home / "settings.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "one": {"command": "user-one"},
                    "two": {"command": "user-two"},
                    "three": {"command": "user-three"},
                    "sdk": {"type": "sdk", "name": "sdk"},
                }
            }
        )
    )
    (proj / ".headwire" / "settings.json").write_text(
        json.dumps({"mcpServers": {"two": {"command": "project-two"}, "three": {"disabled": True}}})
    )
    cli_file = tmp_path / "cli.json"
    cli_file.write_text(json.dumps({"mcpServers": {"four": {"httpUrl": "http://h/mcp"}}}))
    servers, warnings = load_mcp_servers(
        _sources(home, proj), proj, ['{"one": {"command": "cli-one"}}', str(cli_file)], env={}
    )
    assert {n: s.command or s.url for n, s in servers.items()} == {
        "one": "cli-one",
        "two": "project-two",
        "four": "http://h/mcp",
    }
    assert servers["one"].source == "--mcp-config"
    assert servers["two"].source == str(proj / ".headwire" / "settings.json")
    assert len(warnings) == 1 and "mcpServers.sdk" in warnings[0]
    assert str(home / "settings.json") in warnings[0]


def test_broken_settings_entry_and_broken_cli_config_are_errors(tmp_path: Path) -> None:
    """A settings file entry that cannot be used stops the run like a bad --mcp-config (it
    used to be skipped with a warning); the message names the file and the server."""
    (tmp_path / "settings.json").write_text('{"mcpServers": {"broken": {"args": 1}}}')
    with pytest.raises(McpConfigError, match=r"settings\.json: mcpServers\.broken: "):
        load_mcp_servers(_sources(tmp_path, tmp_path / "p"), tmp_path, None, env={})
    with pytest.raises(McpConfigError, match=r"^--mcp-config: not valid JSON"):
        load_mcp_servers([], tmp_path, ["{oops"], env={})
    with pytest.raises(McpConfigError, match=r"--mcp-config: cannot read .*missing\.json"):
        load_mcp_servers([], tmp_path, ["missing.json"], env={})
    with pytest.raises(McpConfigError, match=r"^--mcp-config: mcpServers\.x: 'trust' must be"):
        load_mcp_servers([], tmp_path, ['{"mcpServers": {"x": {"command": "c", "trust": 1}}}'])
    servers, warnings = load_mcp_servers(
        [],
        tmp_path,
        ['{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}'],
        env={},
    )
    assert servers == {} and warnings == [
        "--mcp-config: mcpServers.calc: in-process SDK servers are not supported"
    ]
    data, source = parse_mcp_config_arg('  {"mcpServers": {}}', tmp_path)
    assert (data, source) == ({"mcpServers": {}}, "--mcp-config")


def test_acp_server_list_is_converted() -> None:
    servers, problems = parse_acp_servers(
        [
            {
                "name": "local",
                "command": "srv",
                "args": ["-v"],
                "env": [{"name": "K", "value": "v"}],
            },
            {
                "type": "http",
                "name": "web",
                "url": "https://w.test/mcp",
                "headers": [{"name": "Authorization", "value": "Bearer t"}],
            },
            {"command": "nameless"},
        ],
        env={},
    )
    assert servers["local"].env == {"K": "v"} and servers["local"].args == ("-v",)
    assert servers["web"].transport == "http" and servers["web"].headers == {
        "Authorization": "Bearer t"
    }
    assert problems == ["session/new: mcpServers: every server needs a name"]


# ---------------------------------------------------------------------------------------------
# Naming, texts and approvals (pure).


def test_tool_names_follow_upstream() -> None:
    assert mcp_tool_name("bigout", "big_output") == "mcp__bigout__big_output"
    odd = mcp_tool_name("my server", "do.it")
    assert odd.startswith("mcp__my_server__do_it_") and len(odd) <= 63
    assert odd == mcp_tool_name("my server", "do.it")  # stable
    long = provider_safe_name("mcp__" + "s" * 40 + "__" + "t" * 40)
    assert len(long) == 63 and long.endswith(
        "_" + stable_name_hash("mcp__" + "s" * 40 + "__" + "t" * 40)
    )
    assert len(stable_name_hash("x")) == 7


class _Block:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def test_render_text_media_resources_and_structured() -> None:
    blocks = [
        _Block(type="text", text="one"),
        _Block(type="image", data="AAAA", mime_type="image/png"),
        _Block(type="resource", resource=_Block(text="embedded")),
        _Block(type="resource", resource=_Block(blob="AAAA", mime_type=None)),
        _Block(type="resource_link", uri="file:///a", name="a", title=None),
        _Block(type="mystery"),
    ]
    out = render("t", "mcp__s__t", blocks, {"k": 1})
    assert out.model_text == "\n".join(
        [
            '{"k":1}',
            "one",
            "[Tool 't' provided the following image data with mime-type: image/png]",
            "embedded",
            "[Tool 't' provided the following embedded resource with mime-type: "
            "application/octet-stream]",
            "Resource Link: a at file:///a",
        ]
    )
    assert out.display.split("\n")[3] == "[image/png]"
    assert (
        render("t", "mcp__s__t", [_Block(type="text", text='{"k":1}')], {"k": 1}).model_text
        == '{"k":1}'
    )
    assert render("t", "mcp__s__t", [], None).model_text == "(mcp__s__t completed with no output)"
    assert render("t", "mcp__s__t", [], None).display == ""
    big = "x" * 1000
    assert render("t", "n", [_Block(type="text", text=big)]).display is big  # no copy


def test_trust_and_modes_decide_approval() -> None:
    def tool(trust: bool, read_only: bool = False) -> McpTool:
        return McpTool(None, "srv", "t", "", {}, trust=trust, read_only=read_only)  # type: ignore[arg-type]

    assert verdict(tool(False), {}, "default", ()) == "ask"
    assert verdict(tool(False), {}, "auto-edit", ()) == "ask"
    assert verdict(tool(False), {}, "yolo", ()) == "allow"
    assert verdict(tool(False), {}, "default", ("mcp__srv__t",)) == "allow"
    assert verdict(tool(True), {}, "default", ()) == "allow"
    assert verdict(tool(True), {}, "plan", ()) == "deny"
    assert verdict(tool(True, read_only=True), {}, "plan", ()) == "allow"
    assert tool(False).kind == "other" and tool(False, read_only=True).kind == "read"
    assert tool(False).display_name == "t (srv MCP Server)" and tool(False).server_id == "srv"


# ---------------------------------------------------------------------------------------------
# Real servers.


async def _run(tool: Any, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    outcome: ToolOutcome = await tool.run(args, ctx)
    return outcome


def test_stdio_manager_calls_errors_timeouts_crash_and_shutdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from headwire.runtime.mcp import stdio as stdio_module
    from headwire.runtime.mcp.client import McpManager

    # Shorter shutdown grace periods (2 s each by default) keep the stubborn server's test quick.
    monkeypatch.setattr(stdio_module, "EXIT_GRACE_S", 0.5)
    monkeypatch.setattr(stdio_module, "TERM_GRACE_S", 0.5)

    servers = {
        name: parse_server(name, raw, "test")
        for name, raw in {
            # The slow-call limit lives on its own server, so a loaded machine cannot time
            # out the quick calls of "bigout".
            "bigout": stdio(timeout=60_000),
            "hangs": stdio(timeout=1500),
            "broken": stdio("fail-startup"),
            "missing": {"command": str(tmp_path / "no-such-server")},
            "odd": stdio("malformed"),
            "stubborn": stdio("stubborn"),
        }.items()
    }
    sink = Sink(tmp_path)
    progress: list[dict[str, Any]] = []
    notes: list[str] = []

    async def scenario() -> dict[str, Any]:
        manager = McpManager(servers, connect_timeout_s=45, note=notes.append)
        changes: list[list[dict[str, Any]]] = []
        manager.on_status_change = lambda: changes.append(manager.statuses())
        await manager.start()
        seen: dict[str, Any] = {"statuses": manager.statuses(), "changes": changes}
        tools = {t.name: t for t in manager.tools()}
        seen["names"] = sorted(tools)
        ctx = ToolContext(cwd=tmp_path, artifacts=sink, progress=progress.append)
        for key, name, args in [
            ("echo", "mcp__bigout__echo", {"text": "héllo"}),
            ("big", "mcp__bigout__big_output", {}),
            ("fail", "mcp__bigout__fail", {"message": "nope"}),
            ("pic", "mcp__bigout__pic", {}),
            ("progress", "mcp__bigout__progress", {"steps": 3}),
            ("hang", "mcp__hangs__hang", {}),
            ("malformed", "mcp__odd__broken", {}),
            ("flood", "mcp__bigout__flood", {}),
            ("pid1", "mcp__bigout__pid", {}),
        ]:
            started = time.monotonic()
            seen[key] = await _run(tools[name], args, ctx)
            seen[key + "_s"] = time.monotonic() - started
        # Cancellation aborts a call promptly.
        cancel_ctx = ToolContext(cwd=tmp_path, artifacts=sink)
        asyncio.get_running_loop().call_later(0.3, cancel_ctx.cancelled.set)
        started = time.monotonic()
        seen["cancelled"] = await _run(tools["mcp__bigout__hang"], {}, cancel_ctx)
        seen["cancelled_s"] = time.monotonic() - started
        # A crash is a tool error and marks the server disconnected ...
        seen["crash"] = await _run(tools["mcp__bigout__crash"], {}, ctx)
        seen["after_crash"] = manager.statuses()
        # ... and the next call starts it again.
        seen["again"] = await _run(tools["mcp__bigout__echo"], {"text": "again"}, ctx)
        seen["pid2"] = await _run(tools["mcp__bigout__pid"], {}, ctx)
        seen["stubborn_pid"] = manager.connections["stubborn"].process.pid  # type: ignore[union-attr]
        seen["restarted"] = manager.statuses()
        started = time.monotonic()
        await manager.aclose()
        seen["close_s"] = time.monotonic() - started
        seen["closed"] = manager.statuses()
        return seen

    seen = asyncio.run(scenario())
    assert seen["statuses"] == [
        {"name": "bigout", "status": "connected"},
        {"name": "hangs", "status": "connected"},
        {"name": "broken", "status": "failed"},
        {"name": "missing", "status": "failed"},
        {"name": "odd", "status": "connected"},
        {"name": "stubborn", "status": "connected"},
    ]
    assert "mcp__bigout__big_output" in seen["names"] and "mcp__odd__broken" in seen["names"]
    assert not any(n.startswith(("mcp__broken__", "mcp__missing__")) for n in seen["names"])
    broken_note = next(n for n in notes if "'broken'" in n)
    assert "failed to start" in broken_note and "exited with code 1" in broken_note
    assert "refusing to start" in broken_note
    assert any("'missing'" in n and "No such file" in n for n in notes)

    assert (seen["echo"].llm_text, seen["echo"].display, seen["echo"].error) == (
        "héllo",
        "héllo",
        None,
    )

    big = seen["big"]
    assert big.error is None and big.display == "x" * 499_999
    assert big.artifact is not None and big.artifact.read_bytes() == b"x" * 499_999
    assert f"The full output has been saved to: {big.artifact}" in big.llm_text
    assert len(big.llm_text) < 5_000

    fail = seen["fail"]
    assert fail.error_type == "execution_failed" and fail.error == fail.llm_text
    assert fail.llm_text.startswith(
        "MCP tool 'fail' reported tool error for function call: "
        '{"name":"fail","args":{"message":"nope"}} with response: '
    )
    assert fail.display == "Error: MCP tool 'fail' reported an error."

    assert seen["pic"].llm_text == (
        "[Tool 'pic' provided the following image data with mime-type: image/png]\na tiny picture"
    )
    assert progress == [
        {"type": "mcp_tool_progress", "progress": 1, "total": 3, "message": "step 1"},
        {"type": "mcp_tool_progress", "progress": 2, "total": 3, "message": "step 2"},
        {"type": "mcp_tool_progress", "progress": 3, "total": 3},
    ]
    assert seen["progress"].llm_text == "progress done after 3 steps"

    hang = seen["hang"]
    assert hang.error == "MCP tool 'hang' on server 'hangs' failed: timed out after 1500 ms"
    assert hang.error_type == "timeout" and 1.4 < seen["hang_s"] < 5

    assert seen["malformed"].error_type == "execution_failed"
    assert seen["malformed"].error.startswith(
        "MCP tool 'broken' on server 'odd' failed: the server returned a malformed result"
    )

    flood = seen["flood"]
    assert flood.artifact is not None and flood.artifact.stat().st_size == 20 * 1024 * 1024
    assert (
        hashlib.sha256(flood.artifact.read_bytes()).hexdigest()
        == hashlib.sha256(b"y" * (20 * 1024 * 1024)).hexdigest()
    )
    assert len(flood.display or "") == 20 * 1024 * 1024 and len(flood.llm_text) < 5_000

    assert seen["cancelled"].error_type == "cancelled" and seen["cancelled_s"] < 3

    crash = seen["crash"]
    assert crash.error_type == "execution_failed"
    assert crash.error.startswith(
        "MCP tool 'crash' on server 'bigout' failed: the connection to the server was lost"
    )
    assert "the server exited with code 3" in crash.error
    assert {"name": "bigout", "status": "disconnected"} in seen["after_crash"]
    assert any({"name": "bigout", "status": "disconnected"} in c for c in seen["changes"])
    assert seen["again"].llm_text == "again"
    assert {"name": "bigout", "status": "connected"} in seen["restarted"]

    pids = [int(seen["pid1"].llm_text), int(seen["pid2"].llm_text), seen["stubborn_pid"]]
    assert pids[0] != pids[1]
    assert not any(alive(pid) or is_zombie(pid) for pid in pids), "server processes left behind"
    assert seen["close_s"] < 4  # the stubborn server is killed after the grace periods
    assert all(s["status"] in ("disconnected", "failed") for s in seen["closed"])


def test_connect_timeout_fails_the_server_and_reaps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from headwire.runtime.mcp import stdio as stdio_module
    from headwire.runtime.mcp.client import McpManager

    monkeypatch.setattr(stdio_module, "EXIT_GRACE_S", 0.3)

    cfg = parse_server("slow", stdio("slow-startup"), "test")

    async def scenario() -> tuple[list[dict[str, Any]], int | None, str | None, float]:
        manager = McpManager({"slow": cfg}, connect_timeout_s=1.0, note=lambda _: None)
        started = time.monotonic()
        await manager.start()
        elapsed = time.monotonic() - started
        conn = manager.connections["slow"]
        pid = conn.process.pid if conn.process else None
        await manager.aclose()
        return manager.statuses(), pid, conn.error, elapsed

    statuses, pid, error, elapsed = asyncio.run(scenario())
    assert statuses == [{"name": "slow", "status": "failed"}]
    assert error == "did not connect within 1000 ms"
    assert elapsed < 8
    assert pid is not None and not alive(pid) and not is_zombie(pid)


@pytest.fixture
def http_server() -> Iterator[str]:
    """The fake server over streamable HTTP on 127.0.0.1 (port 0); yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_streamable_http_server(tmp_path: Path, http_server: str) -> None:
    from headwire.runtime.mcp.client import McpManager

    servers = {
        "web": parse_server(
            "web",
            {"httpUrl": http_server, "headers": {"X-Test": "1"}, "timeout": 1000, "trust": True},
            "test",
        ),
        "viaurl": parse_server(
            "viaurl", {"type": "http", "url": http_server, "includeTools": ["echo"]}, "test"
        ),
        "down": parse_server("down", {"httpUrl": "http://127.0.0.1:9/mcp"}, "test"),
    }
    sink = Sink(tmp_path)
    progress: list[dict[str, Any]] = []

    async def scenario() -> dict[str, Any]:
        manager = McpManager(servers, connect_timeout_s=20, note=lambda _: None)
        await manager.start()
        seen: dict[str, Any] = {"statuses": manager.statuses()}
        tools = {t.name: t for t in manager.tools()}
        seen["viaurl_tools"] = sorted(n for n in tools if n.startswith("mcp__viaurl__"))
        ctx = ToolContext(cwd=tmp_path, artifacts=sink, progress=progress.append)
        seen["echo"] = await _run(tools["mcp__viaurl__echo"], {"text": "over http"}, ctx)
        seen["big"] = await _run(tools["mcp__web__big_output"], {"n": 40_000}, ctx)
        seen["progress"] = await _run(tools["mcp__web__progress"], {"steps": 2}, ctx)
        seen["hang"] = await _run(tools["mcp__web__hang"], {}, ctx)
        seen["trusted"] = tools["mcp__web__echo"].needs_approval({}, "default")
        await manager.aclose()
        return seen

    seen = asyncio.run(scenario())
    assert seen["statuses"] == [
        {"name": "web", "status": "connected"},
        {"name": "viaurl", "status": "connected"},
        {"name": "down", "status": "failed"},
    ]
    assert seen["viaurl_tools"] == ["mcp__viaurl__echo"]
    assert seen["echo"].llm_text == "over http"
    big = seen["big"]
    assert big.display == "x" * 40_000 and big.artifact is not None
    assert big.artifact.read_bytes() == b"x" * 40_000
    assert progress == [
        {"type": "mcp_tool_progress", "progress": 1, "total": 2, "message": "step 1"},
        {"type": "mcp_tool_progress", "progress": 2, "total": 2},
    ]
    assert seen["hang"].error == "MCP tool 'hang' on server 'web' failed: timed out after 1000 ms"
    assert seen["trusted"] is False


def test_server_config_is_plain_data() -> None:
    cfg = ServerConfig(name="n", transport="stdio", command="c")
    assert cfg.args == () and cfg.env == {} and cfg.trust is False and cfg.timeout_ms is None
