"""Starting a session's MCP servers and handing their tools to an :class:`Agent`.

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
    from headwire.runtime.agent import Agent
    from headwire.runtime.mcp.client import McpManager

__all__ = ["McpConfigError", "attach_to_agent", "connect_timeout_s", "start_mcp"]


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
    data_dir: Path,
    cwd: Path,
    cli_values: Sequence[str] | None,
    *,
    debug: bool = False,
    version: str = "0",
    env: Mapping[str, str] | None = None,
    trust_project: bool = False,
) -> McpManager | None:
    """Load the configuration and connect every server; ``None`` when none is configured.

    Raises :class:`McpConfigError` for a broken ``--mcp-config``; problems in the settings
    files are noted on stderr and the entry skipped.  The project's own servers start only
    when ``trust_project``.
    """
    servers, warnings = load_mcp_servers(
        data_dir, cwd, cli_values, env, trust_project=trust_project
    )
    for problem in warnings:
        warn(f"headwire: MCP settings skipped: {problem}")
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


def attach_to_agent(agent: Agent, manager: McpManager, exclude: Iterable[str] = ()) -> None:
    """Add the manager's tools (after ``--exclude-tools``; built-ins keep their names) and keep
    ``agent.config.mcp_servers`` equal to the live statuses."""
    for tool in select_tools(manager.tools(), None, list(exclude) or None):
        agent.tools.setdefault(tool.name, tool)

    def refresh() -> None:
        statuses: list[dict[str, Any]] = manager.statuses()
        agent.config.mcp_servers = statuses

    refresh()
    manager.on_status_change = refresh
