"""ruff and mypy --strict over the package, run as part of the suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(
    shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
    reason="ruff not installed",
)
def test_ruff_clean() -> None:
    result = _run("ruff", "check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(
    shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
    reason="ruff not installed",
)
def test_ruff_format_clean() -> None:
    """The formatter's output is the code's layout: no ``# fmt: skip`` escapes."""
    result = _run("ruff", "format", "--check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr
    skips = [
        f"{path}:{n}"
        for top in ("src", "tests", "benchmarks")
        for path in (ROOT / top).rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if line.rstrip().endswith("# fmt" + ": skip")
    ]
    assert not skips, skips


def test_mypy_strict_clean() -> None:
    pytest.importorskip("mypy")
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
