"""``--input-file``: read incrementally, off the event loop, and a FIFO never blocks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from headwire.io.input_file import InputFilePoller


def test_lines_are_read_once_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    seen: list[dict[str, Any]] = []
    notes: list[str] = []
    poller = InputFilePoller(path, seen.append, notes.append)
    poller.poll()  # missing file: nothing
    path.write_text('{"type": "submit", "text": "one"}\nnot json\n{"type": "sub')
    poller.poll()
    with path.open("a") as f:
        f.write('mit", "text": "two"}\n')
    poller.poll()
    poller.poll()
    assert [c["text"] for c in seen] == ["one", "two"]
    assert notes == ["headwire: --input-file line 2: not valid JSON"]


CHILD = r"""
import sys
from pathlib import Path
from headwire.io.input_file import InputFilePoller
seen = []
notes = []
poller = InputFilePoller(Path(sys.argv[1]), seen.append, notes.append)
poller.poll()
poller.poll()
# VmHWM: this process's own peak (ru_maxrss keeps the forking parent's peak across exec)
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(int(hwm.split()[1]) // 1024, len(seen), len(notes))
"""


def test_a_huge_file_costs_a_window_not_its_size(tmp_path: Path) -> None:
    """A 600 MB file (one huge line, then a command).  Before: 611 MB RSS for each reread."""
    path = tmp_path / "in.jsonl"
    with path.open("wb") as handle:
        handle.truncate(600 << 20)
        handle.seek(600 << 20)
        handle.write(b'\n{"type": "submit", "text": "after"}\n')
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rss_mib, commands, notes = map(int, done.stdout.split())
    assert rss_mib < 120 and commands == 1 and notes == 1, done.stdout


def test_a_fifo_never_blocks_the_event_loop(tmp_path: Path) -> None:
    """Before: ``open()`` of a FIFO without a writer blocked the event loop (signals too)."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    seen: list[dict[str, Any]] = []

    async def scenario() -> int:
        poller = InputFilePoller(fifo, seen.append, lambda note: None)
        task = asyncio.ensure_future(poller.run())
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(writer, json.dumps({"type": "submit", "text": "hi"}).encode() + b"\n")
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.01)
        os.close(writer)
        task.cancel()
        await task
        return ticks

    assert asyncio.run(asyncio.wait_for(scenario(), 10)) == 20
    assert seen == [{"type": "submit", "text": "hi"}]


def test_a_device_is_refused(tmp_path: Path) -> None:
    notes: list[str] = []
    poller = InputFilePoller(Path("/dev/zero"), lambda c: None, notes.append)
    asyncio.run(asyncio.wait_for(poller.run(), 5))
    assert notes == ["headwire: --input-file /dev/zero: not a regular file or a FIFO"]
