"""A 100-turn persistent session: memory stays flat, the transport costs under 2 ms a turn.

Two measurements, both with the scripted model (no network, no model latency):

1. **Memory, end to end.**  ``python -m headwire --input-format stream-json --output-format
   stream-json`` is driven over real pipes by ``headwire.sdk``; every turn runs the Quick start
   tool (499,999 bytes of output, bounded to a 65,536-byte ``tool_result.content`` on the wire)
   and then answers ``done``.  After each turn the child's ``VmHWM`` (peak RSS) and ``VmRSS``
   are read from ``/proc``.  Target: peak at turn 100 within 10% of the peak at turn 10.
2. **Transport overhead, in process.**  The same :class:`~headwire.cli.run.session.Session`
   routes the input lines and writes every message to ``/dev/null``; the time spent in
   ``handle_line`` (parse and route the ``user`` line) and in ``send`` (encode, frame, write
   each message of the turn) is summed per turn.  Target: under 2 ms per turn (median and
   p95 of its CPU time; wall time is printed too), for text turns and for big-output turns.
   For text turns the whole turn minus the model's own time is reported too (agent loop and
   recording included).

    PYTHONPATH=src python benchmarks/session.py --turns 100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from headwire.cli.flags.agent import apply_compat, build_parser  # noqa: E402
from headwire.cli.run.session import Session  # noqa: E402
from headwire.io.writer import WireWriter  # noqa: E402
from headwire.protocol.messages import JsonDict  # noqa: E402
from headwire.runtime.models.base import Model, ModelEvent, ModelRequest  # noqa: E402
from headwire.sdk import Options, ResultMessage  # noqa: E402
from headwire.sdk import Session as Client  # noqa: E402

BIG_TOOL = {
    "tool": "run_shell_command",
    "args": {
        "command": "python3 -c \"print('x'*499998)\"",
        "description": "print a large output",
        "is_background": False,
    },
}
MEMORY_TARGET = 0.10
OVERHEAD_TARGET_MS = 2.0


def write_script(path: Path, turns: int, big: bool) -> Path:
    entries: list[dict[str, Any]] = []
    for n in range(turns):
        if big:
            entries.append(BIG_TOOL)
        entries.append({"text": f"done {n + 1}"})
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def proc_status(pid: int) -> dict[str, int]:
    """``VmHWM`` and ``VmRSS`` of ``pid`` in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(value.split()[0])
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- 1. memory over real pipes ------------------------------------------------------------------


async def memory_run(turns: int, work: Path) -> list[dict[str, float]]:
    script = write_script(work / "big.jsonl", turns, big=True)
    proj = work / "proj"
    proj.mkdir(exist_ok=True)
    env = {"HEADWIRE_HOME": str(work / "home"), "HOME": str(work / "home")}
    opts = Options(cwd=proj, env=env, model=f"scripted:{script}", approval_mode="yolo")
    rows: list[dict[str, float]] = []
    async with Client(opts) as client:
        assert client.transport is not None and client.transport.pid is not None
        pid = client.transport.pid
        for n in range(1, turns + 1):
            started = time.perf_counter()
            result = None
            async for message in client.turn(f"turn {n}"):
                if isinstance(message, ResultMessage):
                    result = message
            assert result is not None and result.result == f"done {n}", result
            wall = (time.perf_counter() - started) * 1000
            rows.append({"turn": n, "wall_ms": wall, **proc_status(pid)})
    return rows


# -- 2. transport overhead in process ------------------------------------------------------------


class TimedModel:
    """Wraps a model and sums the time spent inside its stream (the model's own time)."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.ns = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        events = self.inner.stream(request).__aiter__()
        while True:
            started = time.perf_counter_ns()
            try:
                event = await events.__anext__()
            except StopAsyncIteration:
                self.ns += time.perf_counter_ns() - started
                return
            self.ns += time.perf_counter_ns() - started
            yield event


class TimedSession(Session):
    """A session that sums the time of its transport work (wall and CPU) and signals each
    ``result``.  CPU time (``thread_time``) is the overhead itself; wall time also counts the
    moments the scheduler gave the CPU to another process."""

    transport_ns = 0
    transport_cpu_ns = 0
    done: asyncio.Event

    def send(self, message: JsonDict) -> None:
        started, cpu = time.perf_counter_ns(), time.thread_time_ns()
        super().send(message)
        self.transport_ns += time.perf_counter_ns() - started
        self.transport_cpu_ns += time.thread_time_ns() - cpu
        if message.get("type") == "result":
            self.done.set()

    def handle_line(self, raw: bytes) -> None:
        started, cpu = time.perf_counter_ns(), time.thread_time_ns()
        super().handle_line(raw)
        self.transport_ns += time.perf_counter_ns() - started
        self.transport_cpu_ns += time.thread_time_ns() - cpu


async def overhead_run(turns: int, work: Path, big: bool) -> list[dict[str, float]]:
    script = write_script(work / ("o-big.jsonl" if big else "o-text.jsonl"), turns, big)
    os.environ["HEADWIRE_HOME"] = str(work / "home-overhead")
    args = build_parser().parse_args(
        [
            "--script",
            str(script),
            "--yolo",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ]
    )
    apply_compat(args)
    proj = work / "proj"
    proj.mkdir(exist_ok=True)
    devnull = open(os.devnull, "wb")  # noqa: SIM115
    session = await TimedSession.open(args, WireWriter(devnull), proj)
    timed = TimedModel(session.runtime.agent.model)
    session.runtime.agent.model = timed  # the benchmark's own probe, not the product's wiring
    session.done = asyncio.Event()
    session.handle_line(  # an SDK session: initialize first (not timed)
        b'{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}'
    )
    worker = asyncio.create_task(session.run_turns())
    rows: list[dict[str, float]] = []
    try:
        for n in range(1, turns + 1):
            line = json.dumps(
                {
                    "type": "user",
                    "session_id": "",
                    "parent_tool_use_id": None,
                    "message": {"role": "user", "content": f"turn {n}"},
                }
            ).encode()
            session.transport_ns = session.transport_cpu_ns = 0
            timed.ns = 0
            session.done.clear()
            started = time.perf_counter_ns()
            session.handle_line(line)
            await session.done.wait()
            total = time.perf_counter_ns() - started
            rows.append(
                {
                    "turn": n,
                    "transport_ms": session.transport_ns / 1e6,
                    "transport_cpu_ms": session.transport_cpu_ns / 1e6,
                    "non_model_ms": (total - timed.ns) / 1e6,
                    "total_ms": total / 1e6,
                }
            )
    finally:
        session.turns.put_nowait(None)
        await worker
        await session.aclose()
        devnull.close()
    return rows


def summarize(name: str, values: list[float]) -> str:
    return (
        f"{name}: median {statistics.median(values):.3f} ms, p95 {percentile(values, 0.95):.3f} ms,"
        f" max {max(values):.3f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--skip-memory", action="store_true")
    ns = parser.parse_args()
    turns = ns.turns
    ok = True
    with tempfile.TemporaryDirectory(prefix="headwire-session-bench-") as tmp:
        work = Path(tmp)
        if not ns.skip_memory:
            rows = asyncio.run(memory_run(turns, work))
            at10, last = rows[min(9, len(rows) - 1)], rows[-1]
            growth = last["VmHWM"] / at10["VmHWM"] - 1
            print(f"memory, {turns} turns of 499,999-byte tool output over pipes (headwire.sdk):")
            for row in (rows[0], at10, rows[len(rows) // 2], last):
                print(
                    f"  turn {int(row['turn']):>3}: peak RSS {row['VmHWM'] / 1024:7.1f} MiB,"
                    f" RSS {row['VmRSS'] / 1024:7.1f} MiB, turn wall {row['wall_ms']:6.1f} ms"
                )
            print(
                f"  peak at turn {int(last['turn'])} vs turn {int(at10['turn'])}: {growth:+.1%}"
                f" (target within {MEMORY_TARGET:.0%}): "
                f"{'PASS' if growth <= MEMORY_TARGET else 'FAIL'}"
            )
            print(
                "  "
                + summarize(
                    "turn wall (client send -> result, incl. the tool)",
                    [r["wall_ms"] for r in rows[1:]],
                )
            )
            ok &= growth <= MEMORY_TARGET
        for big in (False, True):
            rows = asyncio.run(overhead_run(turns, work, big))[1:]  # turn 1 warms caches
            label = "big-output tool turns" if big else "text turns"
            transport = [r["transport_cpu_ms"] for r in rows]
            print(f"transport overhead per turn, {label} (in process, stdout to /dev/null):")
            print("  " + summarize("handle_line + send, CPU", transport))
            print("  " + summarize("handle_line + send, wall", [r["transport_ms"] for r in rows]))
            if not big:
                print(
                    "  "
                    + summarize("whole turn minus model time", [r["non_model_ms"] for r in rows])
                )
            passed = statistics.median(transport) < OVERHEAD_TARGET_MS and (
                percentile(transport, 0.95) < OVERHEAD_TARGET_MS
            )
            print(
                f"  target < {OVERHEAD_TARGET_MS} ms (median and p95): "
                f"{'PASS' if passed else 'FAIL'}"
            )
            ok &= passed
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
