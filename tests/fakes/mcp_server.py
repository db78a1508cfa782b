#!/usr/bin/env python3
"""A real MCP server for the tests (official ``mcp`` SDK), over stdio or streamable HTTP.

Tools: ``big_output`` (``n`` ASCII bytes, default 499,999, like the oracle's server),
``echo``, ``fail`` (an ``isError`` result), ``crash`` (the process exits mid-call), ``hang``
(never answers), ``progress`` (progress notifications, then a text), ``flood`` (20 MB),
``pic`` (an image block plus text) and ``pid`` (this process's id).

Modes (first argument):

* ``stdio`` (default): serve on stdin/stdout;
* ``http``: bind ``127.0.0.1:0``, print ``PORT <n>`` on stdout, serve ``/mcp``;
* ``fail-startup``: write a note to stderr and exit 1 before speaking MCP;
* ``malformed``: a hand-written JSON-RPC loop whose ``tools/call`` result is not a
  ``CallToolResult`` (``content`` is a string);
* ``schema``: the same loop listing the tools of ``$FAKE_MCP_SCHEMAS`` (``{"name": schema}``)
  with exactly those input schemas, each call answering ``called NAME``;
* ``stubborn``: like ``stdio`` but ignores SIGTERM and stdin EOF (so shutdown must kill it);
* ``raw-text``: a hand-written JSON-RPC loop (the SDK server cannot write these) whose tools
  answer text Node's client accepts: ``lone`` (a ``\\ud800`` escape), ``latin1`` (a byte that
  is not UTF-8), ``echo`` (the ``text`` argument as received) and ``broken`` (a line that is
  not JSON at all, with the call's id in it).
"""

import json
import os
import signal
import socket
import sys
import time
from typing import Any

FLOOD_BYTES = 20 * 1024 * 1024
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def build_server() -> Any:
    """The SDK server with every tool (the SDK is imported here: modes that do not speak
    through it start without paying for the import)."""
    from mcp.server.mcpserver import Context, Image, MCPServer

    server = MCPServer(os.environ.get("FAKE_MCP_NAME", "bigout"))

    @server.tool(description="Return a large block of text.", structured_output=False)
    def big_output(n: int = 499_999) -> str:
        """``n`` ASCII bytes."""
        return "x" * n

    @server.tool(description="Echo the text back.", structured_output=False)
    def echo(text: str) -> str:
        """The text itself."""
        return text

    @server.tool(description="Always fails.", structured_output=False)
    def fail(message: str = "boom") -> str:
        """Raise, which the SDK turns into an ``isError`` result."""
        raise ValueError(message)

    @server.tool(
        description="Exit the server process in the middle of the call.", structured_output=False
    )
    def crash() -> str:
        """Die without answering."""
        os._exit(3)

    @server.tool(description="Never answer.", structured_output=False)
    async def hang() -> str:
        """Sleep for an hour."""
        import anyio

        await anyio.sleep(3600)
        return "woke up"

    @server.tool(description="Report progress, then answer.", structured_output=False)
    async def progress(ctx: Context, steps: int = 3) -> str:  # type: ignore[type-arg]
        """``steps`` progress notifications (the last without a message)."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}" if i < steps else None)
        return f"progress done after {steps} steps"

    @server.tool(description="Return 20 MB of text.", structured_output=False)
    def flood() -> str:
        """20 MiB of ``y``."""
        return "y" * FLOOD_BYTES

    @server.tool(description="Return an image and a caption.", structured_output=False)
    def pic() -> list[Any]:
        """An image block then a text block."""
        return [Image(data=PNG_1X1, format="png"), "a tiny picture"]

    @server.tool(description="Return this server's process id.", structured_output=False)
    def pid() -> str:
        """The pid, as text."""
        return str(os.getpid())

    return server


# ---------------------------------------------------------------------------------------------


def _serve_http() -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sys.stdout.write(f"PORT {sock.getsockname()[1]}\n")
    sys.stdout.flush()
    app = build_server().streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])


def _reply(msg_id: Any, result: Any) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


def _serve_malformed(schemas: dict[str, Any] | None = None) -> None:
    """Just enough JSON-RPC to connect and list one tool whose results are malformed; with
    ``schemas`` (mode ``schema``), one tool per entry with that ``inputSchema`` whose calls
    answer ``called NAME``."""
    tools = [
        {"name": name, "description": "A tool with a given schema.", "inputSchema": schema}
        for name, schema in (schemas or {}).items()
    ] or [
        {
            "name": "broken",
            "description": "Returns a malformed result.",
            "inputSchema": {"type": "object", "properties": {}},
        }
    ]
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, msg_id = msg.get("method"), msg.get("id")
        if msg_id is None:
            continue
        if method == "initialize":
            _reply(
                msg_id,
                {
                    "protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "malformed", "version": "1"},
                },
            )
        elif method == "tools/list":
            _reply(msg_id, {"tools": tools})
        elif method == "tools/call" and schemas:
            name = msg["params"]["name"]
            _reply(msg_id, {"content": [{"type": "text", "text": f"called {name}"}]})
        elif method == "tools/call":
            _reply(msg_id, {"content": "this should have been a list", "isError": "maybe"})
        else:
            sys.stdout.write(
                json.dumps(
                    {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "no"}}
                )
                + "\n"
            )
            sys.stdout.flush()


def _serve_raw_text() -> None:
    """The ``raw-text`` mode: each tool answer written byte by byte."""
    names = ("lone", "latin1", "echo", "broken")
    tools = [
        {"name": n, "description": n, "inputSchema": {"type": "object", "properties": {}}}
        for n in names
    ]
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, msg_id = msg.get("method"), msg.get("id")
        if msg_id is None:
            continue
        if method == "initialize":
            info = {"name": "raw-text", "version": "1"}
            version = msg["params"]["protocolVersion"]
            _reply(
                msg_id,
                {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            )
            continue
        if method == "tools/list":
            _reply(msg_id, {"tools": tools})
            continue
        name = msg.get("params", {}).get("name")
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg_id).encode()
        if name == "lone":
            text = b'"lone \\ud800 surrogate"'
        elif name == "latin1":
            text = b'"caf\xe9 au lait"'
        elif name == "broken":
            out.write(head + b',"result":{"content":[{"type":"text","text":"cut\n')
            out.flush()
            continue
        else:
            text = json.dumps(msg["params"].get("arguments", {}).get("text", "")).encode()
        out.write(head + b',"result":{"content":[{"type":"text","text":' + text + b"}]}}\n")
        out.flush()


def main(argv: list[str]) -> None:
    """Run in the mode named by ``argv[0]``."""
    mode = argv[0] if argv else "stdio"
    if mode == "fail-startup":
        sys.stderr.write("fake mcp server: refusing to start\n")
        sys.exit(1)
    if mode == "malformed":
        _serve_malformed()
        return
    if mode == "schema":  # FAKE_MCP_SCHEMAS: {"tool name": inputSchema, ...}
        _serve_malformed(json.loads(os.environ["FAKE_MCP_SCHEMAS"]))
    if mode == "raw-text":
        _serve_raw_text()
        return
    if mode == "http":
        _serve_http()
        return
    if mode == "slow-startup":
        time.sleep(float(os.environ.get("FAKE_MCP_DELAY", "30")))
    server = build_server()
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        server.run("stdio")
        while True:  # stdin closed: keep living until SIGKILL
            time.sleep(1)
    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
