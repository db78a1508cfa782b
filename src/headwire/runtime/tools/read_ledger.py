"""Read before write: which files the model has seen, and as they are now.

Like Qwen Code 0.24.4, ``write_file`` and ``edit`` (and ``notebook_edit``) refuse to change an
existing file that was not read in this session, or that changed since it was read: the model
would overwrite bytes it never saw.  A file counts as seen when ``read_file`` showed it (any
window of it), when ``grep_search`` showed a line of it, or when a writing tool wrote it.
Files are known by identity (device and inode) and fingerprint (modification time and size); a
file whose fingerprint moved since is stale.  Creating a file that does not exist needs no read.

One ledger serves one session: the built-in tools made together by
:func:`~headwire.runtime.tools.toolset.session_tools` share it, and so do the subagents that
run those tools.
"""

from __future__ import annotations

import os
import threading
from typing import Literal

from headwire.records import dataclass
from headwire.runtime.tools.base import ToolOutcome
from headwire.runtime.tools.paths import failure

Verb = Literal["edit", "overwrite"]
NOT_READ = "edit_requires_prior_read"
CHANGED = "file_changed_since_read"


@dataclass(frozen=True, slots=True)
class _Seen:
    mtime_ns: int
    size: int
    text: bool


class ReadLedger:
    """The files seen in one session (thread-safe: tools run their I/O on worker threads)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, int], _Seen] = {}
        self._lock = threading.Lock()

    def record_read(self, info: os.stat_result, *, text: bool = True) -> None:
        """The model saw (part of) the file whose current stat is ``info``."""
        with self._lock:
            key = (info.st_dev, info.st_ino)
            old = self._seen.get(key)
            kept = (
                old is not None
                and old.text
                and (old.mtime_ns, old.size) == (info.st_mtime_ns, info.st_size)
            )
            self._seen[key] = _Seen(info.st_mtime_ns, info.st_size, text or kept)

    def record_write(self, info: os.stat_result) -> None:
        """A file tool wrote the file whose stat is now ``info``: the model knows its bytes."""
        with self._lock:
            self._seen[(info.st_dev, info.st_ino)] = _Seen(info.st_mtime_ns, info.st_size, True)

    def refusal(self, info: os.stat_result | None, raw: str, verb: Verb) -> ToolOutcome | None:
        """``None`` when ``write_file`` (``overwrite``) or ``edit`` may change the file whose
        stat is ``info`` (``None``: it does not exist); else the error outcome, which tells the
        model to read the file first."""
        if info is None:
            return None
        with self._lock:
            seen = self._seen.get((info.st_dev, info.st_ino))
        if seen is not None and (seen.mtime_ns, seen.size) != (info.st_mtime_ns, info.st_size):
            message = (
                f"File {raw} changed on disk since it was last read (its size or modification "
                f"time differs). Read it again with read_file before you {verb} it, so the "
                "change is based on its current content."
            )
            short = "Error: the file changed since it was read; read it again first."
            return failure(message, short, message, CHANGED)
        if seen is not None and seen.text:
            return None
        if seen is not None:
            message = (
                f"File {raw} was read as a binary or non-text payload; {verb} works on text "
                "files only. Use the shell tool to change it."
            )
            short = f"Error: not a text file; cannot {verb} it with this tool."
        else:
            scope = (
                "a partial read with offset and limit is enough: you only need to have seen "
                "the lines you change"
                if verb == "edit"
                else "read all of it: overwriting replaces every byte, including those you "
                "have not seen"
            )
            message = (
                f"File {raw} has not been read in this session. Read it with read_file first "
                f"({scope}), then {verb} it."
            )
            short = f"Error: read_file is required before you {verb} this file."
        return failure(message, short, message, NOT_READ)
