"""Context files (``QWEN.md``, ``AGENTS.md``): where they are found, what may be read, how they
are joined.

Discovery follows Qwen Code 0.24.4's documented hierarchy.  For each configured name, in order
(``context.fileName``, default ``QWEN.md`` then ``AGENTS.md``; a name is a file name, never a
path: one with a folder separator, ``.`` or ``..`` is skipped with a note):

1. ``<data dir>/<name>`` (``~/.headwire``, Qwen Code's ``~/.qwen``);
2. when the working directory is the home directory: ``~/<name>``;
3. otherwise every ``<dir>/<name>`` from the top down, where the directories run from the
   working directory up to the project root: the nearest directory holding ``.git``, else the
   home directory when the working directory is below it, else the working directory alone.
   Nothing above the project root is read (upstream's code also reads the root's parent; its
   documentation, and headwire, stop at the root).  The walk stops early at the data directory.

What may be read is the trust table's row for context files
(:data:`headwire.runtime.trust.CONTEXT_FILES_ENTRY`): text from inside the folder it was
found in, nothing else.  A context file is read only when it is a regular file whose real
path (links resolved) stays inside the real path of the folder it was found in, which is the
user's data folder, the home folder, or a folder of the repository; a link that leaves that
folder (to ``~/.ssh/id_rsa``, ``/proc/self/environ``), a FIFO, a device or a socket is skipped
with a one-line note, and opening never blocks.

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
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from headwire.records import dataclass
from headwire.runtime.trust import CONTEXT_FILES_ENTRY, project_may, read_project_file

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


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """``text`` with every C0/C1 control character (newlines, ESC) written as ``\\xNN``: a
    link target or folder name the repository chose cannot break a note's single line."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def is_file_name(name: str) -> bool:
    """Whether ``name`` is a plain file name: not empty, no folder separator or NUL, not
    ``.`` or ``..`` (so joining it onto a folder names a file *in* that folder)."""
    return (
        bool(name)
        and name not in (".", "..")
        and not any(c in name for c in ("/", "\\", "\0", os.sep))
    )


def project_top(cwd: Path, home: Path) -> Path:
    """The highest folder the upward walk reads: the repository root (nearest ``.git``), else
    the home folder when ``cwd`` is below it, else ``cwd`` itself."""
    root = find_project_root(cwd)
    if root is not None:
        return root
    return home if cwd.is_relative_to(home) else cwd


def context_file_paths(
    cwd: Path,
    user_dir: Path,
    names: Sequence[str],
    *,
    home: Path | None = None,
    trusted: bool = True,
    note: Callable[[str], None] | None = None,
) -> list[Path]:
    """The context files that exist, in load order (before deduplication by real path and
    before the checks of :func:`read_context_files`)."""
    cwd = Path(os.path.abspath(cwd))
    home = Path(os.path.abspath(home if home is not None else Path.home()))
    user_dir = Path(os.path.abspath(user_dir))
    found: list[Path] = []

    def add(path: Path) -> None:
        if path not in found and os.path.lexists(path) and not path.is_dir():
            found.append(path)

    top = project_top(cwd, home)
    walk = project_may(CONTEXT_FILES_ENTRY, trusted)
    for name in names:
        if not is_file_name(name):
            if note is not None:
                note(
                    one_line(f"headwire: note: context file name {name!r} skipped: not a file name")
                )
            continue
        global_path = user_dir / name
        add(global_path)
        if cwd == home:
            if home / name != global_path:
                add(home / name)
            continue
        if not walk:
            continue
        upward: list[Path] = []
        current = cwd
        while True:
            if current in (user_dir, home / ".headwire"):
                break
            candidate = current / name
            if candidate != global_path:
                upward.insert(0, candidate)
            if current == top or current == current.parent:
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
    """Read each regular file inside its folder (UTF-8, invalid bytes replaced), at most
    :data:`MAX_CONTEXT_FILE_BYTES`; anything else is skipped with one note."""
    out: list[ContextFile] = []
    for path in _dedupe(paths):
        try:
            raw = read_project_file(path, path.parent, MAX_CONTEXT_FILE_BYTES)
        except FileNotFoundError:
            continue  # a dangling link inside the folder: nothing to read
        except OSError as exc:
            if note is not None:
                reason = exc.strerror or str(exc)
                note(one_line(f"headwire: note: context file {path} skipped: {reason}"))
            continue
        if len(raw) > MAX_CONTEXT_FILE_BYTES:
            raw = raw[:MAX_CONTEXT_FILE_BYTES]
            if note is not None:
                note(
                    one_line(
                        f"headwire: note: context file {path} is longer than "
                        f"{MAX_CONTEXT_FILE_BYTES} bytes; the rest is left out"
                    )
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
    """Find, read and join the context files for a session in ``cwd`` (``trusted``: whether
    the folder is trusted, for the trust table's context-file row)."""
    paths = context_file_paths(cwd, user_dir, names, home=home, trusted=trusted, note=note)
    return format_context(read_context_files(paths, cwd, note))
