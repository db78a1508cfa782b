"""Every code block of the README runs as written.

``sh`` blocks that install (``pip install``) are what ``.ci/run`` does before the suite, so
they are not repeated here; the others run in ``bash`` from a scratch directory whose ``.venv``
is this test run's environment (with headwire installed in it, as the install block leaves
it).  ``python`` blocks run with this interpreter.  Each gets a private ``HEADWIRE_HOME``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)
COVERED = re.compile(r"<!-- readme-test: covered by (\S+)[^>]*-->\n$")
"""A block that needs what the suite cannot reach (a provider's real endpoint) says, on the line
before it, which test runs the same commands against a local fake instead."""


def blocks() -> list[tuple[int, str, str]]:
    text = (ROOT / "README.md").read_text()
    return [
        (text[: m.start()].count("\n") + 1, m.group(1), m.group(2))
        for m in BLOCK.finditer(text)
        if m.group(1) in ("sh", "python") and not COVERED.search(text[: m.start()])
    ]


def test_every_block_left_out_names_a_test_that_exists() -> None:
    text = (ROOT / "README.md").read_text()
    named = re.findall(r"<!-- readme-test: covered by (\S+)", text)
    assert named and all((ROOT / path).is_file() for path in named)


RUNNABLE = [
    pytest.param(lang, code, id=f"line{line}-{lang}")
    for line, lang, code in blocks()
    if not (lang == "sh" and "pip install" in code)
]


def test_the_readme_has_the_blocks_this_test_runs() -> None:
    langs = [lang for _, lang, _ in blocks()]
    assert langs.count("python") >= 2 and len(RUNNABLE) >= 4


@pytest.mark.parametrize(("lang", "code"), RUNNABLE)
def test_a_readme_block_runs_as_written(lang: str, code: str, tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    assert (tmp_path / ".venv" / "bin" / "headwire").exists(), "headwire is not installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEADWIRE_"))}
    env.update(HOME=str(tmp_path), HEADWIRE_HOME=str(tmp_path / ".headwire"))
    argv = (
        ["bash", "-euo", "pipefail", "-c", code] if lang == "sh" else [sys.executable, "-c", code]
    )
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert b"Traceback" not in done.stderr
    if lang == "sh" or "print(" in code:
        assert done.stdout.strip()
    if lang == "python" and "scripted:demo" in code:
        assert done.stdout.endswith(b"done\n")
