"""Fuzz the configuration readers: scripted-model scripts, agent files, settings and MCP config.

Each reader takes text or JSON from outside and may fail only with its own error class:

* :func:`headwire.runtime.models.scripted.parse_script` -> :class:`ScriptError`; a parsed
  script is a list of turn objects whose ``tools`` are ``{name: str, args: object}`` and whose
  ``text``/``thinking``/``error`` are strings, and the scripted model plays it without error
  (other than the scripted :class:`ModelError`);
* :func:`headwire.runtime.agents.definitions.parse_agent_file` -> :class:`AgentFileError`, and
  :func:`load_agents` skips bad files (undecodable ones included) with a note;
* MCP: :func:`parse_mcp_config_arg` -> :class:`McpConfigError`; :func:`parse_mcp_servers` and
  :func:`parse_acp_servers` report problems as messages; settings files
  (:func:`headwire.runtime.config.settings.load_settings`) -> :class:`SettingsError`, then
  :func:`load_mcp_servers` -> :class:`McpConfigError`; every accepted server is consistent (a
  stdio server has a command, an HTTP one an http(s) URL, a timeout is a positive integer that
  converts to seconds).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given

from headwire.runtime.agents.definitions import AgentFileError, load_agents, parse_agent_file
from headwire.runtime.config.settings import SettingsError, load_settings
from headwire.runtime.mcp.config import (
    McpConfigError,
    ServerConfig,
    expand_vars,
    load_mcp_servers,
    parse_acp_servers,
    parse_mcp_config_arg,
    parse_mcp_servers,
)
from headwire.runtime.models.base import ModelError, ModelRequest
from headwire.runtime.models.scripted import ScriptedModel, ScriptError, parse_script
from tests.fuzz.common import (
    Chooser,
    dumps,
    from_chooser,
    fuzz_line,
    fuzz_settings,
    interesting_value,
    mutated_bytes,
    nested,
    random_text,
    seeds,
)
from tests.fuzz.drivers import production_recursion_limit


def text_of(data: bytes) -> str:
    """Bytes as the readers get them (files are read as strict UTF-8; the rest replaced)."""
    return data.decode("utf-8", "replace")


# -- scripts ----------------------------------------------------------------------------------


def script_turn(c: Chooser) -> Any:
    """One scripted turn, plausible or odd."""
    turn: dict[str, Any] = {}
    for _ in range(c.integer(0, 3)):
        key = c.pick(("text", "thinking", "error", "tool", "args", "tools", "delay_s", "x"))
        if key == "tools":
            turn[key] = c.pick(
                (
                    [{"name": "read_file", "args": {"path": "a"}}],
                    [{"name": 5}],
                    [{"args": {}}],
                    "x",
                    [],
                    [{"name": "n", "args": []}],
                )
            )
        elif key == "args":
            turn[key] = c.pick(({}, {"a": 1}, [], None))
        elif key == "delay_s":
            turn[key] = c.pick((0, -1, "1", None, 0.0))
        else:
            turn[key] = c.pick((random_text(c), "", None, 5, ["x"], interesting_value(c)))
    return turn


def script_text(c: Chooser) -> str:
    """A script: JSON Lines with comments and blank lines, or one array; or mutated seeds."""
    kind = c.integer(0, 3)
    if kind == 0:
        return text_of(mutated_bytes(c, seeds("script")))
    if kind == 1:
        return text_of(dumps(c, [script_turn(c) for _ in range(c.integer(0, 4))]))
    lines = [
        fuzz_line(c, seeds("script"), script_turn)
        if c.integer(0, 3)
        else c.pick((b"", b"# comment", b"   ", b"  # x"))
        for _ in range(c.integer(0, 6))
    ]
    return text_of(b"\n".join(lines))


@fuzz_settings(300)
@given(from_chooser(script_text))
def test_scripts_parse_or_raise_script_error(text: str) -> None:
    """A script is turns of the documented shape, or a ScriptError; it plays without error."""
    with production_recursion_limit():
        try:
            turns = parse_script(text, "fuzz.jsonl")
        except ScriptError as exc:
            assert str(exc).startswith("fuzz.jsonl")
            return
    for turn in turns:
        assert isinstance(turn, dict) and isinstance(turn["tools"], list)
        for tool in turn["tools"]:
            assert isinstance(tool["name"], str) and isinstance(tool.get("args", {}), dict)
        for key in ("text", "thinking", "error"):
            assert key not in turn or isinstance(turn[key], str)
    asyncio.run(_play([{k: v for k, v in t.items() if k != "delay_s"} for t in turns]))


async def _play(turns: list[dict[str, Any]]) -> None:
    model = ScriptedModel(turns)
    for _ in range(len(turns) + 1):
        try:
            async for _event in model.stream(ModelRequest(model="scripted", messages=[], tools=[])):
                pass
        except ModelError:
            pass


# -- agent files ------------------------------------------------------------------------------


def agent_text(c: Chooser) -> str:
    """A Markdown agent file: front matter of fuzzed lines, or mutated seeds."""
    if not c.integer(0, 3):
        return text_of(mutated_bytes(c, seeds("agent")))
    lines = [c.pick(("---", "--- ", " ---", "-- -"))]
    for _ in range(c.integer(0, 6)):
        key = c.pick(("name", "description", "tools", "model", "", "#", "- "))
        value = c.pick((random_text(c, 4), "reviewer", "[read_file, 'glob']", "a # c", '"q"', ""))
        lines.append(c.pick((f"{key}: {value}", f"{key}:{value}", f"  - {value}", value, "")))
    if c.integer(0, 5):
        lines.append(c.pick(("---", "---  ")))
    lines += [random_text(c) for _ in range(c.integer(0, 3))]
    return c.pick(("\n", "\r\n", "\r", "\u2028")).join(lines)


@fuzz_settings(300)
@given(from_chooser(agent_text))
def test_agent_files_parse_or_raise_agent_file_error(text: str) -> None:
    """An agent file gives a named definition or an AgentFileError naming the file."""
    try:
        agent = parse_agent_file(text, "a.md")
    except AgentFileError as exc:
        assert str(exc).startswith("a.md")
        return
    assert agent.name and isinstance(agent.system_prompt, str)
    assert agent.tools is None or all(isinstance(t, str) and t for t in agent.tools)


@fuzz_settings(30)
@given(
    from_chooser(
        lambda c: [
            mutated_bytes(c, seeds("agent"))
            if c.integer(0, 1)
            else agent_text(c).encode("utf-8", "replace")
            for _ in range(c.integer(1, 3))
        ]
    )
)
def test_load_agents_skips_bad_files(files: list[bytes]) -> None:
    """Loading a folder of fuzzed files never raises; the built-in agent is always there."""
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="headwire-fuzz-agents-") as tmp:
        folder = Path(tmp)
        for index, data in enumerate(files):
            (folder / f"a{index}.md").write_bytes(data)
        agents = load_agents(folder, folder / "missing", notes.append)
    assert "general-purpose" in agents


# -- MCP config -----------------------------------------------------------------------------


def server_entry(c: Chooser) -> Any:
    """One ``mcpServers`` entry."""
    if not c.integer(0, 7):
        return interesting_value(c)
    entry: dict[str, Any] = {}
    for _ in range(c.integer(0, 5)):
        key = c.pick(
            (
                "command",
                "args",
                "env",
                "cwd",
                "httpUrl",
                "url",
                "headers",
                "type",
                "timeout",
                "trust",
                "includeTools",
                "excludeTools",
                "disabled",
            )
        )
        entry[key] = c.pick(
            (
                "node",
                "https://h/mcp",
                "http://x",
                "ftp://x",
                "$HOME/${X:-d}",
                "",
                " ",
                ["a", "$B"],
                {"K": "v", "N": 5},
                {"K": True},
                "stdio",
                "sse",
                "streamable-http",
                "sdk",
                600_000,
                0,
                -1,
                1e300,
                2**1100,
                True,
                None,
                [],
                random_text(c),
                interesting_value(c),
                nested(c),
            )
        )
    return entry


def settings_value(c: Chooser) -> Any:
    """A settings object (``mcpServers`` map), or anything else."""
    if not c.integer(0, 5):
        return interesting_value(c)
    servers = {
        c.pick(("a", "b", "", " ", random_text(c, 2))): server_entry(c)
        for _ in range(c.integer(0, 3))
    }
    return {"mcpServers": servers} if c.integer(0, 4) else servers


def settings_text(c: Chooser) -> bytes:
    """Settings JSON text: generated, mutated seeds, or bytes."""
    return fuzz_line(c, seeds("mcp"), settings_value)


def check_server(server: ServerConfig) -> None:
    """An accepted server is consistent."""
    assert server.transport in ("stdio", "http", "sse")
    if server.transport == "stdio":
        assert isinstance(server.command, str) and server.command.strip()
    else:
        assert server.url is not None and server.url.startswith(("http://", "https://"))
    if server.timeout_ms is not None:
        assert isinstance(server.timeout_ms, int) and server.timeout_ms >= 1
        assert server.timeout_ms / 1000 > 0  # converts to seconds (no OverflowError)
    assert all(isinstance(v, str) for v in (*server.env.values(), *server.headers.values()))


ENV = {"HOME": "/home/u", "X": "x", "B": "$B"}


@fuzz_settings(300)
@given(from_chooser(settings_text))
def test_mcp_config_values_parse_or_raise_mcp_config_error(text: bytes) -> None:
    """``--mcp-config`` JSON text: a settings object and its servers, or McpConfigError."""
    value = text_of(text)
    if not value.strip().startswith("{"):
        value = "{" + value  # the inline form (anything else names a file)
    with production_recursion_limit():
        try:
            data, source = parse_mcp_config_arg(value, Path("/nonexistent"))
        except McpConfigError:
            return
        servers, problems = parse_mcp_servers(data, source, ENV)
    assert all(isinstance(p, str) and p.startswith(source) for p in problems)
    for server in servers.values():
        check_server(server)


def acp_servers(c: Chooser) -> Any:
    """An ACP ``mcpServers`` array: entries with a name and name-value ``env``/``headers``."""
    if not c.integer(0, 9):
        return interesting_value(c)
    servers: list[Any] = []
    for _ in range(c.integer(0, 3)):
        entry = server_entry(c)
        if isinstance(entry, dict):
            entry["name"] = c.pick(("s", "", " ", 5, random_text(c, 2), interesting_value(c)))
            for key in ("env", "headers"):
                if c.integer(0, 1):
                    entry[key] = [
                        c.pick(
                            (
                                {
                                    "name": c.pick(("K", "", interesting_value(c))),
                                    "value": c.pick(("v", 5, None, interesting_value(c))),
                                },
                                "K=v",
                                None,
                                interesting_value(c),
                            )
                        )
                        for _ in range(c.integer(0, 2))
                    ]
        servers.append(entry)
    return servers


@fuzz_settings(80)
@given(from_chooser(acp_servers))
def test_acp_mcp_server_lists_never_raise(acp: Any) -> None:
    """ACP ``mcpServers`` arrays (``env``/``headers`` as name-value pairs) report problems."""
    with production_recursion_limit():
        found, problems = parse_acp_servers(acp, "session/new", ENV)
    assert all(isinstance(p, str) for p in problems)
    for server in found.values():
        check_server(server)


@fuzz_settings(40)
@given(
    from_chooser(
        lambda c: (
            settings_text(c),
            settings_text(c),
            [text_of(settings_text(c)) for _ in range(c.integer(0, 1))],
        )
    )
)
def test_settings_files_never_raise(case: tuple[bytes, bytes, list[str]]) -> None:
    """Broken user and project settings files are SettingsError (one line), a broken server
    entry or ``--mcp-config`` McpConfigError; nothing else escapes."""
    user, project, cli = case
    with tempfile.TemporaryDirectory(prefix="headwire-fuzz-settings-") as tmp:
        home, cwd = Path(tmp, "home"), Path(tmp, "project")
        (cwd / ".headwire").mkdir(parents=True)
        home.mkdir()
        (home / "settings.json").write_bytes(user)
        (cwd / ".headwire" / "settings.json").write_bytes(project)
        values = [v if v.lstrip().startswith("{") else "{" + v for v in cli]
        with production_recursion_limit():
            try:
                sources = load_settings(home, cwd).mcp_sources()
                servers, warnings = load_mcp_servers(sources, cwd, values, ENV)
            except SettingsError as exc:
                assert "\n" not in str(exc) and "\r" not in str(exc)
                return
            except McpConfigError:
                return
    assert all(isinstance(w, str) for w in warnings)
    for server in servers.values():
        check_server(server)


@fuzz_settings(200)
@given(from_chooser(lambda c: random_text(c, 20)))
def test_variable_expansion_never_raises(text: str) -> None:
    """``$VAR``, ``${VAR}``, ``${VAR:-default}``: known names replaced, the rest kept."""
    out = expand_vars(text, ENV)
    assert isinstance(out, str)
    if "$" not in text:
        assert out == text


# -- regressions ------------------------------------------------------------------------------


def test_non_finite_and_huge_timeouts_are_config_errors() -> None:
    """Finding: ``"timeout": NaN`` (JSON text accepted by Python's reader), ``Infinity`` or
    an integer too large for a float raised ValueError/OverflowError instead of a problem."""
    for timeout in ("NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 400):
        data, source = parse_mcp_config_arg(
            f'{{"a":{{"command":"x","timeout":{timeout}}}}}', Path("/")
        )
        servers, problems = parse_mcp_servers(data, source, {})
        assert not servers and "timeout" in problems[0]


def test_deeply_nested_settings_are_reported_not_raised() -> None:
    """Finding: settings text nested past the recursion limit raised RecursionError."""
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    try:
        parse_mcp_config_arg(deep, Path("/"))
    except McpConfigError as exc:
        assert "not valid JSON" in str(exc)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "settings.json").write_text(deep)
        try:
            load_settings(Path(tmp), Path(tmp, "p"))
        except SettingsError as exc:
            assert "not valid JSON" in str(exc)
        else:
            raise AssertionError("deeply nested settings were accepted")


def test_environment_is_not_needed() -> None:
    """The fuzz tests pass their own environment: nothing here reads the real one."""
    assert os.environ.get("HEADWIRE_FUZZ_SENTINEL") is None


def test_deeply_nested_acp_env_names_are_not_a_crash() -> None:
    """Finding: an ACP ``env`` entry whose ``name`` is nested ~1,000 deep overflowed the stack
    in ``str()`` (session/new then failed with -32603 and a traceback)."""
    deep: Any = []
    for _ in range(2000):
        deep = [deep]
    with production_recursion_limit():
        found, problems = parse_acp_servers(
            [{"name": "s", "command": "x", "env": [{"name": deep, "value": "v"}]}],
            "session/new",
            {},
        )
    assert list(found) == ["s"] and not problems


def test_a_deeply_nested_type_is_a_problem_not_a_crash() -> None:
    """Finding: the ``'type' must be one of ...`` message repr()ed a ``type`` nested ~1,000
    deep and overflowed the stack."""
    deep: Any = []
    for _ in range(2000):
        deep = [deep]
    with production_recursion_limit():
        found, problems = parse_acp_servers(
            [{"name": "s", "type": deep, "url": "http://x"}], "session/new", {}
        )
    assert not found and "'type' must be one of" in problems[0]
