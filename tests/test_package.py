"""Package quality: the distribution builds, passes ``twine check``, installs into a fresh
virtual environment and runs the README's Quick start from the wheel; the wheel is typed
(``py.typed``, checked by mypy from outside); ``docs/cli.md`` matches the parsers.

The build runs on a copy of the sources (the working tree gets no ``build/`` or
``*.egg-info``), without build isolation when the installed setuptools satisfies
``[build-system]`` (offline, a few seconds), else with it (pip fetches setuptools).  The fresh
environment gets the wheel with ``--no-deps``; its dependencies come from the running
interpreter's site-packages through a ``.pth`` line, so nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import headwire
from headwire.cli.docs.cli import GENERATOR, render

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
DATA_FILES = (
    "demo.jsonl",
    "big-output.jsonl",
    "done.jsonl",
    "settings.schema.json",
    "prices.json",
)


# ---------------------------------------------------------------------------------------------
# Every dependency is justified.


def test_every_dependency_has_its_reason_in_the_reference() -> None:
    """docs/reference.md's "Dependencies" table names every runtime dependency."""
    text = (ROOT / "docs" / "reference.md").read_text()
    table = text.split("## Dependencies", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([A-Za-z0-9_.-]+)`", table))
    for requirement in PYPROJECT["project"]["dependencies"]:
        name = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]
        assert name in named, f"{name}: say why in docs/reference.md, ## Dependencies"


# ---------------------------------------------------------------------------------------------
# The generated CLI reference.


def test_cli_reference_is_generated_from_the_parsers() -> None:
    committed = (ROOT / "docs" / "cli.md").read_text()
    assert committed == render(), f"docs/cli.md is stale: regenerate it with `{GENERATOR}`"


def test_cli_reference_covers_every_flag() -> None:
    from headwire.cli.commands import bound as bound_cmd
    from headwire.cli.flags import agent as flags

    text = render()
    for parser in (flags.build_parser(), bound_cmd._parser()):
        for action in parser._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}`" in text, flag


def test_cli_reference_module_prints_it() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "40"}
    done = subprocess.run(
        [sys.executable, "-m", "headwire.cli.docs.cli"],
        capture_output=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert done.stdout.decode() == render()


# ---------------------------------------------------------------------------------------------
# Build, check, install, run.


def _setuptools_ok() -> bool:
    """Whether the installed setuptools satisfies ``[build-system] requires``."""
    if (
        importlib.util.find_spec("setuptools") is None
        or importlib.util.find_spec("packaging") is None
    ):
        return False
    from importlib.metadata import version

    from packaging.requirements import Requirement

    return all(
        Requirement(req).name != "setuptools"
        or Requirement(req).specifier.contains(version("setuptools"))
        for req in PYPROJECT["build-system"]["requires"]
    )


def _source_copy(dest: Path) -> Path:
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md", "MANIFEST.in"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "bin", dest / "bin")
    shutil.copytree(
        ROOT / "src",
        dest / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"),
    )
    return dest


def _build(tmp: Path) -> tuple[Path, Path]:
    """Build sdist and wheel (the wheel from the sdist); returns their paths."""
    src = _source_copy(tmp / "src-copy")
    dist = tmp / "dist"
    no_isolation = ["--no-isolation"] if _setuptools_ok() else []  # else pip fetches setuptools
    done = subprocess.run(
        [sys.executable, "-m", "build", *no_isolation, "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=240,
        env=_clean_env(),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    return sdist, wheel


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without ``PYTHON*`` (a ``PYTHONPATH`` to the source tree would shadow
    the installed wheel), ``OPENAI_*`` and ``HEADWIRE_*``, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "OPENAI_", "HEADWIRE_", "PIP_"))
    }
    env.update(extra)
    return env


def _fresh_venv(tmp: Path, wheel: Path) -> Path:
    """A new virtual environment holding the wheel; dependencies come from this interpreter's
    site-packages (a ``.pth`` line), so the install is offline."""
    venv = tmp / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]
    Path(purelib, "_headwire_test_deps.pth").write_text(deps + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=_clean_env(),
        check=False,
    )
    assert done.returncode == 0 and "Successfully installed" in done.stdout, (
        done.stdout + done.stderr
    )
    return venv


def _quick_start_command() -> str:
    """The ``headwire ...`` part of the README's Quick start (up to the end of its line)."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert blocks, "the Quick start has no sh block"
    line = next(ln for b in blocks for ln in b.splitlines() if ".venv/bin/headwire" in ln)
    return line[line.index(".venv/bin/headwire") :]


@pytest.mark.slow
def test_build_check_install_and_quick_start(tmp_path: Path) -> None:
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package is not installed (pip install -e '.[test]')")
    sdist, wheel = _build(tmp_path)

    # twine check: metadata and the README render on PyPI.
    if importlib.util.find_spec("twine") is not None:
        done = subprocess.run(
            [sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    # The wheel's contents and metadata.
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(whl.read(meta_name).decode())
        (script_name,) = [n for n in names if n.endswith(".data/scripts/headwire")]
        script = whl.read(script_name).decode()
    assert "headwire/py.typed" in names
    assert {f"headwire/runtime/data/{f}" for f in DATA_FILES} <= names
    assert "headwire/protocol/schema/wire.json" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    assert meta["Name"] == "headwire" and meta["Version"] == headwire.__version__
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["License-Expression"] == "Apache-2.0"
    required = {
        re.split(r"[<>=;\[ ]", r, maxsplit=1)[0]
        for r in meta.get_all("Requires-Dist") or []
        if "extra ==" not in r
    }
    assert required == {
        "orjson",
        "pysimdjson",
        "httpx",
        "h11",
        "mcp",
        "ijson",
        "jsonschema",
        "google-re2",
        "nbformat",
        "markdownify",
        "beautifulsoup4",
        "tree-sitter",
        "tree-sitter-bash",
        "rich",
        "prompt_toolkit",
    }
    # The command is a plain script (no console-script wrapper importing ``re`` on each start).
    assert script.startswith("#!python\n") and "from headwire.cli.main import entry" in script
    assert "import re" not in script

    # A fresh environment: the console script, the version, the installed package is the wheel's.
    venv = _fresh_venv(tmp_path, wheel)
    exe = venv / "bin" / "headwire"
    version = subprocess.run(
        [str(exe), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_clean_env(),
        check=True,
    )
    assert version.stdout.strip() == headwire.__version__
    schema = subprocess.run(
        [str(exe), "schema", "--mode", "acp"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_clean_env(),
        check=True,
    )
    assert json.loads(schema.stdout)["x-mode"] == "acp"  # the schema is package data
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import headwire; print(headwire.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=_clean_env(),
    ).stdout
    assert where.startswith(str(venv)), where

    # The README's Quick start, its headwire command run from the installed wheel.
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    env = _clean_env(HOME=str(home), HEADWIRE_HOME=str(home / ".headwire"), LC_ALL="C")
    command = _quick_start_command().replace(".venv/bin/headwire", str(exe), 1)
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        capture_output=True,
        text=True,
        cwd=proj,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [re.match(r"\s*(\d+) bytes  (.*)", line) for line in done.stdout.splitlines()]
    assert rows and all(rows), done.stdout
    sizes = {m.group(2)[:40]: int(m.group(1)) for m in rows if m}
    (result_size,) = [
        size for head, size in sizes.items() if head.startswith('{"type":"user"') and size > 60_000
    ]
    assert 65_536 < result_size < 70_000
    assert rows[-1] and rows[-1].group(2).startswith('{"type":"result"')
    (artifact,) = (home / ".headwire" / "tmp").rglob("*.output")
    assert artifact.stat().st_size == 499_999

    # py.typed: mypy, run from outside, type-checks code against the installed package.
    if importlib.util.find_spec("mypy") is not None:
        probe = tmp_path / "probe.py"
        probe.write_text(
            "from headwire.projection import project_tool_result_content\n"
            "from headwire.wire import encode\n\n"
            "data: bytes = encode({'a': 1})\n"
            "text: str = project_tool_result_content('x' * 100_000)\n"
            "wrong: int = encode([])\n"
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--strict",
                "--no-incremental",
                "--python-executable",
                str(venv / "bin" / "python"),
                str(probe),
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=180,
            env=_clean_env(MYPY_CACHE_DIR=str(tmp_path / "mypy-cache")),
            check=False,
        )
        out = done.stdout
        assert "missing library stubs or py.typed marker" not in out, out
        assert (
            'Incompatible types in assignment (expression has type "bytes", '
            'variable has type "int")' in out
        ), out
        assert out.count("error:") == 1, out
