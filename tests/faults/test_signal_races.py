"""Signals that arrive at awkward moments: a second SIGINT while the first one's cleanup runs,
and SIGTERM while an MCP server is still starting.

Findings (issue 11, item 5): two SIGINTs 50 ms apart killed the process by the signal instead
of exiting 130; SIGTERM while an MCP server started took 12 s and printed "Future exception was
never retrieved".
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import write_script
from tests.faults.util import descendants, mcp_config, no_traceback, start, wait_until

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
SLOW = [{"tool": "run_shell_command", "args": {"command": "sleep 30"}}, {"text": "never"}]


@pytest.mark.parametrize("gap_s", [0.0, 0.05, 0.2])
@pytest.mark.parametrize("mode", ["text", "stream-json"])
def test_two_sigints_in_a_row_exit_130(tmp_path: Path, mode: str, gap_s: float) -> None:
    script = write_script(tmp_path / "script.jsonl", SLOW)
    cli = start(["--script", str(script), "--yolo", "-o", mode, "-p", "go"], tmp_path)
    wait_until(
        lambda: any("sleep 30" in c for c in descendants(cli.pid).values()), "the tool to start"
    )
    # os.kill, not Popen.send_signal: that polls first and may reap the process between the two
    os.kill(cli.pid, signal.SIGINT)
    time.sleep(gap_s)
    os.kill(cli.pid, signal.SIGINT)
    assert cli.wait() == 130, cli.stderr
    no_traceback(cli.stderr)
    assert "SIGINT received; stopping" in cli.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_an_mcp_server_starts_exits_at_once(
    tmp_path: Path, signum: signal.Signals
) -> None:
    config = mcp_config(slow=[str(SERVER), "slow-startup"])
    cli = start(
        ["--script", "done", "-o", "stream-json", "--mcp-config", config, "-p", "go"],
        tmp_path,
        env={"FAKE_MCP_DELAY": "30"},
    )
    wait_until(
        lambda: any(str(SERVER) in c for c in descendants(cli.pid).values()),
        "the MCP server to start",
        timeout=60,  # the CLI imports the MCP SDK first, which is slow on a loaded machine
    )
    time.sleep(0.3)  # the connection attempt is under way
    started = time.monotonic()
    os.kill(cli.pid, signum)
    code = cli.wait(timeout=20)
    elapsed = time.monotonic() - started
    assert code == 128 + signum, cli.stderr
    assert elapsed < 2.0, f"took {elapsed:.1f} s to exit"
    no_traceback(cli.stderr)
    assert "never retrieved" not in cli.stderr, cli.stderr
