#!/usr/bin/env python3
"""A hand-written stdio MCP server that misbehaves (stdlib only, so it starts in milliseconds).

Tools: ``flood`` (a 20 MiB text result), ``spam`` (writes ``mib`` MiB to stderr, then
answers), ``pid`` (this process's id), ``sleep`` (answers after ``seconds``).

Modes (first argument): ``noisy`` (default) serves until stdin closes; ``stubborn`` also
ignores SIGTERM and, once stdin closes, lives on until SIGKILL.  ``NOISY_STARTUP_MIB=N``
writes N MiB to stderr before it reads its first message.
"""

import json
import os
import signal
import sys
import time
from typing import Any

FLOOD_BYTES = 20 * 1024 * 1024
LINE = b"spam " * 200 + b"\n"
MIB_OF_LINES = LINE * ((1 << 20) // len(LINE))
TOOLS = [
    {
        "name": "flood",
        "description": "Return 20 MiB of text.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "spam",
        "description": "Write mib MiB to stderr, then answer.",
        "inputSchema": {"type": "object", "properties": {"mib": {"type": "integer"}}},
    },
    {
        "name": "pid",
        "description": "Return this server's process id.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "sleep",
        "description": "Answer after some seconds.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
]


def spam(mib: int) -> None:
    """Write ``mib`` MiB of text to stderr."""
    for _ in range(mib):
        sys.stderr.buffer.write(MIB_OF_LINES)
    sys.stderr.buffer.flush()


def send(message: dict[str, Any]) -> None:
    """One JSON-RPC line on stdout."""
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def call(name: str, args: dict[str, Any]) -> str:
    """Run a tool; its text result."""
    if name == "flood":
        return "y" * FLOOD_BYTES
    if name == "spam":
        mib = int(args.get("mib", 64))
        spam(mib)
        return f"wrote {mib} MiB to stderr"
    if name == "sleep":
        time.sleep(float(args.get("seconds", 30)))
        return "slept"
    return str(os.getpid())


def serve() -> None:
    """Answer requests until stdin closes."""
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        msg_id, method = message.get("id"), message.get("method")
        if msg_id is None or method is None:
            continue  # a notification, or an answer to a request of ours
        params = message.get("params") or {}
        if method == "initialize":
            result: Any = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "noisy", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            text = call(params.get("name", ""), params.get("arguments") or {})
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": method}})
            continue
        send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def main(argv: list[str]) -> None:
    """Run in the mode named by ``argv[0]``."""
    stubborn = bool(argv) and argv[0] == "stubborn"
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    spam(int(os.environ.get("NOISY_STARTUP_MIB", "0")))
    serve()
    while stubborn:  # stdin closed: keep living until SIGKILL
        time.sleep(1)


if __name__ == "__main__":
    main(sys.argv[1:])
