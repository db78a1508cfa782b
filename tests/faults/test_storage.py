"""The data directory cannot be written: ``HEADWIRE_HOME`` below a regular file (``ENOTDIR``,
which stops root too, unlike a ``chmod``) and a recording that is a symlink to ``/dev/full``
(``ENOSPC``, a full disk).

The run still answers and exits 0.  The recording stops at the first failed write; the JSON
wires get upstream's ``system/session_recording_degraded`` event once, and stderr names the
error.  A tool output too long for the model whose artifact cannot be saved still reaches the
wire (the display ends with ``Output too long and could not be saved: REASON`` instead of the
path), and the model is told the full output could not be saved.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from headwire.runtime.store.recording import RECORDING_FAILURE_MESSAGE
from headwire.runtime.store.storage import chats_dir
from tests.e2e.helpers import BIG_COMMAND, run_cli, write_script
from tests.fakes.fake_openai import FakeOpenAI
from tests.faults.util import json_output, no_traceback, run, start

SID = "9a1d2c4e-0000-4000-8000-00000000d15c"
MEDIUM_COMMAND = "python3 -c \"print('m'*27000)\""
"""27,001 characters: over the model budget of the agent (25,000), under the shell's own
artifact threshold (30,000), so the agent itself saves it."""


def degraded(session_id: str) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "reason": "write_failed",
        "message": RECORDING_FAILURE_MESSAGE,
    }


def test_unwritable_data_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    home_env = {"HEADWIRE_HOME": str(blocker / "sub")}
    script = [
        {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}},
        {"tool": "run_shell_command", "args": {"command": MEDIUM_COMMAND}},
        {"text": "answered anyway"},
    ]
    with FakeOpenAI(script) as fake:
        proc = run(
            ["-m", "fake-model", "--yolo", "-o", "stream-json", "-p", "hi"],
            tmp_path,
            {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "k", **home_env},
        )
        tool_texts = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc.stderr)
    assert "headwire: session recording disabled: NotADirectoryError" in proc.stderr
    assert (
        "headwire: could not save the full output of run_shell_command: NotADirectoryError"
        in proc.stderr
    )
    messages = proc.lines()
    events = [m for m in messages if m.get("subtype") == "session_recording_degraded"]
    (event,) = events
    sid = messages[0]["session_id"]
    assert list(event) == ["type", "subtype", "uuid", "session_id", "parent_tool_use_id", "data"]
    assert event["session_id"] == sid and event["parent_tool_use_id"] is None
    assert event["data"] == degraded(sid)
    assert messages.index(event) < [m["type"] for m in messages].index("assistant")

    big, medium = [b for m in messages if m["type"] == "user" for b in m["message"]["content"]]
    assert big["is_error"] is False and medium["is_error"] is False
    assert big["content"].startswith("xxxx")  # the wire gets the (bounded) display
    assert big["content"].endswith(
        "\nOutput too long and could not be saved: NotADirectoryError: "
        f"[Errno 20] Not a directory: '{blocker}/sub'"
    )
    assert medium["content"] == "m" * 27_000
    assert messages[-1]["result"] == "answered anyway"

    big_text, medium_text = tool_texts
    assert "The full output could not be saved (NotADirectoryError: [Errno 20]" in big_text
    assert "... [CONTENT TRUNCATED] ..." in big_text and "saved to:" not in big_text
    assert medium_text.startswith(
        "Tool output was too large and has been truncated.\n"
        "The full output could not be saved (NotADirectoryError"
    )
    assert not (tmp_path / "home" / ".headwire").exists()

    text = run(["--model", "scripted:demo", "--yolo", "-p", "hi"], tmp_path, home_env)
    assert text.returncode == 0, text.stderr
    assert text.stdout == b"done\n"  # text mode: no event on stdout, the notes on stderr
    assert "session recording disabled: NotADirectoryError" in text.stderr
    no_traceback(text.stderr)


def test_disk_full_recording(tmp_path: Path) -> None:
    chats = chats_dir(tmp_path / "home" / ".headwire", tmp_path / "proj")
    chats.mkdir(parents=True)
    os.symlink("/dev/full", chats / f"{SID}.jsonl")  # every write fails with ENOSPC
    script = write_script(
        tmp_path / "script.jsonl",
        [{"tool": "run_shell_command", "args": {"command": "echo hello"}}, {"text": "done"}],
    )

    proc = run_cli(
        ["--script", str(script), "--yolo", "-o", "json", "--session-id", SID, "-p", "hi"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc.stderr)
    assert "session recording disabled: OSError: [Errno 28] No space left on device" in proc.stderr
    messages = json_output(proc.stdout)
    assert [m["type"] for m in messages] == [
        "system",
        "system",
        "assistant",
        "user",
        "assistant",
        "result",
    ]
    assert messages[1]["subtype"] == "session_recording_degraded"
    assert messages[1]["data"] == degraded(SID)
    assert messages[3]["message"]["content"][0]["content"] == "hello"
    assert messages[-1]["result"] == "done"

    # A persistent session: the event comes once, in the first turn; later turns still answer.
    cli = start(
        [
            "--script",
            str(script),
            "--yolo",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--session-id",
            SID,
        ],
        tmp_path,
        stdin=subprocess.PIPE,
    )
    assert cli.proc.stdin is not None
    for prompt in ("one", "two"):
        line = {"type": "user", "message": {"role": "user", "content": prompt}}
        cli.proc.stdin.write(json.dumps(line).encode() + b"\n")
    cli.proc.stdin.close()
    assert cli.wait() == 0, cli.stderr
    no_traceback(cli.stderr)
    out = cli.stdout_lines()
    assert [m["data"] for m in out if m.get("subtype") == "session_recording_degraded"] == [
        degraded(SID)
    ]
    assert [m["is_error"] for m in out if m["type"] == "result"] == [False, False]
