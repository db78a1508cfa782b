"""Where headwire keeps a user's data: artifacts (full tool outputs) and session recordings.

Layout under the data directory (``$HEADWIRE_HOME``, else ``~/.headwire``)::

    tmp/<sha256 of the project path>/<tool>_<12 hex>.output         producer artifacts (0600)
    projects/<readable path>-<16 hex>/chats/<session id>.jsonl      canonical recordings (0600)

A project's folder name is its absolute path made readable (every character other than a
letter, digit or ``_`` as ``-``, at most the last 80 characters), then ``-`` and the first 16 hex
digits of the SHA-256 of the path: ``/p/proj.a`` and ``/p/proj/a`` read alike but never share a
folder.  Folders of the earlier layout (the path alone, which collides) are still searched by
:func:`legacy_chats_dir`.

Every directory is created 0700 and every file 0600: tool output and transcripts may hold
secrets.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from headwire.runtime.redact import redact


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's headwire data directory."""
    env = os.environ if env is None else env
    override = env.get("HEADWIRE_HOME")
    if override:
        return Path(override)
    return Path(env.get("HOME") or Path.home()) / ".headwire"


def private_dir(path: Path) -> Path:
    """Create ``path`` and every missing parent with mode 0700 and return it.

    (``Path.mkdir(parents=True)`` would give the parents the umask's default mode, 0755 or
    even 0777.)  Directories that already exist keep their mode.
    """
    missing: list[Path] = []
    current = path
    while not current.is_dir() and current.parent != current:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # a concurrent run made it first
            directory.mkdir(mode=0o700)
    return path


def project_hash(cwd: Path) -> str:
    """Stable id of a project directory (SHA-256 of its absolute path)."""
    return hashlib.sha256(str(cwd.resolve()).encode("utf-8", "surrogateescape")).hexdigest()


_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")
READABLE_CHARS = 80
"""At most this many characters of the path (its end) appear in a project's folder name."""


def project_slug(cwd: Path) -> str:
    """A project's folder name: its path made readable, plus 16 hex of its SHA-256 (see above).

    Invariant: two different absolute paths never get the same name, and a name is at most
    ``READABLE_CHARS + 17`` ASCII characters (well under any file system's name limit).
    """
    readable = _NOT_NAME_CHAR.sub("-", str(cwd.resolve())[-READABLE_CHARS:])
    return f"{readable}-{project_hash(cwd)[:16]}"


def legacy_project_slug(cwd: Path) -> str:
    """The folder name of the earlier layout: the path with ``/`` and ``.`` as ``-``.  It is not
    collision-free (``/p/proj.a`` and ``/p/proj/a`` share it), so only an explicit session ID
    is looked up there."""
    return str(cwd.resolve()).replace(os.sep, "-").replace(".", "-")


class ArtifactStore:
    """Saves full tool outputs byte for byte into private files (an ``ArtifactSink``)."""

    def __init__(self, root: Path, cwd: Path) -> None:
        self.directory = root / "tmp" / project_hash(cwd)

    def save(self, tool_name: str, data: bytes) -> Path:
        """Write ``data``, registered secrets scrubbed (:func:`headwire.runtime.redact.redact`),
        to a new 0600 file and return its absolute path."""
        data = redact(data)
        private_dir(self.directory)
        safe = re.sub(r"[^0-9A-Za-z_-]", "_", tool_name[:64], flags=re.ASCII)
        path = self.directory / f"{safe}_{secrets.token_hex(6)}.output"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return path


def chats_dir(root: Path, cwd: Path) -> Path:
    """The folder holding a project's session recordings."""
    return root / "projects" / project_slug(cwd) / "chats"


def chat_folders(root: Path) -> list[Path]:
    """Every project's recordings folder (what :func:`chats_dir` gives for some project)."""
    return sorted(p for p in (root / "projects").glob("*/chats") if p.is_dir())


def artifact_folders(root: Path) -> list[Path]:
    """Every project's artifacts folder (what ``ArtifactStore.directory`` is for some project)."""
    return sorted(p for p in (root / "tmp").glob("*") if p.is_dir())


def sessions_index_path(root: Path) -> Path:
    """The cache ``headwire sessions`` keeps of what each recording holds (safe to delete)."""
    return root / "sessions-index.json"


def legacy_chats_dir(root: Path, cwd: Path) -> Path:
    """Where the earlier layout kept recordings (see :func:`legacy_project_slug`)."""
    return root / "projects" / legacy_project_slug(cwd) / "chats"
