"""Running the real ``headwire`` CLI as a subprocess in an isolated home and project."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.environment import fixed
from tests.wire_schema import check_run

ROOT = Path(__file__).resolve().parents[2]
BIG_COMMAND = "python3 -c \"print('x'*499998)\""
BIG_OUTPUT = b"x" * 499_998 + b"\n"
BIG_SHA256 = hashlib.sha256(BIG_OUTPUT).hexdigest()
PROVIDER_PREFIXES = ("OPENAI_", "HEADWIRE_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "QWEN_")
"""Variables left out of a test's environment: they would choose or configure the provider."""


@dataclass
class Proc:
    """A finished CLI run."""

    returncode: int
    stdout: bytes
    stderr: str
    home: Path

    def lines(self) -> list[dict[str, Any]]:
        """stdout parsed as JSON Lines."""
        return [json.loads(line) for line in self.stdout.decode().splitlines() if line.strip()]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment (no provider variables, the fixed terminal type, locale and width of
    :mod:`tests.environment`): private HOME/HEADWIRE_HOME, the source tree on PYTHONPATH."""
    env = {k: v for k, v in fixed(os.environ).items() if not k.startswith(PROVIDER_PREFIXES)}
    env["HOME"] = str(home)
    env["HEADWIRE_HOME"] = str(home / ".headwire")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    env.update(extra)
    return env


UPSTREAM_ENTRY = Path(os.environ.get("HEADWIRE_ORACLE_PKG_DIR", "/nonexistent")) / "cli-entry.js"
"""Upstream Qwen Code 0.24.4's CLI, where the oracle is installed."""

needs_upstream = pytest.mark.skipif(
    shutil.which("node") is None or not UPSTREAM_ENTRY.exists(),
    reason="upstream Qwen Code not installed (HEADWIRE_ORACLE_PKG_DIR)",
)
"""Skips a test of upstream's live behaviour where the oracle is not installed (the committed
capture it checks still covers the same ground for headwire)."""


def each_case(run: Callable[[str], Any], cases: Iterable[str], workers: int = 2) -> dict[str, Any]:
    """``{case: run(case)}`` with ``workers`` cases at a time: an upstream run is a Node process
    that takes seconds of one core, and each case has its own fake server and folders."""
    names = list(cases)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(names, pool.map(run, names), strict=True))


def check_capture(path: Path, got: Any) -> None:
    """Assert that ``got`` (what upstream did in a live run) is what the capture at ``path``
    holds; ``HEADWIRE_WRITE_CAPTURE=1`` rewrites the capture from ``got`` first."""
    if os.environ.get("HEADWIRE_WRITE_CAPTURE") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert got == json.loads(path.read_text())


def side_by_side(
    which: str, home: Path, flags: list[str], base_url: str, **headwire_env: str
) -> tuple[list[str], dict[str, str]]:
    """The command and environment of one CLI of a differential run against an
    OpenAI-compatible fake at ``base_url``: ``which`` is ``"upstream"`` (the oracle's
    ``cli-entry.js`` under node) or ``"headwire"`` (with ``headwire_env`` added)."""
    if which == "upstream":
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "OPENAI_API_KEY": "sk-fake-local",
            "OPENAI_BASE_URL": base_url,
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
        }
        return ["node", str(UPSTREAM_ENTRY), *flags], env
    env = env_for(home, OPENAI_BASE_URL=base_url, **headwire_env)
    return [sys.executable, "-m", "headwire", *flags], env


def run_cli(
    args: list[str],
    tmp: Path,
    *,
    stdin: bytes | None = None,
    timeout: float = 60,
    check_input: bool = True,
    **extra_env: str,
) -> Proc:
    """Run ``python -m headwire ARGS`` with ``tmp/proj`` as cwd and ``tmp/home`` as home.

    Every stdout line, and every stdin line sent, is checked against the wire schema
    (:func:`tests.wire_schema.check_run`); ``check_input=False`` for a test that sends
    deliberately malformed messages."""
    home = tmp / "home"
    proj = tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "headwire", *args],
        cwd=proj,
        env=env_for(home, **extra_env),
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    check_run(args, done.stdout, stdin, check_input=check_input)
    return Proc(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"), home)


def artifacts(home: Path) -> list[Path]:
    """Producer artifacts written under ``home``."""
    return sorted((home / ".headwire" / "tmp").rglob("*.output"))


def recordings(home: Path) -> list[Path]:
    """Session recordings written under ``home``."""
    return sorted((home / ".headwire" / "projects").rglob("*.jsonl"))


def write_script(path: Path, turns: list[dict[str, Any]]) -> Path:
    """Write a scripted-model file."""
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return path
