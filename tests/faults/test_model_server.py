"""The model server fails: HTTP 429/5xx, a dropped connection, an unreachable address.

Before any output of an answer has arrived, 408/429/5xx, connection errors and a stream that
ends early are retried: three retries after the first attempt, waiting ``Retry-After`` when
the server sends one, else 0.5, 1 and 2 s.  Once output has arrived, or for any other status,
the turn ends at once with an error ``result`` and exit code 1 (in text mode the message goes
to stderr).  The retry counts are checked against the fake server's request log.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import run_cli
from tests.fakes.fake_openai import FakeOpenAI
from tests.faults.util import chats, no_traceback, read_recording

FLAGS = ["-m", "fake-model", "--yolo"]


def against(fake: FakeOpenAI, args: list[str], tmp: Path) -> Any:
    return run_cli([*FLAGS, *args], tmp, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")


def final_record(home: Path) -> dict[str, Any]:
    (path,) = chats(home)
    records, bad = read_recording(path)
    assert bad == []
    assert records[-1]["type"] == "result"
    return records[-1]


def test_transient_failures_before_output_are_retried(tmp_path: Path) -> None:
    script = [
        {"drop_after_chunks": 1, "text": "lost"},  # the connection drops after the role chunk
        {"error_status": 429, "retry_after": "0", "message": "slow down"},
        {"error_status": 503, "retry_after": "0", "message": "overloaded"},
        {"text": "finally"},
    ]
    with FakeOpenAI(script) as fake:
        proc = against(fake, ["-o", "stream-json", "-p", "hi"], tmp_path)
        attempts = [entry["reply_index"] for entry in fake.log]
    assert proc.returncode == 0, proc.stderr
    assert attempts == [0, 1, 2, 3]
    notes = [line for line in proc.stderr.splitlines() if "retrying in" in line]
    assert len(notes) == 3
    assert "Connection closed mid-stream" in notes[0] and "(attempt 2 of 4)" in notes[0]
    assert "HTTP 429" in notes[1] and "slow down" in notes[1] and "retrying in 0s" in notes[1]
    assert "HTTP 503" in notes[2] and "(attempt 4 of 4)" in notes[2]
    no_traceback(proc.stderr)
    assert proc.lines()[-1]["result"] == "finally"
    assert final_record(proc.home)["is_error"] is False


def test_retries_give_up_after_four_attempts(tmp_path: Path) -> None:
    reply = {"error_status": 500, "retry_after": "0", "message": "internal trouble"}
    with FakeOpenAI([reply] * 6) as fake:
        proc = against(fake, ["-o", "text", "-p", "hi"], tmp_path)
        requests = len(fake.log)
    assert proc.returncode == 1
    assert requests == 4
    assert proc.stdout == b""
    assert proc.stderr.count("retrying in") == 3
    assert proc.stderr.splitlines()[-1] == (
        "Model server returned HTTP 500 Internal Server Error: internal trouble"
    )
    no_traceback(proc.stderr)
    assert final_record(proc.home)["error"].startswith("Model server returned HTTP 500")


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ({"drop_after_chunks": 3, "text": "partial answer here"}, "Connection closed mid-stream"),
        (
            {"error_status": 400, "message": "bad request body"},
            "HTTP 400 Bad Request: bad request body",
        ),
    ],
    ids=["dropped-mid-answer", "http-400"],
)
def test_not_retried(tmp_path: Path, reply: dict[str, Any], needle: str) -> None:
    with FakeOpenAI([reply, {"text": "must not be asked"}]) as fake:
        proc = against(fake, ["-o", "stream-json", "-p", "hi"], tmp_path)
        requests = len(fake.log)
    assert proc.returncode == 1
    assert requests == 1
    assert "retrying" not in proc.stderr
    no_traceback(proc.stderr)
    result = proc.lines()[-1]
    assert result["type"] == "result" and result["is_error"] is True
    assert needle in result["error"]["message"]
    assert needle in final_record(proc.home)["error"]


def test_unreachable_server_backs_off(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = run_cli(
        [*FLAGS, "-o", "json", "-p", "hi"],
        tmp_path,
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        OPENAI_API_KEY="k",
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    delays = [
        line.split("retrying in ")[1].split("s ")[0]
        for line in proc.stderr.splitlines()
        if "retrying in" in line
    ]
    assert delays == ["0.5", "1", "2"]
    assert elapsed >= 3.5
    no_traceback(proc.stderr)
    (messages,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert messages[-1]["is_error"] is True
    assert "Cannot reach model server at http://127.0.0.1:9/v1" in messages[-1]["error"]["message"]
