"""Throughput and peak memory of ``headwire bound`` against a plain Python line-copy loop.

Generates a stream-json file (default 1 GB) of mostly small events with, now and then, a tool
result of a few hundred KB, then runs, as subprocesses reading the file on stdin:

* the baseline: ``for line in sys.stdin.buffer: sys.stdout.buffer.write(line)``;
* ``headwire bound``, run as the installed ``headwire`` script runs it (:data:`ENTRY_POINT`:
  the entry point called directly; ``python -m headwire`` would add ``runpy``'s imports);
* with ``--compare-src DIR``, also ``headwire bound`` from another source tree (say
  ``git archive main src | tar -x -C /tmp/main``: the code before a change, in the same
  session).

Every source tree is compiled to bytecode first (``compileall``), so no run pays for
compiling headwire.  Each command is timed ``--repeat`` times, the runs alternated (baseline,
bound, baseline, ...); the script prints each median time and throughput, the median of the
per-round ratios baseline time / bound time (target: at least 0.9, issue 28), and the peak RSS
(GNU time's ``%M``) against the longest line.  ``--huge-line-mb N`` adds one tool result of N
MB to show how memory follows the longest line.

    python benchmarks/bound.py --size 1G [--compare-src /tmp/main/src]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TARGET_RATIO = 0.9
"""Issue 28: ``headwire bound`` at least 0.9x the throughput of the plain line copy."""

BASELINE = """\
import sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    out.write(line)
out.flush()
"""

ENTRY_POINT = """\
import sys
from headwire.cli import main
main.entry() if hasattr(main, "entry") else sys.exit(main.main())
"""
"""What the ``headwire`` script (``bin/headwire``) does, with the arguments after ``-c`` (a
source tree from before ``entry`` existed runs its console script's ``main``)."""

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    """``1G``, ``200M``, ``4096`` (binary units) as a byte count."""
    text = text.strip().upper().removesuffix("B")
    unit = text[-1:] if text[-1:] in _UNITS else ""
    return int(float(text[: len(text) - len(unit)]) * _UNITS[unit])


# -- the input ---------------------------------------------------------------------------------


ASCII_WORDS = ["the", "file", "def", "return", "src/app/main.py", "ok", "{x: 1}", "line\n", '"q"']
OTHER_WORDS = ["naïve", "中文", "😀", "Größe"]


def _text(rng: random.Random, words: int, non_ascii: float) -> str:
    """``words`` words, each non-ASCII with probability ``non_ascii``."""
    return " ".join(
        rng.choice(OTHER_WORDS if rng.random() < non_ascii else ASCII_WORDS) for _ in range(words)
    )


def _small_events(rng: random.Random, session: str, count: int, non_ascii: float) -> list[bytes]:
    """A pool of realistic small stream-json events (upstream key order)."""
    pool: list[bytes] = []
    for index in range(count):
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        text = _text(rng, rng.randint(1, 40), non_ascii)
        kind = index % 5
        event: object
        if kind == 0:
            delta = {"type": "text_delta", "text": text}
            event = {"type": "content_block_delta", "index": 0, "delta": delta}
            message: dict[str, object] = {"type": "stream_event", "event": event}
        elif kind == 1:
            message = {
                "type": "assistant",
                "message": {
                    "id": uid,
                    "type": "message",
                    "role": "assistant",
                    "model": "fake-model",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": None,
                    "usage": {"input_tokens": rng.randint(1, 9999), "output_tokens": 42},
                },
            }
        elif kind == 2:
            block = {
                "type": "tool_result",
                "tool_use_id": f"call_{index}",
                "is_error": False,
                "content": text,
            }
            message = {"type": "user", "message": {"role": "user", "content": [block]}}
        elif kind == 3:
            goal = {"v": 2, "goal": None, "activity": "idle"}
            message = {"type": "stream_event", "event": {"type": "goal_state", "goal_state": goal}}
        else:
            tool_use = {
                "type": "tool_use",
                "id": f"call_{index}",
                "name": "read_file",
                "input": {"path": text},
            }
            message = {"type": "assistant", "message": {"content": [tool_use]}}
        line = {
            "type": message.pop("type"),
            "uuid": uid,
            "session_id": session,
            "parent_tool_use_id": None,
            **message,
        }
        pool.append(orjson.dumps(line) + b"\n")
    return pool


def _tool_result(rng: random.Random, session: str, size: int, non_ascii: float) -> bytes:
    text = _text(rng, 4000, non_ascii)
    body = (text * (size // len(text) + 1))[:size]  # about ``size`` bytes: mostly ASCII
    block = {"type": "tool_result", "tool_use_id": "call_big", "is_error": False, "content": body}
    message = {
        "type": "user",
        "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "session_id": session,
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": [block]},
    }
    return orjson.dumps(message) + b"\n"


@dataclass
class Sample:
    """The generated file and what it holds."""

    path: Path
    size: int
    lines: int
    longest_line: int
    tool_results: int


def generate(path: Path, size: int, huge_line_mb: int, non_ascii: float, seed: int = 7) -> Sample:
    """Write about ``size`` bytes: one tool result of 200-600 KB per ~3 MB of small events."""
    rng = random.Random(seed)
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    pool = _small_events(rng, session, 4096, non_ascii)
    results = [
        _tool_result(rng, session, rng.randint(200_000, 600_000), non_ascii) for _ in range(16)
    ]
    written = lines = longest = big = 0
    with path.open("wb", buffering=1 << 20) as f:
        if huge_line_mb:
            line = _tool_result(rng, session, huge_line_mb << 20, non_ascii)
            f.write(line)
            written, lines, longest, big = len(line), 1, len(line), 1
        while written < size:
            batch = rng.choices(pool, k=8192)
            if rng.random() < 0.9:
                batch.append(rng.choice(results))
                big += 1
            data = b"".join(batch)
            f.write(data)
            written += len(data)
            lines += len(batch)
            longest = max(longest, max(map(len, batch)))
    return Sample(path, written, lines, longest, big)


# -- the runs ----------------------------------------------------------------------------------


@dataclass
class Run:
    """One subprocess run: wall time, peak RSS (bytes) and bytes written."""

    seconds: float
    peak_rss: int
    output_bytes: int


TIME = Path("/usr/bin/time")
"""GNU time: its ``%M`` is the child's own peak RSS.  ``wait4`` from this process would report
at least this process's RSS, because Linux keeps the peak across fork and exec."""


def run_once(argv: list[str], source: Path, sink: Path | None, src: Path = SRC) -> Run:
    """Run ``argv`` with ``source`` on stdin, stdout to ``sink`` (or /dev/null), ``src`` first
    on the path, bytecode read from (and, if missing, written to) ``__pycache__``."""
    drop = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")  # buffered stdout; cached bytecode
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = str(src)
    target = sink or Path(os.devnull)
    with (
        source.open("rb") as stdin,
        target.open("wb") as stdout,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as rss,
    ):
        timed = [str(TIME), "-f", "%M", "-o", rss.name, *argv] if TIME.exists() else argv
        started = time.perf_counter()
        proc = subprocess.Popen(timed, stdin=stdin, stdout=stdout, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            errors = err.read().decode(errors="replace")
            raise SystemExit(f"{argv} failed with {proc.returncode}:\n{errors}")
        kib = int(rss.read().split()[-1]) if TIME.exists() else usage.ru_maxrss
    written = sink.stat().st_size if sink is not None else 0
    return Run(seconds, kib * 1024, written)


def mb(n: float) -> str:
    return f"{n / (1 << 20):,.1f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--size",
        type=parse_size,
        default=parse_size("1G"),
        help="bytes of input to generate (default 1G)",
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="alternated runs of each (medians are reported)"
    )
    parser.add_argument(
        "--compare-src",
        type=Path,
        default=None,
        help="also time headwire bound from this source tree (e.g. main's src/)",
    )
    parser.add_argument(
        "--huge-line-mb", type=int, default=0, help="also put one tool result of this many MB first"
    )
    parser.add_argument(
        "--non-ascii",
        type=float,
        default=0.02,
        help="share of words that are not ASCII (default 0.02)",
    )
    parser.add_argument(
        "--bound-args", default="", help="extra arguments for headwire bound, e.g. --validate"
    )
    parser.add_argument("--dir", type=Path, default=None, help="where to put the temp files")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="also write the bound output to a file and check its line count",
    )
    options = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="headwire-bound-", dir=options.dir) as tmp:
        started = time.perf_counter()
        sample = generate(
            Path(tmp) / "input.jsonl", options.size, options.huge_line_mb, options.non_ascii
        )
        print(
            f"input: {mb(sample.size)}, {sample.lines:,} lines, {sample.tool_results} large "
            f"tool results, longest line {mb(sample.longest_line)} "
            f"(generated in {time.perf_counter() - started:.1f} s)"
        )
        python = sys.executable
        bound = [python, "-c", ENTRY_POINT, "bound", *options.bound_args.split()]
        commands: dict[str, tuple[list[str], Path]] = {
            "line-copy baseline": ([python, "-c", BASELINE], SRC),
            "headwire bound": (bound, SRC),
        }
        if options.compare_src is not None:
            commands["bound (--compare-src)"] = (bound, options.compare_src.resolve())
        for _, src in commands.values():  # no run pays for compiling headwire
            subprocess.run([python, "-m", "compileall", "-q", str(src)], check=True)
        runs: dict[str, list[Run]] = {name: [] for name in commands}
        for _ in range(options.repeat):
            for name, (command, src) in commands.items():
                runs[name].append(run_once(command, sample.path, None, src))
        baseline = runs["line-copy baseline"]
        for name, timed in runs.items():
            seconds = statistics.median(r.seconds for r in timed)
            rss = max(r.peak_rss for r in timed)
            spread = f"{min(r.seconds for r in timed):.2f}-{max(r.seconds for r in timed):.2f}"
            line = f"{name:>20}: {seconds:7.2f} s (range {spread})  {mb(sample.size / seconds)}/s"
            if name != "line-copy baseline":
                ratios = [b.seconds / r.seconds for b, r in zip(baseline, timed, strict=True)]
                line += f"  ratio {statistics.median(ratios):.2f}"
            print(f"{line}  peak RSS {mb(rss)}")
        ratios = [
            b.seconds / r.seconds for b, r in zip(baseline, runs["headwire bound"], strict=True)
        ]
        ratio = statistics.median(ratios)
        verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
        print(
            f"throughput ratio (baseline time / bound time, median of {len(ratios)} alternated "
            f"rounds): {ratio:.2f} ({verdict} >= {TARGET_RATIO})"
        )
        best = {name: max(timed, key=lambda r: r.peak_rss) for name, timed in runs.items()}
        bound_rss = best["headwire bound"].peak_rss
        extra = bound_rss - best["line-copy baseline"].peak_rss
        print(
            f"bound peak RSS {mb(bound_rss)} = {bound_rss / sample.longest_line:.1f} x longest "
            f"line; above the baseline's: {mb(extra)} = "
            f"{extra / sample.longest_line:.1f} x longest line"
        )
        if options.verify:
            sink = Path(tmp) / "output.jsonl"
            run_once(bound, sample.path, sink)
            with sink.open("rb") as f:
                out_lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
            status = "ok" if out_lines == sample.lines else "MISMATCH"
            print(f"verify: {out_lines:,} output lines for {sample.lines:,} input lines: {status}")
            if status != "ok":
                return 1
    return 0 if ratio >= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
