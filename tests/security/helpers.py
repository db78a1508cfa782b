"""Shared pieces of the security suite: a workspace with an outside world, and tool calls."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headwire.runtime.tools.base import Tool, ToolContext, ToolOutcome
from tests.e2e.helpers import Proc, env_for

SECRET = "top secret: the crown jewels\n"
"""The content of every file outside the workspace; it must never reach a tool result."""


class DirSink:
    """An artifact sink writing numbered private files into one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0

    def save(self, tool_name: str, data: bytes) -> Path:
        """Write ``data`` to a new 0600 file."""
        self.count += 1
        path = self.directory / f"{tool_name}_{self.count}.output"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return path


@dataclass
class World:
    """``ws`` (the workspace), ``extra`` (an added directory) and ``outside`` (forbidden)."""

    root: Path
    ws: Path
    extra: Path
    outside: Path

    def ctx(self, *, with_extra: bool = False) -> ToolContext:
        """A tool context rooted at ``ws`` (plus ``extra`` when asked)."""
        artifacts = self.root / "artifacts"
        artifacts.mkdir(exist_ok=True)
        dirs = (self.extra,) if with_extra else ()
        return ToolContext(cwd=self.ws, artifacts=DirSink(artifacts), workspace_dirs=dirs)

    def outside_snapshot(self) -> dict[str, tuple[str, bytes | None]]:
        """Every entry under ``outside`` with its kind and content (to prove nothing changed)."""
        return snapshot(self.outside)


def snapshot(top: Path) -> dict[str, tuple[str, bytes | None]]:
    """Every entry under ``top`` (symlinks not followed) with its kind and file content."""
    found: dict[str, tuple[str, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[str(path)] = ("link", os.readlink(path).encode())
            elif stat.S_ISDIR(mode):
                found[str(path)] = ("dir", None)
            else:
                found[str(path)] = ("file", path.read_bytes())
    return found


def make_world(tmp: Path) -> World:
    """A workspace, an added directory and an outside directory holding secrets."""
    ws, extra, outside = tmp / "ws", tmp / "extra", tmp / "outside"
    for directory in (ws, extra, outside, outside / "sub"):
        directory.mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "sub" / "deep.txt").write_text(SECRET)
    (ws / "inside.txt").write_text("hello inside\n")
    (extra / "added.txt").write_text("hello added\n")
    return World(tmp, ws, extra, outside)


def run_tool(tool: Tool, ctx: ToolContext, **args: Any) -> ToolOutcome:
    """Validate and run one call.

    A validation problem becomes an ``invalid_tool_params`` outcome.
    """
    problem = tool.validate(args)
    if problem is not None:
        return ToolOutcome(llm_text=problem, error=problem, error_type="invalid_tool_params")
    return asyncio.run(tool.run(args, ctx))


def outcome_text(outcome: ToolOutcome) -> str:
    """Everything a tool outcome could show anyone: model text, display, error, extras."""
    return json.dumps(
        [outcome.llm_text, outcome.display, outcome.error, outcome.extra], default=str
    )


def run_headwire(
    args: list[str],
    tmp: Path,
    *,
    stdin: bytes = b"",
    umask: int | None = None,
    timeout: float = 90,
    env: Mapping[str, str] | None = None,
) -> Proc:
    """``python -m headwire ARGS`` in ``tmp/proj`` with home ``tmp/home``, under ``umask``,
    with the variables of ``env`` added to a clean environment."""
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "headwire", *args],
        cwd=proj,
        env=env_for(home, **(env or {})),
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
        umask=-1 if umask is None else umask,
    )
    return Proc(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"), home)


def modes_under(top: Path) -> dict[str, tuple[str, int]]:
    """``relative path -> (kind, permission bits)`` for everything under ``top`` (and itself)."""
    found = {".": ("dir", stat.S_IMODE(top.stat().st_mode))}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            kind = "link" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode) else "file"
            found[str(path.relative_to(top))] = (kind, stat.S_IMODE(mode))
    return found
