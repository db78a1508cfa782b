"""``headwire sessions``: list over 1,000 recordings, and an HTML export of 200 x 5 MB results.

Targets (issue 14): ``headwire sessions list`` over 1,000 recordings, some of them 100 MB, in
under 0.5 s; ``headwire sessions export ID --format html`` of a session with 200 tool results of
5 MB each in under 2 s, writing under 5 MB.  Each command is a real ``headwire`` process, timed
from spawn to exit; ``headwire --version`` is timed in the same run as the baseline of process
start-up, and the table gives each command's ratio to it.

The fixtures are written with the real :class:`headwire.runtime.store.recording.Recorder`, with the
fields the agent records.  The 100 MB recordings are sparse (a real head and tail around a hole
the file system does not store), so generating them is fast while ``list`` still sees 100 MB
files; two of them are real 100 MB recordings holding one 100 MB tool output each.

    python benchmarks/sessions.py            # both measurements
    python benchmarks/sessions.py --quick    # 1,000 small recordings and 20 x 5 MB (smoke)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from headwire.runtime.store.recording import Recorder  # noqa: E402
from headwire.runtime.store.storage import ArtifactStore  # noqa: E402

MB = 1_000_000


def env_for(home: Path) -> dict[str, str]:
    """A clean environment; Python may cache bytecode, as it does on a user's machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEADWIRE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["HEADWIRE_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def timed(args: list[str], home: Path, cwd: Path) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "headwire", *args],
        env=env_for(home),
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"headwire {' '.join(args)} failed: {done.stderr.decode()[-2000:]}")
    return elapsed, done.stdout


def median_time(args: list[str], home: Path, cwd: Path, repeat: int) -> float:
    return statistics.median(timed(args, home, cwd)[0] for _ in range(repeat))


def one_turn(
    rec: Recorder, prompt: str, output: str | None = None, artifact: str | None = None
) -> None:
    rec.record("user", message={"role": "user", "content": prompt})
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "run_shell_command", "arguments": '{"command":"make"}'},
    }
    usage = {
        "input_tokens": 10,
        "output_tokens": 3,
        "cache_read_input_tokens": 0,
        "total_tokens": 13,
    }
    rec.record(
        "assistant",
        message={"role": "assistant", "content": None, "tool_calls": [call]},
        usage=usage,
    )
    display = output if output is not None else "ok"
    rec.record(
        "tool_result",
        message={"role": "tool", "tool_call_id": "call_1", "content": display[:2000]},
        call_id="call_1",
        name="run_shell_command",
        args={"command": "make"},
        is_error=False,
        error=None,
        error_type=None,
        display=display,
        artifact=artifact,
    )
    rec.record("assistant", message={"role": "assistant", "content": "done"}, usage=usage)
    rec.record("result", is_error=False, result="done", error=None, num_turns=2)


def make_many(home: Path, count: int, sparse_big: int, real_big: int) -> None:
    """``count`` recordings over 25 projects; ``sparse_big`` + ``real_big`` of them 100 MB."""
    for i in range(count):
        cwd = Path(f"/work/project-{i % 25:02d}")
        rec = Recorder(home, cwd, f"session-{i:04d}-{'x' * 8}")
        if i < real_big:
            one_turn(rec, f"prompt {i}: run the huge build", "y" * (100 * MB))
        else:
            one_turn(rec, f"prompt {i}: fix the failing test in module {i}")
        rec.close()
        if real_big <= i < real_big + sparse_big:
            # a 100 MB recording: the head above, a hole, then a finished second turn
            with open(rec.path, "r+b") as f:
                f.truncate(100 * MB)
            rec = Recorder(home, cwd, rec.session_id)
            one_turn(rec, "second prompt")
            rec.close()


def make_export(home: Path, cwd: Path, results: int, size: int) -> str:
    """One session with ``results`` tool results of ``size`` bytes each, with artifacts."""
    store = ArtifactStore(home, cwd)
    rec = Recorder(home, cwd, "export-session")
    rec.record("user", message={"role": "user", "content": "Build everything, show the logs."})
    line = "compiling module and linking object files: ok <warn> & done\n"
    body = (line * (size // len(line) + 1))[:size]
    usage = {
        "input_tokens": 10,
        "output_tokens": 3,
        "cache_read_input_tokens": 0,
        "total_tokens": 13,
    }
    for i in range(results):
        call_id = f"call_{i}"
        call = {
            "id": call_id,
            "type": "function",
            "function": {
                "name": "run_shell_command",
                "arguments": json.dumps({"command": f"make {i}"}),
            },
        }
        rec.record(
            "assistant",
            message={"role": "assistant", "content": None, "tool_calls": [call]},
            usage=usage,
        )
        output = f"step {i}\n" + body
        artifact = store.save("run_shell_command", output.encode())
        model_text = output[:6000] + "\n...\n" + output[-24000:]
        rec.record(
            "tool_result",
            message={"role": "tool", "tool_call_id": call_id, "content": model_text},
            call_id=call_id,
            name="run_shell_command",
            args={"command": f"make {i}"},
            is_error=False,
            error=None,
            error_type=None,
            display=output,
            artifact=str(artifact),
        )
    rec.record("assistant", message={"role": "assistant", "content": "done"}, usage=usage)
    rec.record("result", is_error=False, result="done", error=None, num_turns=results + 1)
    rec.close()
    return rec.session_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small fixtures (a smoke run)")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hw-bench-sessions-") as tmp:
        base = Path(tmp)
        home, cwd = base / "home", base / "proj"
        cwd.mkdir()
        rows: list[tuple[str, float, str]] = []
        started = time.perf_counter()
        make_many(home, 1000, 0 if options.quick else 10, 0 if options.quick else 2)
        made = time.perf_counter() - started
        on_disk = sum(p.stat().st_size for p in (home / "projects").rglob("*.jsonl"))
        print(f"fixture: 1,000 recordings, {on_disk / MB:,.0f} MB apparent, made in {made:.1f} s")
        version = median_time(["--version"], home, cwd, options.repeat)
        rows.append(("headwire --version (baseline)", version, ""))
        cold, out = timed(["sessions", "list", "--limit", "0"], home, cwd)
        assert out.count(b"\n") == 1001, out[-500:]
        rows.append(("sessions list, no index yet (cold)", cold, "build the index"))
        warm = median_time(["sessions", "list", "--limit", "0"], home, cwd, options.repeat)
        rows.append(("sessions list (index present)", warm, "target < 0.5 s"))
        results, size = (20, 5 * MB) if options.quick else (200, 5 * MB)
        started = time.perf_counter()
        sid = make_export(home, cwd, results, size)
        made = time.perf_counter() - started
        print(f"fixture: {results} tool results of {size / MB:.0f} MB, made in {made:.1f} s")
        out_file = base / "export.html"
        export_args = ["sessions", "export", sid, "--format", "html", "-o", str(out_file)]
        export = median_time(export_args, home, cwd, 3)
        rows.append((f"sessions export --format html ({results} x 5 MB)", export, "target < 2 s"))
        width = max(len(r[0]) for r in rows)
        print(f"{'command':<{width}}  {'median s':>9}  {'/ --version':>11}")
        for name, seconds, note in rows:
            print(f"{name:<{width}}  {seconds:9.3f}  {seconds / version:11.1f}  {note}")
        html_size = out_file.stat().st_size
        print(f"export size: {html_size:,} bytes (target < 5,000,000)")
        ok = warm < 0.5 and export < 2 and html_size < 5_000_000
        print("targets met" if ok else "TARGETS MISSED")
        return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
