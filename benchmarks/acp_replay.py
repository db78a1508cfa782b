"""Throughput and peak memory of ACP ``session/load`` against a plain line-by-line read.

Writes a recorded session straight in the recording format (``headwire.runtime.store.recording``)
into a temporary ``HEADWIRE_HOME``: one prompt, then ``--results`` tool calls (default 1,000),
each an ``assistant`` record announcing a ``run_shell_command`` call and a ``tool_result`` record
whose display is ``--result-kb`` KB of output (default 256) and whose model text is the bounded
head/tail preview the agent keeps.  Then, in the same run:

* the baseline, a subprocess timing ``for line in open(path, "rb"): pass`` over the file (also
  shown, for reference, with a 1 MiB read buffer, the one the replay uses);
* ``python -m headwire --acp`` (a subprocess): ``initialize``, then ``session/load`` timed from
  the request to its response while this script drains stdout; every replayed ``tool_call_update``
  is projected on the way out.

Each is run ``--repeat`` times, alternated, best kept.  Throughput is recording bytes per
second; the target is a replay at no less than 30% of the baseline.  Peak RSS (``wait4``) is
measured for the full session and for a session a tenth as long (``--short-results``): a
streamed replay's peak does not grow with the session's length.

    PYTHONPATH=src python benchmarks/acp_replay.py [--results 1000] [--result-kb 256]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import orjson

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
sys.path.insert(0, str(SRC))

from headwire.runtime.store.storage import chats_dir  # noqa: E402
from headwire.wire import encode  # noqa: E402

TARGET_RATIO = 0.30
MODEL_TEXT_HEAD = 5_000
MODEL_TEXT_TAIL = 20_000

BASELINE = """\
import sys, time
path, buffering = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
n = 0
with open(path, "rb", buffering=buffering) as f:
    for line in f:
        n += 1
print(time.perf_counter() - start, n)
"""


# -- the recording -----------------------------------------------------------------------------


def _output(index: int, size: int) -> str:
    """``size`` characters of shell-like output, different for every result."""
    line = f"[{index:05d}] build step: compiling src/module_{index % 97}.py ... ok\n"
    return (line * (size // len(line) + 1))[:size]


def _record(kind: str, session_id: str, **fields: object) -> bytes:
    entry = {
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "session_id": session_id,
        "timestamp": "2026-01-01T00:00:00",
        **fields,
    }
    return encode(entry) + b"\n"


def write_recording(path: Path, session_id: str, results: int, result_bytes: int) -> int:
    """Write the session's JSONL recording; returns its size in bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(_record("user", session_id, message={"role": "user", "content": "run the build"}))
        for i in range(results):
            call_id = f"call_{i}"
            args = {"command": f"make step-{i}"}
            f.write(
                _record(
                    "assistant",
                    session_id,
                    message={
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {
                                    "name": "run_shell_command",
                                    "arguments": encode(args).decode(),
                                },
                            }
                        ],
                    },
                    usage={"input_tokens": 11, "output_tokens": 3},
                )
            )
            display = _output(i, result_bytes)
            model_text = (
                "Tool output was too large and has been truncated.\n"
                f"Truncated part of the output:\n{display[:MODEL_TEXT_HEAD]}\n... [omitted] ...\n"
                f"{display[-MODEL_TEXT_TAIL:]}"
            )
            f.write(
                _record(
                    "tool_result",
                    session_id,
                    message={"role": "tool", "tool_call_id": call_id, "content": model_text},
                    call_id=call_id,
                    name="run_shell_command",
                    args=args,
                    is_error=False,
                    error=None,
                    error_type=None,
                    display=display,
                    artifact=None,
                )
            )
        f.write(_record("assistant", session_id, message={"role": "assistant", "content": "done"}))
        f.write(
            _record(
                "result",
                session_id,
                is_error=False,
                result="done",
                error=None,
                num_turns=results + 1,
            )
        )
    return path.stat().st_size


# -- the runs ----------------------------------------------------------------------------------


@dataclass
class Replay:
    """One ``session/load``: elapsed seconds, frames, bytes, largest update line, peak RSS."""

    seconds: float
    frames: int
    out_bytes: int
    max_update_line: int
    peak_rss_kb: int


def baseline(path: Path, buffering: int = -1) -> float:
    """Seconds a plain line-by-line read of ``path`` takes (timed inside the subprocess);
    ``buffering`` as for :func:`open` (-1: Python's default)."""
    done = subprocess.run(
        [sys.executable, "-c", BASELINE, str(path), str(buffering)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[0])


def _send(stdin: IO[bytes], message: dict[str, object]) -> None:
    stdin.write(orjson.dumps(message) + b"\n")
    stdin.flush()


def replay(home: Path, proj: Path, session_id: str) -> Replay:
    """Run ``headwire --acp``, load the session, and measure the load."""
    env = {
        **os.environ,
        "HOME": str(home),
        "HEADWIRE_HOME": str(home / ".headwire"),
        "PYTHONPATH": os.pathsep.join([str(SRC), str(ROOT)]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "headwire", "--acp", "--model", "scripted:done"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=proj,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    _send(
        proc.stdin,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
    )
    proc.stdout.readline()
    done_prefix = b'{"jsonrpc":"2.0","id":1,'
    frames = out_bytes = max_update = 0
    start = time.perf_counter()
    _send(
        proc.stdin,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/load",
            "params": {"sessionId": session_id, "cwd": str(proj), "mcpServers": []},
        },
    )
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the agent closed stdout before answering session/load")
        frames += 1
        out_bytes += len(line)
        if line.startswith(done_prefix):
            break
        if b'"sessionUpdate":"tool_call_update"' in line[:300]:
            max_update = max(max_update, len(line))
    seconds = time.perf_counter() - start
    if b'"result"' not in line:
        raise RuntimeError(f"session/load failed: {line[:500]!r}")
    proc.stdin.close()
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Replay(seconds, frames, out_bytes, max_update, usage.ru_maxrss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=1000, help="tool results in the session")
    parser.add_argument(
        "--short-results",
        type=int,
        default=None,
        help="tool results of the short session (memory comparison; default /10)",
    )
    parser.add_argument("--result-kb", type=int, default=256, help="display size of each result")
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    short = opts.short_results or max(1, opts.results // 10)
    with tempfile.TemporaryDirectory(prefix="headwire-acp-bench-") as tmp:
        home, proj = Path(tmp) / "home", Path(tmp) / "proj"
        proj.mkdir(parents=True)
        root = home / ".headwire"
        long_id, short_id = str(uuid.uuid4()), str(uuid.uuid4())
        folder = chats_dir(root, proj)
        size = write_recording(
            folder / f"{long_id}.jsonl", long_id, opts.results, opts.result_kb * 1024
        )
        short_size = write_recording(
            folder / f"{short_id}.jsonl", short_id, short, opts.result_kb * 1024
        )
        print(
            f"recording: {opts.results} tool results of {opts.result_kb} KB, "
            f"{size / 1e6:.1f} MB ({folder})"
        )
        base_s: list[float] = []
        big_buffer_s: list[float] = []
        runs: list[Replay] = []
        for _ in range(opts.repeat):
            base_s.append(baseline(folder / f"{long_id}.jsonl"))
            big_buffer_s.append(baseline(folder / f"{long_id}.jsonl", 1 << 20))
            runs.append(replay(home, proj, long_id))
        short_run = replay(home, proj, short_id)
    best_base = min(base_s)
    best = min(runs, key=lambda r: r.seconds)
    base_tp = size / best_base / 1e6
    replay_tp = size / best.seconds / 1e6
    ratio = replay_tp / base_tp
    print(f"baseline line read : {best_base:.3f} s  {base_tp:8.1f} MB/s (best of {opts.repeat})")
    print(
        f"  (same read, 1 MiB buffer: {min(big_buffer_s):.3f} s "
        f"{size / min(big_buffer_s) / 1e6:8.1f} MB/s; the replay reads with a 1 MiB buffer)"
    )
    print(
        f"acp session/load   : {best.seconds:.3f} s  {replay_tp:8.1f} MB/s "
        f"(best of {opts.repeat}); "
        f"{best.frames} frames, {best.out_bytes / 1e6:.1f} MB out, "
        f"largest tool_call_update line {best.max_update_line} B"
    )
    print(
        f"ratio              : {ratio:.2f} (target >= {TARGET_RATIO:.2f}) "
        f"{'OK' if ratio >= TARGET_RATIO else 'BELOW TARGET'}"
    )
    print(
        f"peak RSS           : {max(r.peak_rss_kb for r in runs) / 1024:.1f} MB for "
        f"{size / 1e6:.0f} MB ({opts.results} results); {short_run.peak_rss_kb / 1024:.1f} MB for "
        f"{short_size / 1e6:.0f} MB ({short} results)"
    )
    return 0 if ratio >= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
