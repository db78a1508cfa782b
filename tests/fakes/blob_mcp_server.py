#!/usr/bin/env python3
"""A minimal stdio MCP server (``benchmarks/memory.py``, ``tests/faults/test_memory_shape.py``):
one tool, ``blob``, whose result is
built once and written as one line.

``MCP_BLOB_BLOCKS`` text blocks of ``MCP_BLOB_BLOCK_BYTES`` ASCII bytes each (every text
distinct, so no parser can share them), written by hand so that the server itself stays
small; ``MCP_BLOB_BLOCKS=1`` gives one block, i.e. one long line of text.
"""

import json
import os
import sys


def _reply(msg_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


def _blob_line(msg_id: object) -> bytes:
    count = int(os.environ.get("MCP_BLOB_BLOCKS", "1000"))
    size = int(os.environ.get("MCP_BLOB_BLOCK_BYTES", "100"))
    filler = b"abcdefghijklmnopqrstuvwxyz0123456789 " * (size // 37 + 1)
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg_id).encode() + b',"result":{"content":['
    out = sys.stdout.buffer
    out.write(head)
    for i in range(count):
        tag = b"%09d " % i
        text = (tag + filler)[:size]
        out.write((b"," if i else b"") + b'{"type":"text","text":"' + text + b'"}')
    out.write(b"]}}\n")
    out.flush()
    return b""


def main() -> None:
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
                    "serverInfo": {"name": "blob", "version": "1"},
                },
            )
        elif method == "tools/list":
            schema = {"type": "object", "properties": {}}
            _reply(msg_id, {"tools": [{"name": "blob", "description": "d", "inputSchema": schema}]})
        elif method == "tools/call":
            _blob_line(msg_id)
        else:
            error = {"code": -32601, "message": "no such method"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
