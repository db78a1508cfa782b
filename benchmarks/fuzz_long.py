"""The long fuzz run: every target of ``tests/fuzz`` for many inputs, counted per target.

The targets are the fuzz suite's own generators and invariant checks (``tests/fuzz``), driven
without hypothesis's per-example overhead by one of two engines:

* ``random`` (default, no dependency): a seeded :class:`random.Random` makes every choice;
* ``atheris`` (``pip install atheris``): libFuzzer's coverage-guided mutation of the bytes the
  choices are read from (:class:`BytesChooser`), with the ``headwire`` package instrumented.

Each target runs in its own worker process (``--jobs`` at a time) until it has used its share
of ``--total`` inputs or ``--minutes``; the parent prints one line per target and the total.
An input that breaks an invariant (an exception, a failed check, a hang over
``--timeout`` seconds) is a finding: the random engine saves the seed that replays it under
``--findings`` and goes on (at most ``--max-findings`` per target); atheris writes its crash file
there and stops that target.

    PYTHONPATH=src:. python benchmarks/fuzz_long.py --total 1668000 --minutes 70
    PYTHONPATH=src:. python benchmarks/fuzz_long.py --only acp.parse --total 50000
    PYTHONPATH=src:. python benchmarks/fuzz_long.py --replay fuzz-findings/acp.parse-123.seed
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
for _path in (str(ROOT), str(ROOT / "src")):  # the tests' generators and the package
    if _path not in sys.path:
        sys.path.insert(0, _path)
T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """One fuzz target: its share of the inputs and how one input is made and checked."""

    name: str
    weight: float
    """Relative share of ``--total`` (the in-process session and ACP drivers are slower, so
    they get fewer inputs)."""
    module: str
    """The ``tests.fuzz`` module whose generators and checks it uses."""
    run: str
    """The function in this file that makes, feeds and checks one input."""


TARGETS = (
    Target("session.stdin", 40, "test_fuzz_session", "session_stdin"),
    Target("session.control", 25, "test_fuzz_session", "session_control"),
    Target("session.prompt_text", 150, "test_fuzz_session", "session_prompt_text"),
    Target("acp.server", 40, "test_fuzz_acp", "acp_server"),
    Target("acp.parse", 250, "test_fuzz_acp", "acp_parse"),
    Target("bound.filter", 20, "test_fuzz_bound", "bound_filter"),
    Target("bound.line", 150, "test_fuzz_bound", "bound_line"),
    Target("configs.script", 150, "test_fuzz_configs", "configs_script"),
    Target("configs.agent", 150, "test_fuzz_configs", "configs_agent"),
    Target("configs.mcp", 150, "test_fuzz_configs", "configs_mcp"),
    Target("configs.acp_mcp", 150, "test_fuzz_configs", "configs_acp_mcp"),
    Target("configs.settings", 50, "test_fuzz_configs", "configs_settings"),
    Target("projection.headless", 20, "test_fuzz_projection", "projection_headless"),
    Target("projection.acp", 50, "test_fuzz_projection", "projection_acp"),
    Target("projection.emitter", 35, "test_fuzz_projection", "projection_emitter"),
    Target("text.file_names", 8, "test_fuzz_text", "text_file_names"),
    Target("text.sse", 40, "test_fuzz_text", "text_sse"),
    Target("text.mcp_lines", 150, "test_fuzz_text", "text_mcp_lines"),
    Target("text.recording", 10, "test_fuzz_text", "text_recording"),
    Target("text.stdin_prompts", 15, "test_fuzz_text", "text_stdin_prompts"),
    Target("text.acp_prompts", 15, "test_fuzz_text", "text_acp_prompts"),
)
"""The targets; the weights (thousands of inputs in a 1,668,000-input run) give every target
roughly four to eight minutes of one core on a 2-core machine."""


# -- choices from bytes (atheris, replays) ---------------------------------------------------


class BytesChooser:
    """Choices read from a byte string (libFuzzer mutates it); zeros once it runs out."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def _take(self, count: int) -> int:
        chunk = self.data[self.at : self.at + count].ljust(count, b"\0")
        self.at += count
        return int.from_bytes(chunk, "little")

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]`` (1, 2 or 4 bytes, by the size of the range)."""
        span = high - low
        if span <= 0:
            return low
        width = 1 if span < 256 else 2 if span < 65_536 else 4
        return low + self._take(width) % (span + 1)

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        return options[self.integer(0, len(options) - 1)]

    def json_value(self) -> Any:
        """A small random value seeded from the next four bytes."""
        from tests.fuzz.common import RandomChooser

        return RandomChooser(random.Random(self._take(4))).json_value()


# -- one input per target ----------------------------------------------------------------------


def _inner(test: Any) -> Callable[..., None]:
    """The undecorated body of a hypothesis test (its invariant checks)."""
    inner: Callable[..., None] = test.hypothesis.inner_test
    return inner


def session_stdin(c: Any) -> int:
    """A batch of lines through a session's stdin pipe; returns the lines fed."""
    from tests.fuzz import test_fuzz_session as s

    lines = s.session_lines(c)
    _inner(s.test_every_stdin_line_is_handled)(lines, bool(c.integer(0, 1)))
    return sum(line.count(b"\n") + 1 for line in lines)


def session_control(c: Any) -> int:
    """Lines, ``can_use_tool`` answers and tool outputs through a driven session."""
    from tests.fuzz import test_fuzz_session as s

    case = s.tool_case(c)
    _inner(s.test_control_protocol_and_tool_results)(case)
    return sum(line.count(b"\n") + 1 for line in (*case[0], *case[1]))


def session_prompt_text(c: Any) -> int:
    """``_prompt_text`` of one value."""
    from tests.fuzz import test_fuzz_session as s

    _inner(s.test_prompt_text_returns_text_or_none)(s.prompt_value(c))
    return 1


def acp_server(c: Any) -> int:
    """A batch of lines and permission answers through a driven ACP server."""
    from tests.fuzz import test_fuzz_acp as a

    case = a.acp_case(c)
    _inner(a.test_every_acp_line_is_answered)(case)
    return sum(line.count(b"\n") + 1 for line in (*case[0], *case[1]))


def acp_parse(c: Any) -> int:
    """``parse_message`` on one line against the documented classification."""
    from tests.fuzz import test_fuzz_acp as a
    from tests.fuzz.common import fuzz_line, seeds

    _inner(a.test_parse_message_classifies_every_line)(
        a.unambiguous(fuzz_line(c, seeds("acp"), a.acp_message))
    )
    return 1


def bound_filter(c: Any) -> int:
    """A stream through ``BoundFilter``, whole, split and again; returns its lines."""
    from tests.fuzz import test_fuzz_bound as b

    case = b.stream(c)
    _inner(b.test_bound_filter_invariants)(case)
    return case[0].count(b"\n") + 1


def bound_line(c: Any) -> int:
    """``bound_line`` on one line in one format."""
    from tests.fuzz import test_fuzz_bound as b
    from tests.fuzz.common import fuzz_line, seeds

    from headwire.bound import Format

    _inner(b.test_bound_line_never_raises)(
        fuzz_line(c, seeds("bound"), b.message), c.pick(list(Format))
    )
    return 1


def configs_script(c: Any) -> int:
    """``parse_script`` on one script (and playing it)."""
    from tests.fuzz import test_fuzz_configs as f

    _inner(f.test_scripts_parse_or_raise_script_error)(f.script_text(c))
    return 1


def configs_agent(c: Any) -> int:
    """``parse_agent_file`` on one file."""
    from tests.fuzz import test_fuzz_configs as f

    _inner(f.test_agent_files_parse_or_raise_agent_file_error)(f.agent_text(c))
    return 1


def configs_mcp(c: Any) -> int:
    """One ``--mcp-config`` value and its servers."""
    from tests.fuzz import test_fuzz_configs as f

    _inner(f.test_mcp_config_values_parse_or_raise_mcp_config_error)(f.settings_text(c))
    return 1


def configs_acp_mcp(c: Any) -> int:
    """One ACP ``mcpServers`` array."""
    from tests.fuzz import test_fuzz_configs as f

    _inner(f.test_acp_mcp_server_lists_never_raise)(f.acp_servers(c))
    return 1


def configs_settings(c: Any) -> int:
    """User and project settings files and ``--mcp-config`` values, from disk."""
    from tests.fuzz import test_fuzz_configs as f

    case = (
        f.settings_text(c),
        f.settings_text(c),
        [f.text_of(f.settings_text(c)) for _ in range(c.integer(0, 1))],
    )
    _inner(f.test_settings_files_never_raise)(case)
    return 1


def projection_headless(c: Any) -> int:
    """The headless bound, and the generic one under a random budget and marker."""
    from tests.fuzz import test_fuzz_projection as p

    text = p.tool_text(c)
    _inner(p.test_headless_projection_invariants)(text)
    _inner(p.test_projection_with_any_budget_and_marker)(
        text, c.integer(0, 200_000), c.pick(p.MARKERS)
    )
    return 1


def projection_acp(c: Any) -> int:
    """The ACP bound on one update."""
    from tests.fuzz import test_fuzz_projection as p

    _inner(p.test_acp_projection_invariants)(p.acp_update(c))
    return 1


def projection_emitter(c: Any) -> int:
    """The headless emitter on one tool response."""
    from tests.fuzz import test_fuzz_projection as p

    _inner(p.test_the_emitter_bounds_every_tool_result)(p.tool_response(c))
    return 1


def text_file_names(c: Any) -> int:
    """Tools over file names of any bytes; every outcome written and read back."""
    from tests.fuzz import test_fuzz_text as t

    _inner(t.test_file_names_of_any_bytes_cross_every_writer)(t.file_case(c))
    return 1


def text_sse(c: Any) -> int:
    """One SSE body of any text through the real OpenAI client."""
    from tests.fuzz import test_fuzz_text as t

    _inner(t.test_sse_chunks_of_any_text_arrive_as_sent)(t.sse_case(c))
    return 1


def text_mcp_lines(c: Any) -> int:
    """One MCP stdio line of any text."""
    from tests.fuzz import test_fuzz_text as t

    _inner(t.test_mcp_lines_of_any_text_are_read_as_node_reads_them)(t.mcp_case(c))
    return 1


def text_recording(c: Any) -> int:
    """Records of any text and depth, written and read back; returns the records."""
    from tests.fuzz import test_fuzz_text as t

    records = t.record_case(c)
    _inner(t.test_every_record_written_is_read_back)(records)
    return len(records)


def text_stdin_prompts(c: Any) -> int:
    """Prompts holding lone surrogates through a session's stdin."""
    from tests.fuzz import test_fuzz_text as t

    lines = t.surrogate_prompts(c)
    _inner(t.test_stdin_prompts_with_lone_surrogates_are_answered)(lines)
    return len(lines)


def text_acp_prompts(c: Any) -> int:
    """Prompts holding lone surrogates through an ACP server."""
    from tests.fuzz import test_fuzz_text as t

    case = t.acp_prompts(c)
    _inner(t.test_acp_prompts_with_lone_surrogates_are_answered)(case)
    return len(case[0])


# -- the worker ---------------------------------------------------------------------------------


class Hang(Exception):
    """One input ran past ``--timeout``."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread after ``seconds``."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_DEVNULL = open(os.devnull, "w")  # noqa: SIM115


def _quiet() -> contextlib.AbstractContextManager[Any]:
    """Silence the notes the readers write on stderr (the drivers check their own copy)."""
    return contextlib.redirect_stderr(_DEVNULL)


def _tidy(inputs: int) -> None:
    """Every 200 inputs, drop the recordings the in-process sessions wrote."""
    drivers = sys.modules.get("tests.fuzz.drivers")
    if drivers is not None and inputs % 200 == 199:
        drivers.home().clean()


def run_random(
    target: Target,
    count: int,
    minutes: float,
    seed: int,
    timeout: float,
    findings: Path,
    max_findings: int,
) -> dict[str, Any]:
    """Run ``count`` random inputs (or until ``minutes``); returns the summary."""
    from tests.fuzz.common import RandomChooser

    step: Callable[[Any], int] = globals()[target.run]
    stop = time.monotonic() + minutes * 60
    inputs = lines = 0
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    started = time.monotonic()
    while inputs < count and time.monotonic() < stop:
        input_seed = seed * 1_000_003 + inputs
        chooser = RandomChooser(random.Random(input_seed))
        try:
            with deadline(timeout), _quiet():
                lines += step(chooser)
        except Exception as exc:
            key = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
            if key not in seen:
                seen.add(key)
                findings.mkdir(parents=True, exist_ok=True)
                path = findings / f"{target.name}-{input_seed}.seed"
                path.write_text(
                    json.dumps(
                        {
                            "target": target.name,
                            "seed": input_seed,
                            "error": key,
                            "traceback": traceback.format_exc(),
                        }
                    )
                )
                found.append({"seed": input_seed, "error": key, "file": str(path)})
            if len(found) >= max_findings:
                inputs += 1
                break
        _tidy(inputs)
        inputs += 1
    return {
        "target": target.name,
        "engine": "random",
        "inputs": inputs,
        "lines": lines,
        "seconds": round(time.monotonic() - started, 1),
        "findings": found,
    }


def run_atheris(
    target: Target, count: int, minutes: float, timeout: float, findings: Path
) -> dict[str, Any]:
    """Run libFuzzer on the target for ``count`` inputs; returns the summary (exits early, with
    the crash file under ``findings``, on the first finding)."""
    import atheris  # type: ignore[import-untyped, import-not-found, unused-ignore]

    with atheris.instrument_imports(include=["headwire"]):
        import headwire.acp.server
        import headwire.bound
        import headwire.cli.run.session
        import headwire.runtime.agents.definitions
        import headwire.runtime.mcp.config
        import headwire.runtime.models.scripted  # noqa: F401
    step: Callable[[Any], int] = globals()[target.run]
    counted = {"inputs": 0, "lines": 0}

    progress = findings / f"{target.name}.progress.json"

    def one(data: bytes) -> None:
        _tidy(counted["inputs"])
        counted["inputs"] += 1
        with _quiet():
            counted["lines"] += step(BytesChooser(data))
        if counted["inputs"] % 256 == 0:  # libFuzzer exits without returning: keep a count
            progress.write_text(json.dumps(counted))

    findings.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    argv = [
        sys.argv[0],
        f"-runs={count}",
        f"-max_total_time={int(minutes * 60)}",
        f"-timeout={int(timeout)}",
        f"-artifact_prefix={findings}/{target.name}-",
        "-rss_limit_mb=4096",
        "-print_final_stats=1",
    ]
    atheris.Setup(argv, one)
    with contextlib.suppress(SystemExit):
        atheris.Fuzz()
    return {
        "target": target.name,
        "engine": "atheris",
        "inputs": counted["inputs"],
        "lines": counted["lines"],
        "seconds": round(time.monotonic() - started, 1),
        "findings": [],
    }


def atheris_summary(target: Target, findings: Path, seconds: float) -> dict[str, Any]:
    """A libFuzzer worker's summary: its final stats (in its log) and its last count."""
    log = (findings / f"{target.name}.log").read_text(errors="replace")
    executed = [
        int(line.rsplit(":", 1)[1])
        for line in log.splitlines()
        if line.startswith("stat::number_of_executed_units:")
    ]
    progress = json.loads((findings / f"{target.name}.progress.json").read_text())
    crashed = [line for line in log.splitlines() if "Test unit written to" in line]
    return {
        "target": target.name,
        "engine": "atheris",
        "inputs": executed[-1] if executed else progress["inputs"],
        "lines": progress["lines"],
        "seconds": seconds,
        "findings": [{"error": line} for line in crashed],
    }


def worker(args: argparse.Namespace) -> int:
    """``--worker NAME``: run one target and print its summary as the last stdout line."""
    (target,) = [t for t in TARGETS if t.name == args.worker]
    if args.engine == "atheris":
        summary = run_atheris(target, args.count, args.minutes, args.timeout, args.findings)
    else:
        summary = run_random(
            target,
            args.count,
            args.minutes,
            args.seed,
            args.timeout,
            args.findings,
            args.max_findings,
        )
    sys.stdout.write(json.dumps(summary) + "\n")
    sys.stdout.flush()
    return 0


def replay(path: Path) -> int:
    """Re-run one saved random-engine finding with its traceback on stderr."""
    from tests.fuzz.common import RandomChooser

    record = json.loads(path.read_text())
    (target,) = [t for t in TARGETS if t.name == record["target"]]
    step: Callable[[Any], int] = globals()[target.run]
    step(RandomChooser(random.Random(record["seed"])))
    print(f"{target.name}: seed {record['seed']} passes now")
    return 0


# -- the parent ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Parse the flags and run the targets (or one worker, or one replay)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--total", type=int, default=1_668_000, help="inputs over all targets")
    parser.add_argument("--minutes", type=float, default=55.0, help="wall-clock budget")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--engine", choices=["random", "atheris"], default="random")
    parser.add_argument("--only", action="append", help="run only these targets")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per input")
    parser.add_argument("--findings", type=Path, default=Path("fuzz-findings"))
    parser.add_argument("--max-findings", type=int, default=10)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--replay", type=Path, help="re-run one saved finding")
    args = parser.parse_args(argv)
    if args.replay is not None:
        return replay(args.replay)
    if args.worker:
        return worker(args)
    chosen = [t for t in TARGETS if not args.only or t.name in args.only]
    weights = sum(t.weight for t in chosen)
    queue = [(t, max(1, round(args.total * t.weight / weights))) for t in chosen]
    # Every target gets the whole budget at most; the slow drivers first, so the cheap
    # targets fill the end of the run.
    queue.sort(key=lambda item: item[0].weight)
    per_target_minutes = args.minutes * args.jobs / max(len(queue), 1) * 1.5
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    running: list[tuple[Target, int, subprocess.Popen[str], float]] = []
    results: list[dict[str, Any]] = []
    deadline_at = time.monotonic() + args.minutes * 60
    print(
        f"fuzzing {len(queue)} targets, {args.total} inputs, {args.jobs} jobs, "
        f"engine {args.engine}",
        flush=True,
    )
    while queue or running:
        while queue and len(running) < args.jobs:
            target, count = queue.pop(0)
            minutes = max(0.5, min(per_target_minutes, (deadline_at - time.monotonic()) / 60))
            cmd = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--worker",
                target.name,
                "--count",
                str(count),
                "--minutes",
                f"{minutes:.2f}",
                "--engine",
                args.engine,
                "--seed",
                str(args.seed),
                "--timeout",
                str(args.timeout),
                "--findings",
                str(args.findings),
                "--max-findings",
                str(args.max_findings),
            ]
            args.findings.mkdir(parents=True, exist_ok=True)
            with (args.findings / f"{target.name}.log").open("w") as log:
                proc = subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env, cwd=ROOT
                )
            running.append((target, count, proc, time.monotonic()))
        time.sleep(0.5)
        for item in list(running):
            target, count, proc, began = item
            if proc.poll() is None:
                continue
            running.remove(item)
            out = (proc.stdout.read() if proc.stdout else "").strip().splitlines()
            try:
                summary = (
                    json.loads(out[-1])
                    if args.engine == "random"
                    else atheris_summary(target, args.findings, round(time.monotonic() - began, 1))
                )
            except (IndexError, ValueError, OSError):
                summary = {
                    "target": target.name,
                    "inputs": 0,
                    "lines": 0,
                    "findings": [{"error": f"worker exited {proc.returncode} without a summary"}],
                    "seconds": round(time.monotonic() - began, 1),
                }
            if args.engine == "atheris" and proc.returncode not in (0, None):
                summary["findings"].append(
                    {"error": f"libFuzzer exit {proc.returncode}; see {args.findings}"}
                )
            results.append(summary)
            rate = summary["inputs"] / max(summary["seconds"], 0.001)
            print(
                f"{summary['target']:22} {summary['inputs']:>9} inputs {summary['lines']:>9} lines "
                f"{summary['seconds']:>8.1f} s {rate:>9.0f}/s  findings: {len(summary['findings'])}"
                f"{' of ' + str(count) if summary['inputs'] < count else ''}",
                flush=True,
            )
            for finding in summary["findings"]:
                print(f"    {finding}", flush=True)
    total = sum(r["inputs"] for r in results)
    lines = sum(r["lines"] for r in results)
    found = sum(len(r["findings"]) for r in results)
    print(
        f"TOTAL {total} inputs ({lines} lines or texts) over {len(results)} targets, "
        f"{found} findings",
        flush=True,
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
