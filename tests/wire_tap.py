"""A launcher that runs headwire while copying its wire to files, for clients that spawn it.

SDK tests (Python and TypeScript) start headwire themselves, so the test never sees the bytes
on the pipes.  :func:`launcher` writes an executable script that runs this checkout's headwire
in the same process (same pid: signals and exit codes are unchanged) with

* stdout teed: ``sys.stdout`` is replaced by a writer that writes each frame to fd 1 and then
  to ``TAP/<pid>.stdout`` (headwire writes its wire through ``sys.stdout.buffer``);
* stdin relayed: a thread reads the real stdin, appends each chunk to ``TAP/<pid>.stdin`` and
  passes it on through a pipe that becomes fd 0 (end of input is passed on too);
* ``TAP/<pid>.argv``: the arguments, which tell the wire's mode.

:data:`TAPS` lists every tap folder a launcher was made for; ``tests/conftest.py`` validates
the captured lines against the wire schema after each test and forgets them.
"""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAPS: list[Path] = []
"""Tap folders made during the running test (validated and cleared by the conftest hook)."""
_KEEP: list[io.TextIOWrapper] = []


def launcher(folder: Path, name: str = "headwire-launcher") -> Path:
    """An executable script (``name`` in ``folder``) running headwire with its wire tapped."""
    folder.mkdir(parents=True, exist_ok=True)
    tap = folder / f"{name}.wiretap"
    tap.mkdir(exist_ok=True)
    TAPS.append(tap)
    path = folder / name
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path[:0] = [{str(ROOT / 'src')!r}, {str(ROOT)!r}]\n"
        "from tests.wire_tap import run\n"
        f"raise SystemExit(run({str(tap)!r}))\n"
    )
    path.chmod(0o755)
    return path


class _Tee(io.RawIOBase):
    """fd 1, with every byte written also appended to the tap file."""

    def __init__(self, tap_fd: int) -> None:
        self.tap_fd = tap_fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        written = os.write(1, view)
        os.write(self.tap_fd, view[:written])
        return written


def _relay(source: int, sink: int, tap_fd: int) -> None:
    try:
        while chunk := os.read(source, 1 << 16):
            os.write(tap_fd, chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(sink, view) :]
    except OSError:
        pass
    finally:
        os.close(sink)


def run(tap: str) -> int:
    """Run headwire's ``main`` with stdin and stdout tapped into the folder ``tap``."""
    base = os.path.join(tap, str(os.getpid()))
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    with open(base + ".argv", "w") as f:
        json.dump(sys.argv[1:], f)
    stdin_tap = os.open(base + ".stdin", flags, 0o600)
    stdout_tap = os.open(base + ".stdout", flags, 0o600)
    real_stdin = os.dup(0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    threading.Thread(
        target=_relay, args=(real_stdin, write_end, stdin_tap), daemon=True, name="wire-tap"
    ).start()
    # sys.stdin reads fd 0, now the relay's pipe (nothing was read from it before)
    tee = io.TextIOWrapper(
        io.BufferedWriter(_Tee(stdout_tap)), encoding="utf-8", line_buffering=True
    )
    # kept referenced (as sys.__stdout__ keeps the real one): ACP mode rebinds sys.stdout, and
    # a collected wrapper would close the buffer headwire still writes its frames to
    _KEEP.append(tee)
    sys.stdout = tee
    from headwire.cli.main import main

    try:
        return main()
    finally:
        tee.flush()
