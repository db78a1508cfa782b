"""The search ``grep_search`` runs, shared by the tool and its worker process.

Files are walked (hidden and ignored files skipped, ``glob`` filtered like ``rg --glob``), read
whole up to :data:`MAX_FILE_BYTES` (binary files skipped), and every matching line is counted
in a :class:`Matches`, which keeps the first ``keep``.  The engine is the caller's: RE2 in
headwire's process (:func:`search_bytes`) or Python ``re`` in the worker
(:func:`search_text`, :mod:`headwire.runtime.tools.grep_worker`).  This module imports
neither of its callers, so the worker's entry point does not load the tool.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from headwire.records import dataclass, field
from headwire.runtime.tools.glob import WalkOptions, WalkStats, compile_glob, walk_files
from headwire.runtime.tools.linear_regex import LinearPattern, compile_linear
from headwire.runtime.tools.paths import is_within

LINE_LIMIT = 1_000
CHAR_LIMIT = 25_000
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
INCOMPLETE_NOTICE = "Search did not complete: the results above may not include all matches."
WINDOW_BYTES = 1 << 20
"""Bytes searched between two cancellation checks (rounded up to the end of a line)."""
_JS_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a (JavaScript/ripgrep-style) pattern case-insensitively, multi-line."""
    return re.compile(_JS_NAMED_GROUP.sub("(?P<", pattern), re.IGNORECASE | re.MULTILINE)


@dataclass(slots=True)
class Matches:
    """The first ``keep`` matching lines and the total count."""

    keep: int
    lines: list[str] = field(default_factory=list)
    total: int = 0
    bytes_read: int = 0
    incomplete: bool = False
    files: dict[str, None] = field(default_factory=dict)
    """The files of the kept lines, in order (the model has seen a part of each)."""

    def add(self, path: str, line_no: int, line: str) -> None:
        self.total += 1
        if len(self.lines) < self.keep:
            self.lines.append(f"{path}:{line_no}:{line[: CHAR_LIMIT + 16].rstrip(chr(13))}")
            self.files[path] = None


def compile_linear_pattern(pattern: str) -> LinearPattern:
    """``pattern`` for RE2, case-insensitive and multi-line, or :class:`NotLinear`."""
    return compile_linear(_JS_NAMED_GROUP.sub("(?P<", pattern), ignore_case=True, multiline=True)


def search_bytes(
    regex: LinearPattern, data: bytes, path: str, found: Matches, should_stop: Callable[[], bool]
) -> None:
    """Record every line of ``data`` that ``regex`` matches: windows of about
    :data:`WINDOW_BYTES` ending at a line end, ``should_stop`` checked before each."""
    pos, newlines, counted_to, size = 0, 0, 0, len(data)
    while pos < size:
        if should_stop():
            found.incomplete = True
            return
        window_end = data.find(b"\n", min(pos + WINDOW_BYTES, size))
        window_end = size if window_end < 0 else window_end + 1
        span = regex.search(data, pos, window_end)
        if span is None:
            pos = window_end
            continue
        match_start, match_end = span
        if match_start == size and data.endswith(b"\n"):
            return
        start = data.rfind(b"\n", 0, match_start) + 1
        end = data.find(b"\n", match_start)
        end = size if end < 0 else end
        if match_end <= end or regex.search(data[start:end]) is not None:
            newlines += data.count(b"\n", counted_to, start)
            counted_to = start
            found.add(path, newlines + 1, data[start:end].decode("utf-8", errors="replace"))
        pos = end + 1


def search_text(regex: re.Pattern[str], text: str, path: str, found: Matches) -> None:
    """Record every line of ``text`` that ``regex`` matches (one scan, jumping line to line;
    Python ``re``: only ever run in the killable worker process)."""
    pos, newlines, counted_to, size = 0, 0, 0, len(text)
    while pos < size:
        match = regex.search(text, pos)
        if match is None or (match.start() == size and text.endswith("\n")):
            return
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.start())
        end = size if end < 0 else end
        if match.end() <= end or regex.search(text[start:end]):
            newlines += text.count("\n", counted_to, start)
            counted_to = start
            found.add(path, newlines + 1, text[start:end])
        pos = end + 1


class _Filter:
    """``rg --glob`` semantics for the ``glob`` parameter."""

    def __init__(self, pattern: str | None) -> None:
        self.negate = bool(pattern and pattern.startswith("!"))
        body = (pattern or "")[1:] if self.negate else (pattern or "")
        self.on_name = "/" not in body.strip("/")
        self.regex = compile_glob(body.strip("/")) if body else None

    def accepts(self, rel: str) -> bool:
        if self.regex is None:
            return True
        subject = rel.rsplit("/", 1)[-1] if self.on_name else rel
        return bool(self.regex.match(subject)) != self.negate


def _opened_within(fd: int, roots: tuple[Path, ...]) -> bool:
    """Whether the file open on ``fd`` really lies inside ``roots`` (Linux: ``/proc/self/fd``;
    elsewhere ``True``, the check before the open being all there is)."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True
    return is_within(Path(real), roots)


Scan = Callable[[str, bytes], None]
"""Searches one file's bytes (the engine's part of a search)."""


def _search_file(path: str, scan: Scan, found: Matches, roots: tuple[Path, ...]) -> None:
    if os.path.islink(path) and not is_within(Path(os.path.realpath(path)), roots):
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    with os.fdopen(fd, "rb") as handle:
        try:
            # What was opened counts, not what was checked: a symlink swapped in meanwhile
            # (for the file or a directory above it) must not lead out of the workspace.
            if not _opened_within(fd, roots) or os.fstat(fd).st_size > MAX_FILE_BYTES:
                return
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return
    found.bytes_read += len(data)
    if b"\0" in data:
        return
    scan(path, data)


def search(
    start: Path,
    root: Path,
    scan: Scan,
    glob: str | None,
    found: Matches,
    roots: tuple[Path, ...],
    should_stop: Callable[[], bool],
) -> None:
    """Search ``start`` (a file or a directory tree)."""
    if start.is_file():
        _search_file(str(start), scan, found, roots)
        return
    keep = _Filter(glob)
    stats = WalkStats()
    stop = lambda: should_stop() or found.bytes_read > MAX_TOTAL_BYTES  # noqa: E731
    for entry, rel in walk_files(start, root, WalkOptions(skip_hidden=True), stats, stop):
        if keep.accepts(rel):
            _search_file(entry.path, scan, found, roots)
    found.incomplete = found.incomplete or stats.incomplete
