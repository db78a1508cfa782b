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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

from headwire.runtime.environment import registered_secrets
from headwire.runtime.redact import redact
from headwire.wire.pieces import string_pieces


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
        path, fd = self._create(tool_name)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return path

    def save_text(self, tool_name: str, text: str, surrogates: SurrogateRule = "replace") -> Path:
        """:meth:`save` of ``text`` as UTF-8 (each surrogate code point as U+FFFD for
        ``"replace"``, as its own three bytes for ``"pass"``), written a piece at a time: the
        same file, without a ``bytes`` copy of the whole text.

        Secrets are scrubbed from the text before it is encoded; for secrets that are ASCII
        (API keys) that is the same as scrubbing the bytes.  Any other registered secret makes
        it fall back to :meth:`save` of the whole encoding, which scrubs the bytes."""
        if any(not secret.isascii() for secret in registered_secrets()):
            return self.save(tool_name, b"".join(_text_pieces(text, surrogates)))
        text = redact(text)
        path, fd = self._create(tool_name)
        with os.fdopen(fd, "wb") as f:
            for piece in _text_pieces(text, surrogates):
                f.write(piece)
        return path

    def _create(self, tool_name: str) -> tuple[Path, int]:
        private_dir(self.directory)
        safe = re.sub(r"[^0-9A-Za-z_-]", "_", tool_name[:64], flags=re.ASCII)
        path = self.directory / f"{safe}_{os.urandom(6).hex()}.output"
        return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)


SurrogateRule = Literal["replace", "pass"]
"""How :meth:`ArtifactStore.save_text` writes a surrogate code point: U+FFFD (what Node writes
for a lone surrogate) or its own three bytes (``surrogatepass``, byte-exact for output that came
in as surrogate-escaped bytes)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_text(text: str, surrogates: SurrogateRule = "replace") -> bytes:
    """``text`` as UTF-8 under the ``surrogates`` rule (one code point at a time, so the
    encoding of a text is the concatenation of the encodings of its slices)."""
    if surrogates == "pass":
        return text.encode("utf-8", "surrogatepass")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _text_pieces(text: str, surrogates: SurrogateRule) -> Iterator[bytes]:
    for piece in string_pieces(text):
        yield encode_text(piece, surrogates)


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
