"""Wall time and peak memory of whole CLI sessions, headwire beside the upstream Qwen Code CLI.

Both run the same session against the same scripted fake OpenAI-compatible server (over real
HTTP): ``run_shell_command`` prints 499,999 bytes, then the model answers ``done``.  Each mode is
run ``--repeat`` times per CLI; the table shows medians and the headwire/upstream ratios
(targets: < 0.25 for both).  Also measured: ``headwire --version`` startup (target < 150 ms), and
with ``--many`` a session of 200 tool results of 5 MB each (target: peak RSS < 300 MB per mode).

    python benchmarks/cli.py                 # needs the upstream CLI for the ratios
    python benchmarks/cli.py --many          # adds the 200 x 5 MB session (takes minutes)

The upstream CLI is found at ``$HEADWIRE_UPSTREAM_QWEN`` or
``/tmp/oracle-home/node_modules/.bin/qwen`` (``npm install --prefix /tmp/oracle-home
@qwen-code/qwen-code@0.24.4``); without it only headwire's numbers are printed.
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

BIG = {
    "tool": "run_shell_command",
    "args": {
        "command": "python3 -c \"print('x'*499998)\"",
        "description": "print a large output",
        "is_background": False,
    },
}
MODES = {"text": ["-o", "text"], "json": ["-o", "json"], "stream-json": ["-o", "stream-json"]}
PROMPT = "Run the big output tool once, then say done."


def upstream_cli() -> str | None:
    path = os.environ.get("HEADWIRE_UPSTREAM_QWEN", "/tmp/oracle-home/node_modules/.bin/qwen")
    return path if os.path.exists(path) else None


def measure(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, bytes]:
    """Run ``cmd``; return wall seconds, the child's peak RSS in KiB, and its stdout."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        data = out.read()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed with exit code {proc.returncode}")
    return elapsed, usage.ru_maxrss, data


def session(
    cli: list[str], mode: list[str], script: list[dict[str, Any]], work: Path, extra: list[str]
) -> tuple[float, int, bytes]:
    home, proj = work / "home", work / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    with FakeOpenAI(script, model="fake-model") as fake:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "HEADWIRE_HOME": str(home / ".headwire"),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "OPENAI_API_KEY": "sk-fake-local",
            "OPENAI_BASE_URL": fake.base_url,
            "OPENAI_MODEL": "fake-model",
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            "PYTHONPATH": str(ROOT / "src"),
        }
        return measure(
            [
                *cli,
                "--auth-type",
                "openai",
                "-m",
                "fake-model",
                "--yolo",
                *mode,
                *extra,
                "-p",
                PROMPT,
            ],
            env,
            proj,
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--many", action="store_true", help="also run 200 tool results of 5 MB")
    args = parser.parse_args()
    headwire = [sys.executable, "-m", "headwire"]
    upstream = upstream_cli()
    rows: list[str] = []
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, mode in MODES.items():
            results: dict[str, list[tuple[float, int]]] = {"headwire": [], "upstream": []}
            for i in range(args.repeat):
                for label, cli in (
                    ("headwire", headwire),
                    ("upstream", [upstream] if upstream else None),
                ):
                    if cli is None:
                        continue
                    t, rss, out = session(
                        cli, mode, [BIG, {"text": "done"}], work / f"{label}-{name}-{i}", []
                    )
                    if name == "text":
                        assert out == b"done\n", out[:200]
                    results[label].append((t, rss))
            h_t = statistics.median(t for t, _ in results["headwire"])
            h_m = statistics.median(m for _, m in results["headwire"]) / 1024
            line = f"{name:12} headwire {h_t * 1000:8.0f} ms {h_m:7.1f} MiB"
            if results["upstream"]:
                u_t = statistics.median(t for t, _ in results["upstream"])
                u_m = statistics.median(m for _, m in results["upstream"]) / 1024
                rt, rm = h_t / u_t, h_m / u_m
                ok = rt < 0.25 and rm < 0.25
                failed |= not ok
                line += (
                    f" | upstream {u_t * 1000:8.0f} ms {u_m:7.1f} MiB | time ratio {rt:.3f}"
                    f" memory ratio {rm:.3f} {'PASS' if ok else 'FAIL'}"
                )
            rows.append(line)
        starts = []
        for _ in range(11):
            t, _, _ = measure(
                [*headwire, "--version"],
                {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "src")},
                work,
            )
            starts.append(t)
        start_ms = statistics.median(starts) * 1000
        failed |= start_ms >= 150
        rows.append(
            f"startup      headwire --version median {start_ms:.0f} ms "
            f"{'PASS' if start_ms < 150 else 'FAIL'} (target < 150 ms)"
        )
        if args.many:
            turn = {
                "tool": "run_shell_command",
                "args": {"command": "python3 -c \"import sys; sys.stdout.write('y'*5000000)\""},
            }
            script = [turn] * 200 + [{"text": "done"}]
            for name, mode in MODES.items():
                t, rss, out = session(
                    headwire, mode, script, work / f"many-{name}", ["--max-session-turns", "500"]
                )
                ok = rss / 1024 < 300
                failed |= not ok
                rows.append(
                    f"200x5MB {name:12} {t:6.1f} s peak {rss / 1024:7.1f} MiB "
                    f"{'PASS' if ok else 'FAIL'} (target < 300 MiB); stdout {len(out)} B"
                )
    print("\n".join(rows))
    print(json.dumps({"upstream": upstream is not None}))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
