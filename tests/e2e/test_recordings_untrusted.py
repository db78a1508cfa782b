"""A recording is untrusted input: every reader opens it through one function that never blocks
and refuses special files, checks the shape of what it reads, and skips a torn or oversized
line with bounded memory (issue 21, finding 12)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import env_for, recordings, run_cli, write_script

TORN_BYTES = 200 << 20
"""The torn last line of the memory tests (sparse: cheap to make)."""
RSS_EXTRA_MIB = 64
"""The most a torn line may add to a command's peak resident memory."""


def _session(tmp: Path) -> tuple[str, Path, Path]:
    """A real recorded session: its id, its recording and the script that answers again."""
    script = write_script(tmp / "s.jsonl", [{"text": "done"}, {"text": "again"}])
    first = run_cli(["--script", str(script), "-o", "stream-json", "-p", "hi"], tmp)
    assert first.returncode == 0, first.stderr
    session = first.lines()[0]["session_id"]
    (recording,) = (p for p in recordings(first.home) if p.stem == session)
    return session, recording, script


def _append(recording: Path, record: dict[str, Any]) -> None:
    with recording.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _stderr_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_resume_of_a_wrong_typed_record_is_a_one_line_error(tmp_path: Path) -> None:
    """Before: ``"tool_calls": 5`` in a recorded message made ``--resume`` print a 47-line
    traceback."""
    session, recording, script = _session(tmp_path)
    _append(
        recording,
        {
            "type": "assistant",
            "session_id": session,
            "message": {"role": "assistant", "content": "x", "tool_calls": 5},
        },
    )
    done = run_cli(["--script", str(script), "--resume", session, "-p", "again"], tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    (line,) = _stderr_lines(done.stderr)
    assert "damaged" in line and '"tool_calls" is 5' in line, line
    shown = run_cli(["sessions", "export", "--format", "md", session], tmp_path)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr


def test_continue_and_resume_never_open_a_fifo(tmp_path: Path) -> None:
    """Before: ``-c`` picked a FIFO named ``*.jsonl`` (the newest file) and blocked in ``open``,
    past SIGTERM; now ``-c`` continues the newest real recording and ``--resume`` of the FIFO
    is a one-line error."""
    session, recording, script = _session(tmp_path)
    os.mkfifo(recording.parent / "fifo.jsonl")
    again = run_cli(
        ["--script", str(script), "-o", "stream-json", "-c", "-p", "again"], tmp_path, timeout=30
    )
    assert again.returncode == 0, again.stderr
    assert again.lines()[-1]["session_id"] == session
    refused = run_cli(
        ["--script", str(script), "--resume", "fifo", "-p", "x"], tmp_path, timeout=30
    )
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    (line,) = _stderr_lines(refused.stderr)
    assert "not a regular file" in line, line


class AcpClient:
    """A running ``headwire --acp``, its stdout read in a thread (a hung server cannot hang
    the test)."""

    def __init__(self, tmp: Path, script: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "headwire", "--acp", "--script", str(script)],
            cwd=tmp / "proj",
            env=env_for(tmp / "home"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.frames: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.frames.put(json.loads(line))

    def call(self, msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + 30
        while True:
            frame = self.frames.get(timeout=max(0.1, deadline - time.monotonic()))
            if frame.get("id") == msg_id and "method" not in frame:
                return frame


def test_acp_load_of_a_fifo_is_refused_and_the_server_keeps_answering(tmp_path: Path) -> None:
    """Before: ``session/load`` of a FIFO recording blocked the event loop in ``open``: no
    other request was answered, and SIGTERM did not end the server."""
    _id, recording, script = _session(tmp_path)
    os.mkfifo(recording.parent / "fifo.jsonl")
    client = AcpClient(tmp_path, script)
    try:
        client.call(1, "initialize", {"protocolVersion": 1})
        cwd = str(tmp_path / "proj")
        try:
            loaded = client.call(
                2, "session/load", {"sessionId": "fifo", "cwd": cwd, "mcpServers": []}
            )
        except queue.Empty:
            pytest.fail("session/load of a FIFO recording was never answered")
        assert "not a regular file" in loaded["error"]["message"], loaded
        fresh = client.call(3, "session/new", {"cwd": cwd, "mcpServers": []})
        assert fresh["result"]["sessionId"]
        client.proc.send_signal(signal.SIGTERM)
        assert client.proc.wait(timeout=10) is not None
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


PEAK_RSS = r"""
import json, resource, subprocess, sys
args, cwd, env = json.loads(sys.argv[1])
done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, timeout=120)
print(json.dumps({
    "rc": done.returncode,
    "stdout": done.stdout.decode("utf-8", "replace")[-2000:],
    "stderr": done.stderr.decode("utf-8", "replace")[-2000:],
    "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
}))
"""


def peak_rss(args: list[str], tmp: Path) -> dict[str, Any]:
    """Run ``headwire ARGS`` from a fresh parent, which reports the child's peak RSS."""
    command = [sys.executable, "-m", "headwire", *args]
    spec = json.dumps([command, str(tmp / "proj"), env_for(tmp / "home")])
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, spec], capture_output=True, timeout=180, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _tear(recording: Path) -> None:
    """Append a last line of :data:`TORN_BYTES` with no end, as a crash mid-write leaves."""
    with recording.open("ab") as f:
        f.write(b'{"type":"assistant","message":{"role":"assistant","content":"')
    os.truncate(recording, recording.stat().st_size + TORN_BYTES)


@pytest.mark.slow  # about 5 s: three runs, one over a 200 MiB (sparse) recording
@pytest.mark.parametrize("command", ["export", "resume"])
def test_a_torn_200_mib_last_line_is_skipped_in_bounded_memory(
    tmp_path: Path, command: str
) -> None:
    """Before: skipping the torn line cost 600 MiB of peak memory in ``sessions export`` and
    1,200 MiB in ``--resume``; now a few MiB over the same command on the whole recording."""
    session, recording, script = _session(tmp_path)
    args = {
        "export": ["sessions", "export", "--format", "md", session],
        "resume": ["--script", str(script), "-o", "stream-json", "--resume", session, "-p", "x"],
    }[command]
    whole = peak_rss(args, tmp_path)
    assert whole["rc"] == 0, whole["stderr"]
    if command == "resume":  # the scripted model has one more answer
        write_script(script, [{"text": "once more"}])
    _tear(recording)
    torn = peak_rss(args, tmp_path)
    assert torn["rc"] == 0, torn["stderr"]
    assert "Traceback" not in torn["stderr"]
    if command == "export":
        assert "done" in torn["stdout"]
    else:
        assert '"subtype":"success"' in torn["stdout"]
    extra_mib = (torn["rss_kib"] - whole["rss_kib"]) / 1024
    print(f"{command}: peak RSS {whole['rss_kib'] >> 10} MiB, torn {torn['rss_kib'] >> 10} MiB")
    assert extra_mib < RSS_EXTRA_MIB, (whole["rss_kib"], torn["rss_kib"])
