"""``session/load`` streams: 5,000 updates load in the memory of 500, and none is missing.

The recordings are written here by the real recorder (:class:`RecordingSubscriber`) from agent
events: turns of a prompt, a message, a shell call with a 20,000-character result, and a final
message (six updates each).  ``headwire --acp`` loads each while the client waits a moment
before reading (so an unbounded writer queue would hold the whole replay), then the client
reads every frame.  The agent's peak RSS (``VmHWM``) for 5,000 updates must stay within 10% of
the one for 500, and every update must arrive, equal to what the live projection gives for
the same events.  SIGTERM in the middle of a load stops the replay at once.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from headwire import events as ev
from headwire.acp.event_updates import EventUpdates
from headwire.runtime.store.record_events import RecordingSubscriber
from headwire.runtime.store.recording import Recorder
from headwire.runtime.tools.registry import builtin_tools
from headwire.wire import encode
from tests.e2e.helpers import env_for

UPDATES_PER_TURN = 6
RESULT_CHARS = 20_000
PAUSE_S = 1.0


def record_session(home: Path, proj: Path, session_id: str, turns: int) -> list[Any]:
    """Write a recording of ``turns`` turns; returns the updates the live session sent (with
    the prompts, as a replay sends them)."""
    recorder = Recorder(home / ".headwire", proj, session_id)
    live = EventUpdates({t.name: t for t in builtin_tools()}, proj, echo_prompts=True)
    sent: list[Any] = []
    record = RecordingSubscriber(recorder, lambda e: None)
    for n in range(turns):
        call = f"call_{n}"
        args = {"command": f"seq {n}"}
        body = (f"{n:08d}" * (RESULT_CHARS // 8 + 1))[:RESULT_CHARS]
        assistant = {
            "role": "assistant",
            "content": f"turn {n}",
            "tool_calls": [
                {
                    "id": call,
                    "type": "function",
                    "function": {"name": "run_shell_command", "arguments": encode(args).decode()},
                }
            ],
        }
        response = ev.ToolResponse(
            call_id=call, name="run_shell_command", args=args, output=body, display=body
        )
        for event in (
            ev.UserPrompt(text=f"prompt {n}", message={"role": "user", "content": f"prompt {n}"}),
            ev.TextDelta(text=f"turn {n}"),
            ev.ModelCallFinished(usage=ev.Usage(), message=assistant),
            ev.ToolCallPending(call_id=call, name="run_shell_command", args=args),
            ev.ToolStarted(call_id=call, name="run_shell_command", args=args),
            ev.ToolFinished(response=response, model_text=body),
            ev.TextDelta(text="ok"),
            ev.ModelCallFinished(usage=ev.Usage(), message={"role": "assistant", "content": "ok"}),
            ev.TurnFinished(
                text="ok",
                error=None,
                subtype="success",
                num_turns=2,
                duration_ms=0,
                stats=ev.TurnStats(model="m"),
            ),
        ):
            record(event)
            sent += live.updates(event)
    recorder.close()
    return sent


def load(tmp: Path, proj: Path, session_id: str) -> tuple[list[Any], int]:
    """``session/load`` in a fresh agent; the replayed updates and the agent's peak RSS (KB)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--acp", "--script", "done"],
        cwd=proj,
        env=env_for(tmp / "home"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/load",
                "params": {"sessionId": session_id, "cwd": str(proj), "mcpServers": []},
            },
        ):
            proc.stdin.write(encode(message) + b"\n")
        proc.stdin.flush()
        time.sleep(PAUSE_S)  # a slow client: the agent must wait for it, not buffer the replay
        updates: list[Any] = []
        while True:
            line = proc.stdout.readline()
            assert line, "the agent closed stdout before answering session/load"
            frame = json.loads(line)
            if frame.get("id") == 2:
                assert "result" in frame, frame
                break
            if frame.get("method") == "session/update":
                updates.append(frame["params"]["update"])
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = int(next(x for x in status.splitlines() if x.startswith("VmHWM:")).split()[1])
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
    return updates, peak


def test_load_streams_with_flat_memory(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    small = record_session(tmp_path / "home", proj, "small", 500 // UPDATES_PER_TURN)
    large = record_session(tmp_path / "home", proj, "large", 5_000 // UPDATES_PER_TURN + 1)
    assert len(small) < 500 < 5_000 < len(large)
    small_got, small_peak = load(tmp_path, proj, "small")
    large_got, large_peak = load(tmp_path, proj, "large")
    assert small_got == small and large_got == large  # every update, in order
    ratio = large_peak / small_peak
    print(f"peak RSS: {small_peak} KB (500 updates), {large_peak} KB (5,000): x{ratio:.3f}")
    assert ratio <= 1.10, (small_peak, large_peak)


def test_sigterm_stops_a_load_at_once(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    total = len(record_session(tmp_path / "home", proj, "large", 5_000 // UPDATES_PER_TURN + 1))
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--acp", "--script", "done"],
        cwd=proj,
        env=env_for(tmp_path / "home"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    load = {"sessionId": "large", "cwd": str(proj), "mcpServers": []}
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": load},
    ):
        proc.stdin.write(encode(message) + b"\n")
    proc.stdin.flush()
    time.sleep(PAUSE_S)  # the replay is waiting for this client to read
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    frames = proc.stdout.read().splitlines()  # what was already on its way, then EOF
    assert proc.wait(timeout=30) == 143
    assert time.monotonic() - sent < 1.0
    assert "Traceback" not in proc.stderr.read().decode()
    updates = [f for f in frames if b'"session/update"' in f]
    assert 0 < len(updates) < total  # stopped mid-replay, every frame whole
    assert all(json.loads(f)["jsonrpc"] == "2.0" for f in frames)
    proc.stdin.close()
    proc.stdout.close()
    proc.stderr.close()
