"""What telemetry costs a whole ``headwire -p`` run: off, to a file, over OTLP/HTTP.

The same session (one ``run_shell_command``, then ``done``, against the scripted fake
OpenAI-compatible server over real HTTP) is run in five modes, alternated (every round runs each
mode once, in turn, so drift on a shared machine hits them alike):

* ``none``: no telemetry setting at all;
* ``off``: ``telemetry`` configured (endpoint, protocol, outfile) but ``enabled: false``;
* ``file``: ``telemetry.outfile``;
* ``otlp-http``: ``otlpProtocol: http`` to a local OTLP/HTTP receiver
  (:mod:`tests.fakes.otlp_receiver`, which decodes what it gets).

The table shows the median wall time of each, its ratio to ``none`` and the milliseconds added.
Targets (issue 25): ``off`` adds nothing (within noise, < 10 ms), ``file`` and ``otlp-http`` add
at most 200 ms.  The flush at exit keeps its default budget (``FLUSH_BUDGET_S``).

    python benchmarks/telemetry.py --repeat 15
    python benchmarks/telemetry.py --repeat 15 --src /path/to/other/checkout/src   # before
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.fakes.fake_openai import FakeOpenAI  # noqa: E402
from tests.fakes.otlp_receiver import OtlpReceiver  # noqa: E402

SCRIPT: list[dict[str, Any]] = [
    {"tool": "run_shell_command", "args": {"command": "echo hi"}},
    {"text": "done"},
]
MODES = ("none", "off", "file", "otlp-http")
OFF_TARGET_MS = 10
ON_TARGET_MS = 200


def settings_for(mode: str, work: Path, endpoint: str) -> dict[str, Any] | None:
    if mode == "none":
        return {"model": {"maxSessionTurns": 50}}  # a settings file too, without telemetry
    if mode == "off":
        return {"telemetry": {"enabled": False, "otlpEndpoint": endpoint, "otlpProtocol": "http"}}
    if mode == "file":
        return {"telemetry": {"enabled": True, "outfile": str(work / "telemetry.jsonl")}}
    return {"telemetry": {"enabled": True, "otlpEndpoint": endpoint, "otlpProtocol": "http"}}


def run(mode: str, work: Path, base_url: str, endpoint: str, src: Path) -> float:
    home, proj = work / "home", work / "proj"
    (home / ".headwire").mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    settings = home / ".headwire" / "settings.json"
    chosen = settings_for(mode, work, endpoint)
    if chosen is None:
        settings.unlink(missing_ok=True)
    else:
        settings.write_text(json.dumps(chosen))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "HEADWIRE_HOME": str(home / ".headwire"),
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-fake-local",
        "OPENAI_BASE_URL": base_url,
        "PYTHONPATH": str(src),
    }
    cmd = [sys.executable, "-m", "headwire", "--auth-type", "openai", "-m", "fake-model"]
    cmd += ["--yolo", "-o", "json", "-p", "run echo, then say done"]
    started = time.perf_counter()
    done = subprocess.run(
        cmd, env=env, cwd=proj, capture_output=True, stdin=subprocess.DEVNULL, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{mode}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=11, help="rounds (each runs every mode)")
    parser.add_argument(
        "--src",
        type=Path,
        default=ROOT / "src",
        help="the headwire source folder to measure (another checkout's, for a before/after)",
    )
    args = parser.parse_args()
    times: dict[str, list[float]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as tmp, OtlpReceiver() as otlp:
        for i in range(args.repeat + 1):  # round 0 warms the caches and is not counted
            for mode in MODES:
                with FakeOpenAI(SCRIPT, model="fake-model") as fake:
                    t = run(mode, Path(tmp) / mode, fake.base_url, otlp.endpoint, args.src)
                if i:
                    times[mode].append(t)
        received = len(otlp.spans())
    base = statistics.median(times["none"])
    failed = False
    rows = []
    for mode in MODES:
        med = statistics.median(times[mode])
        added = (med - base) * 1000
        target = OFF_TARGET_MS if mode in ("none", "off") else ON_TARGET_MS
        ok = added <= target
        failed |= not ok
        rows.append(
            f"{mode:10} median {med * 1000:7.0f} ms  ratio {med / base:5.3f}  "
            f"added {added:+6.0f} ms  {'PASS' if ok else 'FAIL'} (target <= {target} ms)"
        )
    print("\n".join(rows))
    print(json.dumps({"repeat": args.repeat, "spans_received": received}))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
