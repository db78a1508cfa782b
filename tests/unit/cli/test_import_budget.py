"""A run imports what it uses (issue 28): which modules the fast paths load, not how long.

Import time itself is too noisy on a loaded machine to assert; the set of modules is steady.
Each test starts a real ``python -X importtime -m headwire`` and reads the module names it
reports on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = (
    "rich",
    "prompt_toolkit",
    "jsonschema",
    "mcp",
    "tree_sitter",
    "tree_sitter_bash",
    "httpx",
    "bs4",
    "markdownify",
    "nbformat",
    "pydantic",
)
"""Packages a one-shot ``--yolo -p`` run on the scripted model has no use for."""


def _imported(args: list[str], cwd: Path, home: Path) -> tuple[set[str], str]:
    """The top-level names and full module names ``headwire ARGS`` imports, and its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEADWIRE_"))}
    env.update(HOME=str(home), HEADWIRE_HOME=str(home / ".headwire"), TERM="dumb")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "headwire", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return names, done.stdout


def test_version_imports_the_minimum(tmp_path: Path) -> None:
    """``--version``: headwire's entry point and its terminal writer, and no ``typing``,
    ``asyncio`` or anything of the agent."""
    names, out = _imported(["--version"], tmp_path, tmp_path)
    assert out.strip()
    ours = {n for n in names if n == "headwire" or n.startswith("headwire.")}
    assert ours <= {
        "headwire",
        "headwire.cli",
        "headwire.cli.main",
        "headwire.io",
        "headwire.io.stdio",
        "headwire.printable",
    }, sorted(ours)
    assert not names & {"typing", "asyncio", "argparse", "orjson", "json", "dataclasses"}


def test_one_shot_yolo_run_loads_no_heavy_package(tmp_path: Path) -> None:
    """``--yolo -o stream-json -p`` with one shell call on the scripted model: no terminal UI,
    schema validator, MCP SDK, shell parser or HTTP client is imported."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    script = tmp_path / "script.jsonl"
    turns = [{"tool": "run_shell_command", "args": {"command": "echo hi"}}, {"text": "done"}]
    script.write_text("".join(json.dumps(t) + "\n" for t in turns))
    args = ["--script", str(script), "--yolo", "-o", "stream-json", "-p", "go"]
    names, out = _imported(args, proj, home)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["type"] == "result" and result["is_error"] is False
    loaded = sorted(h for h in HEAVY if h in names)
    assert not loaded, f"imported without use: {loaded}"


BOUND_MODULES = {
    "headwire",
    "headwire.bound",
    "headwire.bound.blocks",
    "headwire.bound.filter",
    "headwire.bound.lines",
    "headwire.bound.shapes",
    "headwire.cli",
    "headwire.cli.commands",
    "headwire.cli.commands.bound",
    "headwire.cli.flags",
    "headwire.cli.flags.parsing",
    "headwire.cli.main",
    "headwire.errors",
    "headwire.io",
    "headwire.io.stdio",
    "headwire.printable",
    "headwire.projection",
    "headwire.projection.acp",
    "headwire.projection.fair_share",
    "headwire.projection.headless",
    "headwire.projection.json_string",
    "headwire.wire",
    "headwire.wire.decode",
    "headwire.wire.deep_json",
    "headwire.wire.encode",
    "headwire.wire.size",
    "headwire.wire.sse_lines",
}
"""What ``headwire bound`` loads of headwire: the filter, the projection and JSON writer it
bounds with, its command and the shared argument parser (the wire package's face brings its
SSE splitter along)."""


def test_bound_imports_only_the_filter(tmp_path: Path) -> None:
    """``headwire bound`` (issue 28: the filter at line-copy speed) loads the filter and what
    it bounds with, and nothing of the agent; no ``difflib`` (only a usage error suggests a
    flag), no ``shutil`` (argparse's formatter width is read without it), no dataclasses of
    its own (orjson loads ``dataclasses`` for itself)."""
    stream = tmp_path / "in.jsonl"
    stream.write_bytes(b'{"type":"system"}\n')
    names, out = _imported(["bound", str(stream)], tmp_path, tmp_path)
    assert out == '{"type":"system"}\n'
    ours = {n for n in names if n == "headwire" or n.startswith("headwire.")}
    assert ours == BOUND_MODULES, sorted(ours ^ BOUND_MODULES)
    assert not names & {"difflib", "shutil", "asyncio", "threading", "subprocess", *HEAVY}
