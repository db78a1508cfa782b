"""Starting a session's MCP servers and handing over their tools.

The SDK is imported only when at least one server is configured, so a run without MCP pays
nothing.  The connect timeout is 30 s, or ``MCP_TIMEOUT`` (milliseconds, Claude Code's
variable) when set.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headwire.io.stdio import warn
from headwire.runtime.mcp.config import McpConfigError, load_mcp_servers
from headwire.runtime.tools.registry import select_tools

if TYPE_CHECKING:
    from headwire.runtime.mcp.client import McpManager
    from headwire.runtime.tools.base import Tool

__all__ = ["McpConfigError", "connect_timeout_s", "mcp_tools", "start_acp_mcp", "start_mcp"]


def connect_timeout_s(env: Mapping[str, str] | None = None) -> float:
    """``MCP_TIMEOUT`` (ms) as seconds, else the default 30 s."""
    env = os.environ if env is None else env
    raw = env.get("MCP_TIMEOUT", "").strip()
    try:
        value = float(raw) / 1000 if raw else 30.0
    except ValueError:
        value = 30.0
    return value if value > 0 else 30.0


async def start_mcp(
    settings_sources: Sequence[tuple[str, Any]],
    cwd: Path,
    cli_values: Sequence[str] | None,
    *,
    debug: bool = False,
    version: str = "0",
    env: Mapping[str, str] | None = None,
) -> McpManager | None:
    """Load the configuration and connect every server; ``None`` when none is configured.

    ``settings_sources`` are the settings layers' ``(source, object)`` pairs
    (:meth:`headwire.runtime.config.settings.Settings.mcp_sources`).  Raises :class:`McpConfigError`
    for a broken entry of any source; skipped entries are noted on stderr.
    """
    servers, warnings = load_mcp_servers(settings_sources, cwd, cli_values, env)
    for problem in warnings:
        warn(f"headwire: MCP server skipped: {problem}")
    if not servers:
        return None
    from headwire.runtime.mcp.client import McpManager

    manager = McpManager(
        servers, version=version, debug=debug, connect_timeout_s=connect_timeout_s(env)
    )
    try:
        await manager.start()
    except BaseException:
        await manager.aclose()
        raise
    return manager


async def start_acp_mcp(servers: list[dict[str, Any]], *, version: str = "0") -> McpManager:
    """Connect the ``mcpServers`` an ACP client sent with ``session/new`` / ``session/load``
    (entries that cannot be used are noted on stderr and skipped)."""
    from headwire.runtime.mcp.client import McpManager
    from headwire.runtime.mcp.config import parse_acp_servers

    configs, problems = parse_acp_servers(servers)
    for problem in problems:
        warn(f"headwire: MCP server skipped: {problem}")
    manager = McpManager(configs, version=version, connect_timeout_s=connect_timeout_s())
    try:
        await manager.start()
    except BaseException:
        await manager.aclose()
        raise
    return manager


def mcp_tools(manager: McpManager, exclude: Iterable[str] = ()) -> list[Tool]:
    """The manager's tools after ``--exclude-tools``."""
    return list(select_tools(manager.tools(), None, list(exclude) or None))
