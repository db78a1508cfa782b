"""A long run that outgrows the model's window: headwire beside upstream Qwen Code 0.24.4.

Both CLIs run the same task against the same fake OpenAI-compatible server
(``tests/fakes/long_task.py``): the model asks for ``--steps`` shell calls, each printing
``--bytes`` bytes (20,000 bytes are about 5,000 tokens), in a ``--window``-token window
(tokens = request bytes / 4); a request over the window gets HTTP 400
``context_length_exceeded``, every answered one reports its tokens as usage.  Measured per CLI,
from the server's log and the CLI's output:

* finished: exit 0 and the task's final answer;
* requests made (the rejected ones apart), compactions (requests that offer no tools or ask
  for a summary);
* peak request size as a fraction of the window (of every request, and of the answered ones:
  with the window unknown, a refused request is how a client learns it);
* total tokens billed (prompt + answer tokens of every answered request);
* wall time.

Targets (issue 23): headwire finishes wherever upstream does, bills fewer tokens, and its peak
request stays under 90% of the window.  ``--window-known`` (the default) gives both CLIs the
window in their settings (``model.generationConfig.contextWindowSize``); ``--window-unknown``
leaves it to the server's 400.

    python benchmarks/long_run.py                    # 30 x 20,000 bytes in 32,000 tokens
    python benchmarks/long_run.py --window-unknown

The upstream CLI is found at ``$HEADWIRE_UPSTREAM_QWEN``, else
``$HEADWIRE_ORACLE_PKG_DIR/cli.js`` (run with ``node``), else
``/tmp/oracle-home/node_modules/.bin/qwen``; without it only headwire's row is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.fakes.fake_openai import FakeOpenAI  # noqa: E402
from tests.fakes.long_task import LongTask  # noqa: E402

PROMPT = "Run the long task: call the tool as asked until it is finished."


def upstream_cli() -> list[str] | None:
    """The command that runs upstream Qwen Code, if it is installed."""
    explicit = os.environ.get("HEADWIRE_UPSTREAM_QWEN")
    if explicit and os.path.exists(explicit):
        return [explicit]
    pkg = os.environ.get("HEADWIRE_ORACLE_PKG_DIR")
    node = shutil.which("node")
    if pkg and node and (Path(pkg) / "cli.js").is_file():
        return [node, str(Path(pkg) / "cli.js")]
    default = "/tmp/oracle-home/node_modules/.bin/qwen"
    return [default] if os.path.exists(default) else None


def run_one(label: str, cli: list[str], args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One run of ``cli`` on the long task; its row of measurements."""
    home, proj = work / label / "home", work / label / "proj"
    home.mkdir(parents=True)
    proj.mkdir(parents=True)
    settings: dict[str, Any] = {}
    if not args.window_unknown:
        settings = {"model": {"generationConfig": {"contextWindowSize": args.window}}}
    (home / ".qwen").mkdir()
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    task = LongTask(steps=args.steps, output_bytes=args.bytes)
    with FakeOpenAI(window=args.window, long_task=task) as fake:
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
        extra = ["--settings", json.dumps(settings)] if label == "headwire" and settings else []
        cmd = [
            *cli,
            "--auth-type",
            "openai",
            "-m",
            "fake-model",
            "--yolo",
            "-o",
            "stream-json",
            *extra,
            "-p",
            PROMPT,
        ]
        started = time.perf_counter()
        proc = subprocess.run(
            cmd, env=env, cwd=proj, capture_output=True, timeout=args.timeout, check=False
        )
        wall = time.perf_counter() - started
        posts = [e for e in fake.log if e["method"] == "POST"]
    answered = [e for e in posts if not e["over_window"]]
    billed = sum(
        e["reply"]["usage"]["prompt_tokens"] + e["reply"]["usage"]["completion_tokens"]
        for e in answered
    )
    finished = proc.returncode == 0 and task.final_text.encode() in proc.stdout
    return {
        "cli": label,
        "finished": finished,
        "exit": proc.returncode,
        "steps_done": task.issued,
        "requests": len(answered),
        "rejected": len(posts) - len(answered),
        "compactions": task.summaries,
        "peak_fraction": round(max((e["tokens"] for e in posts), default=0) / args.window, 3),
        "peak_answered_fraction": round(
            max((e["tokens"] for e in answered), default=0) / args.window, 3
        ),
        "billed_tokens": billed,
        "wall_s": round(wall, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--bytes", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--window-unknown", action="store_true")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    args = parser.parse_args()
    clis: list[tuple[str, list[str] | None]] = [
        ("headwire", [sys.executable, "-m", "headwire"]),
        ("upstream", upstream_cli()),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, cli in clis:
            if cli is not None:
                rows.append(run_one(label, cli, args, Path(tmp)))
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    keys = list(rows[0])
    print(" | ".join(keys))
    for row in rows:
        print(" | ".join(str(row[k]) for k in keys))
    head = rows[0]
    # with the window unknown, the one request the server refuses is how headwire learns it
    peak = head["peak_answered_fraction" if args.window_unknown else "peak_fraction"]
    ok = head["finished"] and peak < 0.9
    if len(rows) == 2:
        up = rows[1]
        ok = ok and (head["finished"] or not up["finished"])
        ok = ok and (not up["finished"] or head["billed_tokens"] < up["billed_tokens"])
    print("targets met" if ok else "targets NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
