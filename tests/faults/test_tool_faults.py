"""Tool steps that used to freeze or leak, each through a real ``headwire`` process."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from tests.e2e.helpers import run_cli, write_script
from tests.faults.util import alive, no_traceback, start, wait_until


def _result(stdout: bytes) -> dict[str, object]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return lines[-1]


def test_dotstar_over_a_long_line_is_fast(tmp_path: Path) -> None:
    """``.*foo`` over a one-line 100 KB file.  Before: 37 s (and a signal meanwhile gave exit 0)."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "long.txt").write_text("x" * 100_000 + "foo\n")
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool": "grep_search", "args": {"pattern": ".*foo"}}, {"text": "ok"}],
    )
    started = time.monotonic()
    proc = run_cli(["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"], tmp_path)
    assert proc.returncode == 0 and time.monotonic() - started < 10, proc.stderr
    results = [
        block
        for line in proc.lines()
        if line["type"] == "user"
        for block in line["message"]["content"]
    ]
    assert results[0]["content"].startswith("Found 1 match")


def test_write_file_onto_a_fifo_is_refused(tmp_path: Path) -> None:
    """Before: the write blocked forever, and SIGINT could not end the process."""
    proj = tmp_path / "proj"
    proj.mkdir()
    os.mkfifo(proj / "pipe")
    turns = [{"tool": "write_file", "args": {"file_path": str(proj / "pipe"), "content": "x"}}]
    script = write_script(tmp_path / "s.jsonl", [*turns, {"text": "ok"}])
    proc = run_cli(
        ["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"], tmp_path, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    (block,) = [
        b for line in proc.lines() if line["type"] == "user" for b in line["message"]["content"]
    ]
    assert block["is_error"] is True and "not a regular file" in block["content"]


def test_input_file_fifo_does_not_block_signals(tmp_path: Path) -> None:
    """``--input-file`` naming a FIFO without a writer.  Before: ``open()`` blocked the event
    loop, so SIGTERM was never handled."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    script = write_script(
        tmp_path / "s.jsonl", [{"tool": "run_shell_command", "args": {"command": "sleep 30"}}]
    )
    cli = start(
        [
            "--script",
            str(script),
            "--yolo",
            "--json-file",
            str(tmp_path / "events.jsonl"),
            "--input-file",
            str(fifo),
            "-p",
            "go",
        ],
        tmp_path,
    )
    wait_until(lambda: (tmp_path / "events.jsonl").exists(), "the Dual Output file")
    time.sleep(1.0)  # several polls of the FIFO
    sent = time.monotonic()
    cli.proc.send_signal(signal.SIGTERM)
    assert cli.wait(timeout=10) == 143, cli.stderr
    assert time.monotonic() - sent < 2.0
    no_traceback(cli.stderr)


def test_background_jobs_end_with_headwire(tmp_path: Path) -> None:
    """Before: a background job kept running (and appending to its artifact) after exit."""
    marker = tmp_path / "bg.pid"
    command = f"echo $$ > {marker}; while true; do echo tick; sleep 0.05; done"
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool": "run_shell_command", "args": {"command": command, "is_background": True}},
            {"tool": "run_shell_command", "args": {"command": f"sleep 0.5; cat {marker}"}},
            {"text": "done"},
        ],
    )
    proc = run_cli(["--script", str(script), "--yolo", "-p", "go"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    pid = int(marker.read_text())
    wait_until(lambda: not alive(pid), "the background job to be stopped", timeout=5)


def test_a_runaway_grep_worker_stops_at_its_cpu_cap(tmp_path: Path) -> None:
    """The ``re`` worker caps its own CPU time (``RLIMIT_CPU``, the timeout plus a grace), so
    even a worker nobody kills (its parent gone on a system without ``PR_SET_PDEATHSIG``)
    stops by itself.  Here the worker is run directly with a 1 s cap on a runaway pattern."""
    import subprocess
    import sys

    (tmp_path / "cart.py").write_text(
        "def compute_total_price_for_all_items_in_cart(self, items, discount):\n" * 3
    )
    request = {
        "cpu_seconds": 1,
        "pattern": r"(\w+\s?)+$(?!x)",
        "glob": None,
        "pairs": [[str(tmp_path), str(tmp_path)]],
        "roots": [str(tmp_path)],
        "keep": 100,
    }
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", "from headwire.runtime.tools.grep_worker import main; main()"],
        input=json.dumps(request).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL), proc
    assert time.monotonic() - started < 10
