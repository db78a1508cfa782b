"""Helpers for the fault tests: start the CLI, watch its process tree, read its recording.

The layout is :func:`tests.e2e.helpers.run_cli`'s (``tmp/home`` is the home and data
directory, ``tmp/proj`` the project), so a session started here resumes with ``run_cli``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tests.e2e.helpers import Proc, env_for, run_cli
from tests.wire_schema import check_stream, modes_of

NOISY_SERVER = Path(__file__).resolve().parent / "noisy_mcp_server.py"


def _drain(stream: IO[bytes], sink: bytearray, lock: threading.Lock) -> None:
    while chunk := stream.read1(1 << 16):  # type: ignore[attr-defined]
        with lock:
            sink += chunk


@dataclass
class Cli:
    """A running ``python -m headwire``; stdout and stderr are drained by threads."""

    proc: subprocess.Popen[bytes]
    home: Path
    proj: Path
    out: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)
    rusage: Any = None
    own_peak_kib: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)

    def drain(self, stdout: bool = True) -> None:
        """Start the reader threads (``stdout=False``: the test reads stdout itself)."""
        pairs = [(self.proc.stderr, self.err)] + ([(self.proc.stdout, self.out)] if stdout else [])
        for stream, sink in pairs:
            assert stream is not None
            thread = threading.Thread(target=_drain, args=(stream, sink, self._lock), daemon=True)
            thread.start()
            self._threads.append(thread)
        sampler = threading.Thread(target=self._sample_hwm, daemon=True)
        sampler.start()

    def _sample_hwm(self) -> None:
        """Follow the CLI's own ``VmHWM`` (peak resident set, children excluded) while it runs."""
        path = f"/proc/{self.proc.pid}/status"
        while self.proc.returncode is None:
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.own_peak_kib = max(self.own_peak_kib, int(line.split()[1]))
            except (OSError, ValueError):
                return
            time.sleep(0.02)

    @property
    def pid(self) -> int:
        """The CLI's process id."""
        return self.proc.pid

    def stdout_lines(self) -> list[dict[str, Any]]:
        """The complete stdout lines so far, parsed."""
        with self._lock:
            data = bytes(self.out)
        return [json.loads(line) for line in data.split(b"\n")[:-1] if line.strip()]

    @property
    def stderr(self) -> str:
        """stderr so far."""
        with self._lock:
            return self.err.decode("utf-8", "replace")

    def wait(self, timeout: float = 30) -> int:
        """Reap the process with ``os.wait4`` (keeping its ``rusage``); returns the exit code
        (``-N`` when killed by signal N)."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(
                    f"headwire did not exit within {timeout} s; stderr:\n{self.stderr}"
                )
            time.sleep(0.02)
        self.rusage = usage
        code = os.waitstatus_to_exitcode(status)
        self.proc.returncode = code
        for thread in self._threads:
            thread.join(timeout=5)
        with self._lock:  # every complete stdout line is in the wire schema
            data = bytes(self.out)
        output, _ = modes_of([str(a) for a in self.proc.args][3:])
        check_stream(output, "output", data, "stdout", torn_tail=True)
        return code

    def peak_rss_mb(self) -> float:
        """The CLI's own peak resident set in MiB: its ``VmHWM`` as sampled while it ran.

        ``ru_maxrss`` from ``wait4`` also counts the children it reaped (an MCP server that
        builds a 20 MiB reply), so it is only the fallback when no sample was taken."""
        if self.own_peak_kib:
            return self.own_peak_kib / 1024
        return float(self.rusage.ru_maxrss) / 1024


def start(
    args: list[str],
    tmp: Path,
    *,
    stdin: int | None = subprocess.DEVNULL,
    drain: bool = True,
    env: dict[str, str] | None = None,
    preexec: Callable[[], object] | None = None,
) -> Cli:
    """Start ``python -m headwire ARGS`` in ``tmp/proj`` with ``tmp/home`` as home (and the
    extra variables ``env``; ``preexec`` runs in the child before it starts)."""
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", *args],
        cwd=proj,
        env=env_for(home, **(env or {})),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,
    )
    cli = Cli(proc, home, proj)
    cli.drain(stdout=drain)
    return cli


def wait_until(predicate: Callable[[], object], what: str, timeout: float = 20) -> Any:
    """Poll ``predicate`` until it returns something truthy (and return that)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _stat(pid: int) -> tuple[int, str] | None:
    """``(ppid, state)`` of a process, or ``None`` when it does not exist."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = data.rsplit(")", 1)[1].split()
    return int(fields[1]), fields[0]


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (an orphan may wait long to be reaped)."""
    stat = _stat(pid)
    return stat is not None and stat[1] not in ("Z", "X")


def descendants(pid: int) -> dict[int, str]:
    """Live descendants of ``pid``: ``{pid: command line}``."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] not in ("Z", "X"):
                parents[int(entry)] = stat[0]
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                try:
                    cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
                except OSError:
                    continue
                found[child] = cmdline.decode("utf-8", "replace").strip()
                frontier.append(child)
    return found


def kill_groups(pids: list[int]) -> None:
    """Cleanup: SIGKILL the process groups of ``pids`` (after a ``kill -9`` orphaned them)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(os.getpgid(pid), signal.SIGKILL)


def chats(home: Path) -> list[Path]:
    """The session recordings under ``home``."""
    return sorted((home / ".headwire" / "projects").rglob("*.jsonl"))


def read_recording(path: Path) -> tuple[list[dict[str, Any]], list[bytes]]:
    """``(records, bad lines)``: every newline-terminated line that parses, and those that do
    not (a torn line); the data must end with a newline."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} does not end with a newline: {data[-80:]!r}"
    records: list[dict[str, Any]] = []
    bad: list[bytes] = []
    for line in data.split(b"\n")[:-1]:
        try:
            records.append(json.loads(line))
        except ValueError:
            bad.append(line)
    return records, bad


def run(args: list[str], tmp: Path, env: dict[str, str] | None = None) -> Proc:
    """:func:`tests.e2e.helpers.run_cli` with the extra variables ``env``."""
    extra: dict[str, Any] = dict(env or {})
    return run_cli(args, tmp, **extra)


def json_output(stdout: bytes) -> Any:
    """stdout of ``-o json``: the one array of messages."""
    (line,) = stdout.splitlines()
    return json.loads(line)


def mcp_config(**servers: list[str]) -> str:
    """``--mcp-config`` JSON: each server is a command line run with this Python."""
    return json.dumps(
        {
            "mcpServers": {
                name: {"command": sys.executable, "args": argv} for name, argv in servers.items()
            }
        }
    )


def no_traceback(stderr: str) -> None:
    """stderr holds diagnostics only, never a Python traceback."""
    assert "Traceback" not in stderr, stderr


def artifacts_of(home: Path) -> list[Path]:
    """The producer artifacts under ``home``."""
    return sorted((home / ".headwire" / "tmp").rglob("*.output"))
