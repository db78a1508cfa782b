"""The consumer closes stdout in the middle of the stream.

headwire stops writing at the first ``EPIPE``, finishes the running turn (so the recording is
complete, tools ran to the end) and exits 0 without a traceback.  A persistent session drops
the turns still queued.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import BIG_COMMAND, write_script
from tests.faults.util import chats, no_traceback, read_recording, start

SCRIPT: list[dict[str, Any]] = [
    {"tool": "run_shell_command", "args": {"command": "sleep 0.3; echo first"}},
    {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}},
    {"text": "done"},
]


def check_complete_recording(home: Path) -> None:
    (path,) = chats(home)
    records, bad = read_recording(path)
    assert bad == []
    assert [r["type"] for r in records] == [
        "user",
        "assistant",
        "tool_pending",
        "tool_started",
        "tool_result",
        "assistant",
        "tool_pending",
        "tool_started",
        "tool_result",
        "assistant",
        "result",
    ]
    assert records[4]["display"] == "first"
    assert records[8]["display"].startswith("x" * 499_998 + "\nOutput too long and was saved to: ")
    assert records[-1]["is_error"] is False and records[-1]["result"] == "done"


@pytest.mark.parametrize("fmt", ["stream-json", "json"])
def test_reader_goes_away(tmp_path: Path, fmt: str) -> None:
    script = write_script(tmp_path / "script.jsonl", SCRIPT)
    cli = start(["--script", str(script), "--yolo", "-o", fmt, "-p", "go"], tmp_path, drain=False)
    assert cli.proc.stdout is not None
    if fmt == "stream-json":
        first = json.loads(cli.proc.stdout.readline())  # read one line, then hang up
        assert first["subtype"] == "init"
    cli.proc.stdout.close()
    assert cli.wait() == 0
    no_traceback(cli.stderr)
    check_complete_recording(cli.home)


def test_session_reader_goes_away(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.jsonl", SCRIPT)
    prompts = b"".join(
        json.dumps({"type": "user", "message": {"role": "user", "content": text}}).encode() + b"\n"
        for text in ("go", "never run")
    )
    cli = start(
        [
            "--script",
            str(script),
            "--yolo",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ],
        tmp_path,
        stdin=subprocess.PIPE,
        drain=False,
    )
    assert cli.proc.stdin is not None and cli.proc.stdout is not None
    cli.proc.stdin.write(prompts)
    cli.proc.stdin.flush()
    assert json.loads(cli.proc.stdout.readline())["subtype"] == "init"
    cli.proc.stdout.close()
    assert cli.wait() == 0
    cli.proc.stdin.close()
    no_traceback(cli.stderr)
    assert "stdout closed by the client" in cli.stderr
    check_complete_recording(cli.home)  # the running turn, and not the queued one
