"""MCP server settings: the ``mcpServers`` map, as Qwen Code and Claude Code spell it.

Sources, merged in this order (a later source wins per server name):

1. the settings layers (user ``settings.json``, project ``.headwire/settings.json``,
   ``--settings``), read and validated by :mod:`headwire.runtime.config.settings` (a project's
   servers only in a trusted folder, :mod:`headwire.runtime.trust`; their ``$VAR`` never expand
   headwire's credentials);
2. each ``--mcp-config`` value, a JSON text or a file path, in the order given.

One entry::

    "name": {"command": "...", "args": [...], "env": {...}, "cwd": "...",       # stdio
             "httpUrl" | "url": "https://...", "headers": {...},               # HTTP
             "type": "stdio" | "http" | "streamable-http" | "sse",             # Claude's spelling
             "timeout": 600000, "trust": false,                                # ms; approvals
             "includeTools": [...], "excludeTools": [...], "disabled": false}

(``"type": "sdk"`` entries, the Claude SDK's in-process servers, are skipped with a note.)

Without ``type``: ``httpUrl`` is streamable HTTP, ``url`` is streamable HTTP that falls back to
SSE when the endpoint does not speak it (Qwen Code reads ``url`` as SSE), ``command`` is
stdio.  ``$VAR``, ``${VAR}`` and ``${VAR:-default}`` in strings are replaced from the
environment (unknown variables are left as written).  Unknown keys are ignored.

Parsing is pure (:func:`parse_mcp_servers`, :func:`parse_server`); only ``--mcp-config`` file
paths are read here.  Every problem is one line naming the source and the server.
"""

from __future__ import annotations

import json
import os
import re
import reprlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from headwire.errors import ConfigError
from headwire.records import dataclass, field
from headwire.runtime.environment import credential_environment, tool_environment

TransportKind = Literal["stdio", "http", "sse"]
DEFAULT_TIMEOUT_MS = 600_000
"""Upstream's per-call default (10 minutes)."""
_MAX_MS = sys.float_info.max
"""Largest ``timeout`` accepted (NaN, infinity and larger integers cannot become seconds)."""

_TYPES: dict[str, TransportKind] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class McpConfigError(ConfigError):
    """An MCP configuration that cannot be used; the message names the source and server."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One configured MCP server."""

    name: str
    transport: TransportKind
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout_ms: int | None = None
    trust: bool = False
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    sse_fallback: bool = False
    source: str = "<config>"


def expand_vars(text: str, env: Mapping[str, str]) -> str:
    """Replace ``$VAR``, ``${VAR}`` and ``${VAR:-default}`` from ``env``."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        if name in env:
            return env[name]
        if match.group(2) is not None:
            return match.group(2)
        return match.group(0)

    return _VAR.sub(sub, text) if "$" in text else text


class _Problem(ConfigError):
    """One validation failure inside an entry (turned into a McpConfigError with context)."""


def _string(raw: dict[str, Any], key: str, env: Mapping[str, str]) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _Problem(f"'{key}' must be a non-empty string")
    return expand_vars(value, env)


def _strings(raw: dict[str, Any], key: str, env: Mapping[str, str]) -> tuple[str, ...] | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Problem(f"'{key}' must be a list of strings")
    return tuple(expand_vars(v, env) for v in value)


def _mapping(raw: dict[str, Any], key: str, env: Mapping[str, str]) -> dict[str, str]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, (str, int, float)) and not isinstance(v, bool)
        for k, v in value.items()
    ):
        raise _Problem(f"'{key}' must be an object of string values")
    return {k: expand_vars(str(v), env) for k, v in value.items()}


def _timeout(raw: dict[str, Any]) -> int | None:
    value = raw.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= _MAX_MS:
        raise _Problem("'timeout' must be a positive number of milliseconds")
    return max(1, round(value))


def _transport(
    raw: dict[str, Any], url: str | None, command: str | None
) -> tuple[TransportKind, bool]:
    kind = raw.get("type")
    if kind is not None:
        if not isinstance(kind, str) or kind not in _TYPES:
            raise _Problem(
                f"'type' must be one of {', '.join(sorted(set(_TYPES)))}; got {reprlib.repr(kind)}"
            )  # reprlib: kind may be nested ~1,000 deep
        return _TYPES[kind], False
    if raw.get("httpUrl") is not None:
        return "http", False
    if url is not None:
        return "http", True
    if command is not None:
        return "stdio", False
    raise _Problem("needs 'command' (stdio) or 'httpUrl' / 'url' (HTTP)")


def parse_server(
    name: str, raw: Any, source: str, env: Mapping[str, str] | None = None
) -> ServerConfig:
    """Validate one ``mcpServers`` entry; raises :class:`McpConfigError`."""
    env = credential_environment() if env is None else env
    try:
        if not isinstance(raw, dict):
            raise _Problem("must be an object")
        command = _string(raw, "command", env)
        url = _string(raw, "httpUrl", env) or _string(raw, "url", env)
        kind, fallback = _transport(raw, url, command)
        if kind == "stdio" and command is None:
            raise _Problem("a stdio server needs 'command'")
        if kind != "stdio":
            if url is None:
                raise _Problem(f"an {kind.upper()} server needs 'url' or 'httpUrl'")
            if not url.startswith(("http://", "https://")):
                raise _Problem(f"'url' must start with http:// or https://; got {url!r}")
        trust = raw.get("trust", False)
        if not isinstance(trust, bool):
            raise _Problem("'trust' must be true or false")
        return ServerConfig(
            name=name,
            transport=kind,
            command=command if kind == "stdio" else None,
            args=_strings(raw, "args", env) or (),
            env=_mapping(raw, "env", env),
            cwd=_string(raw, "cwd", env),
            url=url if kind != "stdio" else None,
            headers=_mapping(raw, "headers", env),
            timeout_ms=_timeout(raw),
            trust=trust,
            include_tools=_strings(raw, "includeTools", env),
            exclude_tools=_strings(raw, "excludeTools", env) or (),
            sse_fallback=fallback,
            source=source,
        )
    except _Problem as exc:
        raise McpConfigError(f"{source}: mcpServers.{name}: {exc}") from None


def parse_mcp_servers(
    data: Any, source: str, env: Mapping[str, str] | None = None
) -> tuple[dict[str, ServerConfig], list[str]]:
    """The valid servers of a settings object, and one message per invalid entry."""
    if not isinstance(data, dict):
        return {}, [f"{source}: expected a JSON object"]
    servers = data.get("mcpServers")
    if servers is None:
        return {}, []
    if not isinstance(servers, dict):
        return {}, [f"{source}: 'mcpServers' must be an object of servers"]
    found: dict[str, ServerConfig] = {}
    problems: list[str] = []
    for name, raw in servers.items():
        if not name.strip():
            problems.append(f"{source}: mcpServers: a server name must not be empty")
            continue
        if isinstance(raw, dict) and (raw.get("disabled") is True or raw.get("type") == "sdk"):
            continue
        try:
            found[name] = parse_server(name, raw, source, env)
        except McpConfigError as exc:
            problems.append(str(exc))
    return found, problems


def disabled_servers(data: Any) -> set[str]:
    """Names a settings object turns off with ``"disabled": true`` (removed from the merge)."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return set()
    return {
        name
        for name, raw in servers.items()
        if isinstance(raw, dict) and raw.get("disabled") is True
    }


def sdk_servers(data: Any) -> list[str]:
    """Names of Claude SDK in-process servers (``"type": "sdk"``), which cannot be reached
    from here; they are skipped with a note instead of failing the run."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return []
    return [
        name for name, raw in servers.items() if isinstance(raw, dict) and raw.get("type") == "sdk"
    ]


def _pairs(raw: Any, key: str) -> dict[str, Any]:
    """ACP's ``[{"name", "value"}]`` lists as a mapping (left as is when not a list)."""
    value = raw.get(key)
    if not isinstance(value, list):
        return {} if value is None else {"": value}
    # reprlib, not str(): a name nested ~1,000 deep must not overflow the stack
    return {_name(item.get("name")): item.get("value") for item in value if isinstance(item, dict)}


def _name(name: Any) -> str:
    return name if isinstance(name, str) else reprlib.repr(name)


def parse_acp_servers(
    servers: Any, source: str = "session/new", env: Mapping[str, str] | None = None
) -> tuple[dict[str, ServerConfig], list[str]]:
    """An ACP ``mcpServers`` array (``{name, command, args, env: [{name, value}]}`` or
    ``{type: "http" | "sse", name, url, headers: [{name, value}]}``) as configured servers."""
    if not isinstance(servers, list):
        return {}, [f"{source}: 'mcpServers' must be an array"]
    entries: dict[str, Any] = {}
    problems: list[str] = []
    for raw in servers:
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name.strip():
            problems.append(f"{source}: mcpServers: every server needs a name")
            continue
        entry = {k: v for k, v in raw.items() if k not in ("name", "env", "headers")}
        entry["env"], entry["headers"] = _pairs(raw, "env"), _pairs(raw, "headers")
        entries[name] = entry
    found, more = parse_mcp_servers({"mcpServers": entries}, source, env)
    return found, problems + more


def parse_mcp_config_arg(value: str, cwd: Path) -> tuple[Any, str]:
    """An ``--mcp-config`` value (JSON text, or a file path relative to ``cwd``) as
    ``(settings object, source name)``; a bare server map is wrapped in ``mcpServers``."""
    text = value.strip()
    if text.startswith("{"):
        source = "--mcp-config"
    else:
        path = Path(os.path.expanduser(text))
        path = path if path.is_absolute() else cwd / path
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise McpConfigError(f"--mcp-config: cannot read {path}: {exc}") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise McpConfigError(f"{source}: not valid JSON: {exc}") from None
    if isinstance(data, dict) and "mcpServers" not in data:
        data = {"mcpServers": data}
    return data, source


def load_mcp_servers(
    settings_sources: Sequence[tuple[str, Any]],
    cwd: Path,
    cli_values: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, ServerConfig], list[str]]:
    """Merge the settings layers' ``mcpServers`` and the ``--mcp-config`` values.

    ``settings_sources`` are ``(source, settings object)`` pairs in merge order, as
    :meth:`headwire.runtime.config.settings.Settings.mcp_sources` gives them (the files are read and
    validated there, and an untrusted project's servers already left out).  ``$VAR`` in the
    project's own file never expands headwire's credentials.  Returns the servers and notes
    about entries that were skipped (in-process SDK servers); a broken entry raises
    :class:`McpConfigError` naming its source.
    """
    env = credential_environment() if env is None else env
    servers: dict[str, ServerConfig] = {}
    warnings: list[str] = []
    sources: list[tuple[str, Any]] = list(settings_sources)
    for value in cli_values or ():
        data, source = parse_mcp_config_arg(value, cwd)
        sources.append((source, data))
    project_file = os.path.realpath(cwd / ".headwire" / "settings.json")
    for source, data in sources:
        is_project = os.path.realpath(source) == project_file
        found, problems = parse_mcp_servers(
            data, source, tool_environment(env) if is_project else env
        )
        if problems:
            raise McpConfigError("; ".join(problems))
        warnings += [
            f"{source}: mcpServers.{name}: in-process SDK servers are not supported"
            for name in sdk_servers(data)
        ]
        for name in disabled_servers(data):
            servers.pop(name, None)
        servers.update(found)
    return servers, warnings
