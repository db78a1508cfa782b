"""Context files (``QWEN.md``, ``AGENTS.md``): where they are found and how they are joined.

Discovery follows Qwen Code 0.24.4's ``loadServerHierarchicalMemory``.  For each configured
name, in order (``context.fileName``, default ``QWEN.md`` then ``AGENTS.md``):

1. ``<data dir>/<name>`` (``~/.headwire``, Qwen Code's ``~/.qwen``);
2. when the working directory is the home directory: ``~/<name>``;
3. otherwise, in a trusted folder: every ``<dir>/<name>`` from the top down, where the
   directories run from the working directory up to the repository root (the nearest
   directory holding ``.git``) *and the one above it*, or up to the home directory's parent
   when there is no repository; the walk stops early at the data directory.

Paths are then deduplicated by their real path (first one kept) and each readable file with
non-blank text becomes one block::

    --- Context from: <path relative to the working directory> ---
    <text, trimmed>
    --- End of Context from: <same path> ---

joined by blank lines.  A file over :data:`MAX_CONTEXT_FILE_BYTES` is cut there (with a note),
an unreadable one skipped with a note.  (Not done: Qwen Code's ``@file`` imports and
``QWEN.local.md``.)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_CONTEXT_FILE_BYTES = 1024 * 1024
"""Bytes read from one context file; the rest is left out with a note on stderr."""


@dataclass(frozen=True, slots=True)
class ContextFile:
    """One loaded context file: where it is, how the prompt names it, its text."""

    path: Path
    display: str
    text: str


def find_project_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds a ``.git`` file or directory."""
    current = start
    while True:
        if os.path.lexists(current / ".git"):
            return current
        if current.parent == current:
            return None
        current = current.parent


def context_file_paths(
    cwd: Path,
    user_dir: Path,
    names: Sequence[str],
    *,
    home: Path | None = None,
    trusted: bool = True,
) -> list[Path]:
    """The context files that exist, in load order (before deduplication by real path)."""
    cwd = Path(os.path.abspath(cwd))
    home = Path(os.path.abspath(home if home is not None else Path.home()))
    user_dir = Path(os.path.abspath(user_dir))
    found: list[Path] = []

    def add(path: Path) -> None:
        if path not in found and os.access(path, os.R_OK) and path.is_file():
            found.append(path)

    root = find_project_root(cwd)
    stop = root.parent if root is not None else home.parent
    for name in names:
        global_path = user_dir / name
        add(global_path)
        if cwd == home:
            if home / name != global_path:
                add(home / name)
            continue
        if not trusted:
            continue
        upward: list[Path] = []
        current = cwd
        while current != current.parent:
            if current in (user_dir, home / ".headwire"):
                break
            candidate = current / name
            if candidate != global_path:
                upward.insert(0, candidate)
            if current == stop:
                break
            current = current.parent
        for path in upward:
            add(path)
    return found


def _dedupe(paths: Sequence[Path]) -> list[Path]:
    seen: set[str] = set()
    out: list[Path] = []
    for path in paths:
        try:
            identity = os.path.realpath(path)
        except OSError:
            identity = str(path)
        if identity not in seen:
            seen.add(identity)
            out.append(path)
    return out


def read_context_files(
    paths: Sequence[Path], cwd: Path, note: Callable[[str], None] | None = None
) -> list[ContextFile]:
    """Read each file (UTF-8, invalid bytes replaced), at most :data:`MAX_CONTEXT_FILE_BYTES`."""
    out: list[ContextFile] = []
    for path in _dedupe(paths):
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_CONTEXT_FILE_BYTES + 1)
        except OSError as exc:
            if note is not None:
                note(f"headwire: note: context file {path} skipped: {exc.strerror or exc}")
            continue
        if len(raw) > MAX_CONTEXT_FILE_BYTES:
            raw = raw[:MAX_CONTEXT_FILE_BYTES]
            if note is not None:
                note(
                    f"headwire: note: context file {path} is longer than "
                    f"{MAX_CONTEXT_FILE_BYTES} bytes; the rest is left out"
                )
        text = raw.decode("utf-8", "replace")
        out.append(ContextFile(path, os.path.relpath(path, cwd), text))
    return out


def format_context(files: Sequence[ContextFile]) -> str:
    """The blocks of the files with non-blank text, joined by blank lines (pure)."""
    blocks = [
        f"--- Context from: {f.display} ---\n{f.text.strip()}\n"
        f"--- End of Context from: {f.display} ---"
        for f in files
        if f.text.strip()
    ]
    return "\n\n".join(blocks)


def load_context(
    cwd: Path,
    user_dir: Path,
    names: Sequence[str],
    *,
    home: Path | None = None,
    trusted: bool = True,
    note: Callable[[str], None] | None = None,
) -> str:
    """Find, read and join the context files for a session in ``cwd``."""
    paths = context_file_paths(cwd, user_dir, names, home=home, trusted=trusted)
    return format_context(read_context_files(paths, cwd, note))
