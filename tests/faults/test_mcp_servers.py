"""MCP servers that misbehave: a 20 MiB result, stderr floods, a server that will not exit.

One session with two stdio servers (``tests/faults/noisy_mcp_server.py``): ``noisy`` writes
16 MiB to stderr before it speaks MCP, returns a 20 MiB result (``flood``) and writes 64 MiB
more to stderr in a call (``spam``); ``stubborn`` does the same and ignores both stdin EOF and
SIGTERM.  The session answers, the flood reaches the
wire bounded, the server's stderr is drained but neither echoed nor kept (only its last 8 KiB),
the peak RSS of headwire stays bounded, and at exit both servers are gone (the stubborn one
by SIGKILL after the grace periods).
"""

from __future__ import annotations

import time
from pathlib import Path

from headwire.wire import encode
from tests.e2e.helpers import write_script
from tests.faults.util import (
    NOISY_SERVER,
    alive,
    artifacts_of,
    mcp_config,
    no_traceback,
    start,
    wait_until,
)

FLOOD_BYTES = 20 * 1024 * 1024
PEAK_RSS_LIMIT_MB = 300
"""About 70 MiB at rest with MCP loaded, 170 MiB measured here: the 20 MiB result is held a few
times over (the JSON-RPC line, the parsed text, the artifact bytes, the recorded display), the
96 MiB of stderr never."""


def test_flooding_and_stubborn_servers(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.jsonl",
        [
            {"tool": "mcp__noisy__flood", "args": {}},
            {"tool": "mcp__noisy__spam", "args": {"mib": 64}},
            {
                "tools": [
                    {"name": "mcp__noisy__pid", "args": {}},
                    {"name": "mcp__stubborn__pid", "args": {}},
                ]
            },
            {"text": "done"},
        ],
    )
    config = mcp_config(noisy=[str(NOISY_SERVER)], stubborn=[str(NOISY_SERVER), "stubborn"])
    cli = start(
        [
            "--script",
            str(script),
            "--yolo",
            "-o",
            "stream-json",
            "--mcp-config",
            config,
            "-p",
            "go",
        ],
        tmp_path,
        env={"NOISY_STARTUP_MIB": "16"},
    )
    wait_until(lambda: b'{"type":"result"' in cli.out, "the result", timeout=60)
    answered = time.monotonic()
    assert cli.wait(timeout=30) == 0, cli.stderr
    shutdown = time.monotonic() - answered
    assert 3.5 <= shutdown < 15  # stdin closed, 2 s, SIGTERM (ignored), 2 s, SIGKILL
    no_traceback(cli.stderr)
    assert "spam" not in cli.stderr and len(cli.err) < 4096  # drained, not echoed

    messages = cli.stdout_lines()
    assert messages[0]["mcp_servers"] == [
        {"name": "noisy", "status": "connected"},
        {"name": "stubborn", "status": "connected"},
    ]
    flood, spam, noisy_pid, stubborn_pid = [
        block for m in messages if m["type"] == "user" for block in m["message"]["content"]
    ]
    assert flood["is_error"] is False
    assert len(encode(flood["content"])) == 65_536  # the 20 MiB display, bounded on the wire
    assert spam["content"] == "wrote 64 MiB to stderr"
    assert messages[-1]["result"] == "done"
    (artifact,) = artifacts_of(cli.home)
    assert artifact.stat().st_size == FLOOD_BYTES

    pids = [int(noisy_pid["content"]), int(stubborn_pid["content"])]
    assert [pid for pid in pids if alive(pid)] == []
    assert cli.peak_rss_mb() < PEAK_RSS_LIMIT_MB, f"peak RSS {cli.peak_rss_mb():.0f} MiB"
    print(f"peak RSS {cli.peak_rss_mb():.0f} MiB, shutdown {shutdown:.1f} s")
