"""One-turn wall time per provider against its fake server, beside the OpenAI one.

Each round runs ``headwire --auth-type P -m fake-model -o text -p hi`` once per provider (the
order rotating every round, so load on a shared machine spreads evenly) against that API's
fake server over real HTTP; the model answers ``done``.  The table shows each provider's
median and its ratio to OpenAI's (target <= 1.20), then ``headwire --version`` startup
(target < 150 ms) and the in-process import time of each provider module.

    python benchmarks/providers.py [--rounds 15] [--baseline /path/to/another/checkout]

``--baseline`` also times the OpenAI run of another source tree (``ROOT/src`` of a checkout of
``main``, say) in the same rounds, for a before/after ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.e2e.providers import PROVIDERS  # noqa: E402

NAMES = ["openai", "anthropic", "gemini"]


def one_turn(
    provider: str, fake_url_env: dict[str, str], work: Path, src: Path = ROOT / "src"
) -> float:
    home, proj = work / "home", work / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "HEADWIRE_HOME": str(home / ".headwire"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(src),
        **fake_url_env,
    }
    cmd = [sys.executable, "-m", "headwire", "--auth-type", provider, "-m", "fake-model"]
    started = time.perf_counter()
    done = subprocess.run(
        [*cmd, "-o", "text", "-p", "hi"], env=env, cwd=proj, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or done.stdout != b"done\n":
        raise SystemExit(f"{provider}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def import_ms(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = []
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONPATH": str(ROOT / "src"), "PATH": os.environ.get("PATH", "")},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        times.append(float(out) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="another checkout to time (openai only)")
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in [*NAMES, "baseline"]}
    fakes = {
        name: PROVIDERS[name].fake({"replies": [], "default": {"text": "done"}}) for name in NAMES
    }
    for fake in fakes.values():
        fake.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for number in range(args.rounds):
                order = NAMES[number % 3 :] + NAMES[: number % 3]
                for name in order:
                    env = PROVIDERS[name].env(fakes[name], "sk-bench")
                    times[name].append(one_turn(name, env, Path(tmp) / f"{name}-{number}"))
                if args.baseline:
                    env = PROVIDERS["openai"].env(fakes["openai"], "sk-bench")
                    work = Path(tmp) / f"baseline-{number}"
                    times["baseline"].append(one_turn("openai", env, work, args.baseline / "src"))
            starts = []
            for _ in range(11):
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "headwire", "--version"],
                    env={"PYTHONPATH": str(ROOT / "src"), "PATH": os.environ.get("PATH", "")},
                    capture_output=True,
                    check=True,
                )
                starts.append(time.perf_counter() - started)
    finally:
        for fake in fakes.values():
            fake.stop()
    failed = False
    base = statistics.median(times["openai"])
    for name in NAMES:
        median = statistics.median(times[name])
        ratio = median / base
        ok = ratio <= 1.20
        failed |= not ok
        print(
            f"one turn  {name:9} median {median * 1000:6.0f} ms "
            f"(min {min(times[name]) * 1000:5.0f}) ratio to openai {ratio:.3f} "
            f"{'PASS' if ok else 'FAIL'} (target <= 1.20)"
        )
    if times["baseline"]:
        median = statistics.median(times["baseline"])
        print(
            f"one turn  openai of {args.baseline} (baseline) median {median * 1000:6.0f} ms; "
            f"this tree / baseline {base / median:.3f}"
        )
    start_ms = statistics.median(starts) * 1000
    failed |= start_ms >= 150
    print(
        f"startup   headwire --version median {start_ms:.0f} ms "
        f"{'PASS' if start_ms < 150 else 'FAIL'} (target < 150 ms)"
    )
    for module in (
        "headwire.runtime.models.openai",
        "headwire.runtime.models.anthropic",
        "headwire.runtime.models.gemini",
    ):
        print(f"import    {module:34} median {import_ms(module):5.0f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
