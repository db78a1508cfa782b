"""Background jobs: output capped, jobs stopped at exit."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from headwire.runtime.tools.background import (
    CAPPED_NOTICE,
    start_background_pump,
    stop_background_jobs,
)


def test_output_is_capped_and_the_job_never_blocks(tmp_path: Path) -> None:
    """Before: the job wrote straight into its artifact, without any cap."""
    path = tmp_path / "job.output"
    path.write_bytes(b"")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["bash", "-c", "head -c 3000000 /dev/zero | tr '\\0' y; echo end"],
        stdout=write_fd,
        start_new_session=True,
    )
    os.close(write_fd)
    start_background_pump(proc, read_fd, path, limit=1000)
    proc.wait(timeout=20)  # it finished: the pump drained everything past the cap
    deadline = time.monotonic() + 5
    expected = b"y" * 1000 + CAPPED_NOTICE.format(limit=1000).encode()
    while path.read_bytes() != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path.read_bytes() == expected


def test_stop_background_jobs_ends_the_group(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["bash", "-c", "sleep 60 & sleep 60"], stdout=write_fd, start_new_session=True
    )
    os.close(write_fd)
    start_background_pump(proc, read_fd, tmp_path / "out")
    stop_background_jobs(grace_s=2)
    assert proc.wait(timeout=5) is not None
