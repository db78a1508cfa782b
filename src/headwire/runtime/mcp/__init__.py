"""MCP (Model Context Protocol) servers as tool providers.

* :mod:`.config` parses and merges the ``mcpServers`` settings (pure functions plus a loader);
* :mod:`.client` connects the servers (official ``mcp`` SDK) and owns their lifetimes;
* :mod:`.tool` wraps one server tool as a headwire :class:`~headwire.runtime.tools.base.Tool`;
* :mod:`.results` turns a ``CallToolResult`` into model text and display (upstream's rules);
* :mod:`.stdio` is the stdio transport (line framing that stays linear on huge messages).

Its face, what other packages may import: the names below (from :mod:`.config`), and the
modules :mod:`.config` and :mod:`.setup` (servers started for a session); the rest is private.

Importing this package is cheap: the SDK (about two seconds to import) is loaded only when a
manager actually connects a server.
"""

from __future__ import annotations

from headwire.runtime.mcp.config import (
    McpConfigError,
    ServerConfig,
    load_mcp_servers,
    parse_mcp_config_arg,
    parse_mcp_servers,
)

__all__ = [  # noqa: RUF022 (names, then the public modules)
    "McpConfigError",
    "ServerConfig",
    "load_mcp_servers",
    "parse_mcp_config_arg",
    "parse_mcp_servers",
    "config",
    "setup",
]
