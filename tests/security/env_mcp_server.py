#!/usr/bin/env python3
"""A stdio MCP server with one tool, ``environ``: its own environment as JSON (for the tests of
what headwire passes to MCP servers)."""

import json
import os


def main() -> None:
    """Serve on stdin/stdout."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("envsrv")

    @server.tool(description="Return this process's environment as JSON.", structured_output=False)
    def environ() -> str:
        """``os.environ`` as a JSON object."""
        return json.dumps(dict(os.environ))

    server.run("stdio")


if __name__ == "__main__":
    main()
