"""Finding, reading and pruning recorded sessions (the I/O behind ``headwire sessions``).

The pure half is :mod:`headwire.transcript`; this module only reads files for it:

* :func:`load_transcript`: a recording read line by line (never whole) into a
  :class:`~headwire.transcript.Transcript`, each artifact read as a head and a tail only, and
  only from inside the data directory's artifact folders (a recording naming another file gets
  "no longer on disk", never that file's bytes);
* :func:`plan_prune` / :func:`apply_prune`: recordings and artifacts last written before a
  cutoff; an artifact a kept recording names is kept, whatever its age.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from headwire.records import dataclass, field
from headwire.runtime.store.recording import RecordingError, open_recording
from headwire.runtime.store.session_index import find_line_end, list_sessions, parse_lenient
from headwire.runtime.store.storage import artifact_folders
from headwire.transcript.builder import TranscriptBuilder
from headwire.transcript.excerpt import Excerpt
from headwire.transcript.long_lines import LONG_LINE_BYTES, read_long_line
from headwire.transcript.model import EXCERPT_BYTES, Transcript

__all__ = [
    "ArtifactFiles",
    "PrunePlan",
    "apply_prune",
    "load_transcript",
    "plan_prune",
    "read_lenient",
]


def _records(buf: Any, size: int) -> Iterator[dict[str, Any]]:
    position = 0
    while position < size:
        newline = buf.find(b"\n", position, min(size, position + LONG_LINE_BYTES + 1))
        record = None
        if newline < 0 and size - position > LONG_LINE_BYTES:
            if find_line_end(buf, position, size) < 0:
                return  # a long torn last line: skipped, never copied or kept resident
            # a long line: its end is found while its long strings are skipped
            record, end = read_long_line(buf, position, size)
            if end < 0:
                newline = buf.find(b"\n", position)
                end = size if newline < 0 else newline
        else:
            end = size if newline < 0 else newline
        if record is None and end > position:
            record = parse_lenient(buf[position:end])
        if isinstance(record, dict):
            yield record
        position = end + 1


def read_lenient(path: Path) -> Iterator[dict[str, Any]]:
    """The records of ``path``; a line that is not a JSON object (a torn line) is skipped.

    The file is mapped, not read: a line of megabytes is searched for its structure and only
    the ends of its long strings are decoded (:func:`headwire.transcript.long_lines`).  Unlike
    :func:`headwire.runtime.store.recording.read_records`, a line holding a lone surrogate (which
    orjson refuses) is still read.  A last line longer than ``LONG_LINE_BYTES`` that has no
    end (torn by a crash) is skipped without being copied.
    """
    fd = open_recording(path)  # never blocks; a FIFO or device is refused
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return
        try:
            buf = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise RecordingError(f"cannot read session recording {path}: {exc}") from None
        with buf:
            yield from _records(buf, size)
    finally:
        os.close(fd)


@dataclass
class ArtifactFiles:
    """Reads artifacts as excerpts, only from inside ``root``'s artifact folders."""

    root: Path
    folders: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folders = [p.resolve() for p in artifact_folders(self.root)]

    def __call__(self, path: str, budget: int) -> Excerpt | None:
        """The first fifth and the last four fifths of ``budget`` bytes of the artifact."""
        try:
            real = Path(path).resolve()
        except (OSError, RuntimeError, ValueError):
            return None
        if real.parent not in self.folders:
            return None
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            size = st.st_size
            if size <= budget:
                data = os.pread(fd, size, 0)
                return Excerpt.of_parts(data, b"", len(data))
            head_n = budget // 5
            head = os.pread(fd, head_n, 0)
            tail = os.pread(fd, budget - head_n, size - (budget - head_n))
            return Excerpt.of_parts(head, tail, size)
        except OSError:
            return None
        finally:
            os.close(fd)


def load_transcript(root: Path, path: Path, budget: int = EXCERPT_BYTES) -> Transcript:
    """The transcript of the recording at ``path`` (artifacts read from under ``root``)."""
    builder = TranscriptBuilder(path.stem, ArtifactFiles(root), budget)
    for record in read_lenient(path):
        builder.add(record)
    return builder.finish()


@dataclass
class PrunePlan:
    """What :func:`apply_prune` deletes: ``(path, bytes)`` pairs."""

    recordings: list[tuple[Path, int]] = field(default_factory=list)
    artifacts: list[tuple[Path, int]] = field(default_factory=list)
    kept_referenced: int = 0
    """Old artifacts kept because a kept recording names them."""

    @property
    def total_bytes(self) -> int:
        """Bytes freed by applying the plan."""
        return sum(n for _, n in self.recordings) + sum(n for _, n in self.artifacts)


def plan_prune(root: Path, cutoff: float) -> PrunePlan:
    """Recordings and artifacts last written before ``cutoff`` (seconds since the epoch)."""
    plan = PrunePlan()
    keep_artifacts: set[str] = set()
    for info in list_sessions(root):
        if info.mtime < cutoff:
            plan.recordings.append((Path(info.path), info.size))
        else:
            keep_artifacts.update(_real(a) for a in info.artifacts)
    for folder in artifact_folders(root):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = folder / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or not name.endswith(".output"):
                continue
            if st.st_mtime >= cutoff:
                continue
            if _real(str(path)) in keep_artifacts:
                plan.kept_referenced += 1
                continue
            plan.artifacts.append((path, st.st_size))
    return plan


def _real(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError, ValueError):
        return path


def apply_prune(root: Path, plan: PrunePlan) -> list[str]:
    """Delete what ``plan`` lists; returns one message per file that could not be deleted."""
    problems: list[str] = []
    for path, _ in plan.recordings + plan.artifacts:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
    if plan.recordings:
        list_sessions(root)  # drop the deleted recordings from the index
    return problems
