"""Memory follows the size of a tool's output, not its shape (issue 11, item 6).

Findings: an MCP result of 18.7 MB in 374,000 small text blocks peaked at 944 MB (the SDK's
parser and one model per block), and 64 MiB of binary shell output at 915 MB (decoded into a
string of up to four bytes per byte, then copied).  Each test runs the CLI twice, with a
tiny output and with a few MB of it in the bad shape, and bounds the difference of the two
peak RSS (``VmHWM`` of the CLI alone) by a small multiple of the raw output.  The full-size
numbers are ``benchmarks/memory.py``'s.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import write_script
from tests.faults.util import start

BLOB_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "blob_mcp_server.py"
MB = 1 << 20


def peak_mb(
    tmp: Path, turn: dict[str, object], *args: str, env: dict[str, str] | None = None
) -> float:
    """The CLI's own peak RSS (MiB) for one scripted tool call in stream-json mode."""
    tmp.mkdir(parents=True, exist_ok=True)
    script = write_script(tmp / "script.jsonl", [turn, {"text": "done"}])
    cli = start(
        ["--script", str(script), "--yolo", "-o", "stream-json", *args, "-p", "go"], tmp, env=env
    )
    assert cli.wait(timeout=120) == 0, cli.stderr
    assert cli.stdout_lines()[-1]["is_error"] is False
    return cli.peak_rss_mb()


def mcp_peak(tmp: Path, blocks: int, block_bytes: int) -> float:
    server_env = {"MCP_BLOB_BLOCKS": str(blocks), "MCP_BLOB_BLOCK_BYTES": str(block_bytes)}
    config = {
        "mcpServers": {
            "blob": {"command": sys.executable, "args": [str(BLOB_SERVER)], "env": server_env}
        }
    }
    turn = {"tool": "mcp__blob__blob", "args": {}}
    return peak_mb(tmp, turn, "--mcp-config", json.dumps(config))


def test_many_small_mcp_blocks_cost_their_bytes(tmp_path: Path) -> None:
    blocks, size = 100_000, 50  # 5 MB of text, a 7.5 MB response line
    raw_mb = (blocks * (size + 26)) / MB
    control = mcp_peak(tmp_path / "one", 1, size)
    peak = mcp_peak(tmp_path / "many", blocks, size)
    assert peak - control <= 4 * raw_mb + 10, (
        f"{blocks} blocks of {size} bytes ({raw_mb:.1f} MB raw): peak RSS {peak:.0f} MiB, "
        f"{peak - control:.0f} MiB over one block"
    )


def test_one_long_mcp_text_costs_twice_its_bytes(tmp_path: Path) -> None:
    """One text block of 32 MB: the parser's copy of the line (orjson's, the SDK's) made it
    three times the line; the line is now read without it and freed before the text is
    joined, and the artifact and the recording are written in pieces (twice the line)."""
    size = 32 * MB
    control = mcp_peak(tmp_path / "one", 1, 50)
    peak = mcp_peak(tmp_path / "long", 1, size)
    assert peak - control <= 2.4 * size / MB + 10, (
        f"one text block of {size // MB} MB: peak RSS {peak:.0f} MiB, "
        f"{peak - control:.0f} MiB over a short one"
    )


@pytest.mark.parametrize("kind", ["binary", "random"])
def test_binary_shell_output_costs_its_bytes(tmp_path: Path, kind: str) -> None:
    """``binary``: a NUL first (upstream's sniff).  ``random``: random bytes with no NUL
    anywhere, which the first 512 bytes do not reveal (issue 28: it was decoded into a string
    of up to four bytes per byte and copied, 770 MB for 64 MiB)."""
    size = 16 * MB
    blob = tmp_path / "blob.bin"
    noise = os.urandom(size - 1).replace(b"\x00", b"\x01")
    blob.write_bytes((b"\x00" if kind == "binary" else b"\x01") + noise)
    control = peak_mb(tmp_path / "one", {"tool": "run_shell_command", "args": {"command": "echo"}})
    turn = {"tool": "run_shell_command", "args": {"command": f"cat {blob}"}}
    peak = peak_mb(tmp_path / "big", turn)
    assert peak - control <= 3 * size / MB + 10, (
        f"{size // MB} MiB of {kind} output: peak RSS {peak:.0f} MiB, "
        f"{peak - control:.0f} MiB over an empty output"
    )
