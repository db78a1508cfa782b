"""Dual Output end to end: regular file, FIFO with a reader, a reader that never reads, an fd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from headwire.projection import HEADLESS_TRUNCATION_MARKER
from headwire.wire import encode
from tests.e2e.helpers import BIG_COMMAND, env_for, run_cli, write_script
from tests.wire_schema import check_stream

BASE = ["--model", "scripted:demo", "--yolo", "-o", "text", "-p", "go"]


def events(raw: bytes) -> list[dict[str, Any]]:
    check_stream("dual", "output", raw, "sidecar", torn_tail=True)
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def check_sidecar(evs: list[dict[str, Any]]) -> None:
    assert evs[0]["type"] == "system" and evs[0]["subtype"] == "session_start"
    data = evs[0]["data"]
    assert (
        data["protocol_version"] == 2
        and data["version"]
        and "stream_event" in data["supported_events"]
    )
    assert evs[-1]["subtype"] == "session_end"
    assert [e.get("subtype") for e in evs].count("session_end") == 1
    results = [
        b
        for e in evs
        if e["type"] == "user"
        for b in e["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert results and all(len(encode(b["content"])) <= 65_536 for b in results)
    assert HEADLESS_TRUNCATION_MARKER in results[0]["content"]
    kinds = {e["event"]["type"] for e in evs if e["type"] == "stream_event"}
    assert {"message_start", "content_block_delta", "message_stop"} <= kinds
    assert any(e["type"] == "result" for e in evs)


def test_regular_file(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    proc = run_cli([*BASE, "--json-file", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"
    check_sidecar(events(out.read_bytes()))


def test_fifo_with_a_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    thread = threading.Thread(target=reader)
    thread.start()
    proc = run_cli([*BASE, "--json-file", str(fifo)], tmp_path)
    thread.join(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"
    check_sidecar(events(got[0]))


def test_json_fd(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", *BASE, "--json-fd", str(write_end)],
        cwd=proj,
        env=env_for(home),
        pass_fds=(write_end,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out == b"done\n"
    check_sidecar(events(data))


def test_bad_descriptors_are_usage_errors(tmp_path: Path) -> None:
    for flag in (["--json-fd", "1"], ["--json-fd", "57"], ["--json-fd", "3", "--json-file", "x"]):
        proc = run_cli([*BASE, *flag], tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    proc = run_cli([*BASE, "--json-file", str(tmp_path / "no" / "such" / "dir" / "f")], tmp_path)
    assert proc.returncode == 2 and "--json-file" in proc.stderr


def test_a_reader_that_never_reads_does_not_slow_the_agent(tmp_path: Path) -> None:
    turns = [{"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}] * 20 + [
        {"text": "done"}
    ]
    script = str(write_script(tmp_path / "s.jsonl", turns))
    args = ["--script", script, "--yolo", "-o", "text", "-p", "go"]
    started = time.monotonic()
    plain = run_cli(args, tmp_path / "plain")
    baseline = time.monotonic() - started
    assert plain.returncode == 0, plain.stderr
    fifo = tmp_path / "stuck.fifo"
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader that never reads
    try:
        started = time.monotonic()
        stuck = run_cli([*args, "--json-file", str(fifo)], tmp_path / "stuck")
        elapsed = time.monotonic() - started
    finally:
        os.close(holder)
    assert stuck.returncode == 0, stuck.stderr
    assert stuck.stdout == b"done\n"
    assert "dual output disabled" in stuck.stderr
    assert elapsed < baseline + 1.0, (elapsed, baseline)


def test_input_file_answers_permission_requests(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    commands = tmp_path / "commands.jsonl"
    commands.write_text("")
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "headwire",
            "--model",
            "scripted:demo",
            "-o",
            "text",
            "-p",
            "go",
            "--json-file",
            str(out),
            "--input-file",
            str(commands),
        ],
        cwd=proj,
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    request_id = None
    deadline = time.monotonic() + 30
    while request_id is None and time.monotonic() < deadline:
        time.sleep(0.1)
        for e in events(out.read_bytes()) if out.exists() else []:
            if e["type"] == "control_request":
                request_id = e["request_id"]
    assert request_id is not None
    commands.write_text(
        "not json\n"
        + json.dumps({"type": "confirmation_response", "request_id": request_id, "allowed": True})
        + "\n"
    )
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stdout == b"done\n"
    evs = events(out.read_bytes())
    responses = [e for e in evs if e["type"] == "control_response"]
    assert responses[0]["response"] == {
        "subtype": "success",
        "request_id": request_id,
        "response": {"allowed": True},
    }
    results = [b for e in evs if e["type"] == "user" for b in e["message"]["content"]]
    assert results[0]["is_error"] is False
    assert b"line 1: not valid JSON" in stderr
