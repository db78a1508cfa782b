"""Background shell jobs (``is_background: true``): capped output, stopped when headwire exits.

A background job writes into a pipe; a pump thread appends what arrives to the job's artifact,
at most :data:`OUTPUT_LIMIT` bytes (then one notice line, and the rest is drained and
discarded, so the job never blocks on a full pipe and never fills the disk).  Every job is
registered, and at interpreter exit (the end of a run, a signal's clean exit) its process group
gets SIGTERM, then SIGKILL after :data:`STOP_GRACE_S`: no job outlives headwire.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from headwire.runtime.tools.atomic import open_for_append

OUTPUT_LIMIT = 64 * 1024 * 1024
READ_CHUNK = 256 * 1024
STOP_GRACE_S = 1.0
CAPPED_NOTICE = "\n[headwire: the output reached {limit} bytes; the rest was discarded]\n"

_jobs: dict[int, subprocess.Popen[bytes]] = {}
_lock = threading.Lock()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pump(proc: subprocess.Popen[bytes], read_fd: int, path: Path, limit: int) -> None:
    """Append the job's output to ``path`` up to ``limit`` bytes, drain the rest, reap it."""
    written, capped = 0, False
    try:
        out_fd = open_for_append(path)
    except OSError:
        out_fd, capped = -1, True
    try:
        while chunk := os.read(read_fd, READ_CHUNK):
            if capped:
                continue
            piece = chunk[: limit - written]
            with contextlib.suppress(OSError):
                _write_all(out_fd, piece)
            written += len(piece)
            if len(piece) < len(chunk):
                capped = True
                with contextlib.suppress(OSError):
                    _write_all(out_fd, CAPPED_NOTICE.format(limit=limit).encode())
    except OSError:
        pass
    finally:
        os.close(read_fd)
        if out_fd >= 0:
            os.close(out_fd)
        proc.wait()
        with _lock:
            _jobs.pop(proc.pid, None)


def start_background_pump(
    proc: subprocess.Popen[bytes], read_fd: int, path: Path, limit: int = OUTPUT_LIMIT
) -> None:
    """Register ``proc`` (stopped at exit) and pump its output pipe ``read_fd`` into ``path``."""
    with _lock:
        _jobs[proc.pid] = proc
    threading.Thread(
        target=_pump, args=(proc, read_fd, path, limit), name="headwire-background", daemon=True
    ).start()


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def stop_background_jobs(grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM every running job's process group, SIGKILL what is left after ``grace_s``."""
    with _lock:
        jobs = list(_jobs.values())
    for proc in jobs:
        _signal_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while jobs and time.monotonic() < deadline and any(p.poll() is None for p in jobs):
        time.sleep(0.02)
    for proc in jobs:
        _signal_group(proc.pid, signal.SIGKILL)


atexit.register(stop_background_jobs)
