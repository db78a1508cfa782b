"""The writer never drops bytes: stdout set non-blocking, and a reader that is slow to read.

A parent (or ``--json-fd 3 3>&1``, which shares stdout's file description) may leave stdout
``O_NONBLOCK``; a slow reader then makes ``write`` fail with ``EAGAIN``.  Every line must still
arrive whole, the ``result`` last, exit 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import BIG_COMMAND, env_for, write_script

LAUNCH = (
    "import os, sys; os.set_blocking(1, False); "
    "os.execv(sys.executable, [sys.executable, '-m', 'headwire', *sys.argv[1:]])"
)


@pytest.mark.parametrize("dual", [False, True], ids=["stdout", "json-fd-sharing-stdout"])
def test_nonblocking_stdout_and_a_slow_reader_lose_nothing(tmp_path: Path, dual: bool) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    big = {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}
    script = write_script(tmp_path / "script.jsonl", [big, big, big, big, {"text": "done"}])
    args = ["--script", str(script), "--yolo", "-o", "stream-json", "--include-partial-messages"]
    args += ["-p", "Run the big output tool four times, then say done."]
    if dual:
        args += ["--json-fd", "3"]
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=proj,
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        pass_fds=(3,) if dual else (),
        preexec_fn=(lambda: __import__("os").dup2(1, 3)) if dual else None,
    )
    assert proc.stdout is not None
    time.sleep(2.0)  # let the pipe fill: the writer meets EAGAIN
    chunks = []
    while chunk := proc.stdout.read1(4096):
        chunks.append(chunk)
        time.sleep(0.001)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    data = b"".join(chunks)
    assert data.endswith(b"\n")
    messages = [json.loads(line) for line in data.splitlines()]
    results = [m for m in messages if m.get("type") == "result"]
    assert results and results[-1]["result"] == "done"
    main = [m for m in messages if m.get("subtype") not in ("session_start", "session_end")]
    assert main[-1]["type"] == "result"
    assert len(data) > 4 * 65_536  # four bounded tool results and every partial message
    tool_results = [m for m in messages if m.get("type") == "user"]
    assert len(tool_results) == (8 if dual else 4)
