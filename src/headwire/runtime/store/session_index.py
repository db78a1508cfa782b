"""What each recording holds, found without parsing it, and cached: ``headwire sessions list``.

A recording can be 100 MB of one tool result per line.  Its summary comes from its first
64 KiB (the first prompt, the start time, the working directory), its size, and a byte scan of
its lines (found with ``memchr`` on a mapping of the file), never a JSON parse of a whole line:

* turns: one per ``result`` record (a line starting ``{"type":"result",``; the recorder writes
  ``type`` first and a JSON string never holds a raw newline), plus one when the file does not
  end with a ``result`` (a turn that was stopped);
* artifacts: each ``"artifact":"PATH"`` (a raw ``":"`` cannot occur inside a JSON string, whose
  quotes are escaped), searched in the whole of a line up to 1 MiB and in the first and last
  64 KiB of a longer one (where the recorder puts it, right after the long ``display``), so
  ``prune`` keeps the artifacts of recordings it keeps.

:func:`locate_session` finds a recording by id or unique id prefix, in any project.

The summaries are cached in :func:`headwire.runtime.store.storage.sessions_index_path`, keyed by
path and checked against inode, size and mtime.  Recordings only grow, so a recording that grew is
scanned from the end of the last complete line it had.  The cache is rewritten atomically
(0600) and may be deleted at any time; a cache that cannot be read or written is rebuilt or
skipped silently.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import re
from collections.abc import Iterable
from dataclasses import asdict, astuple, fields
from pathlib import Path
from typing import Any

import orjson

from headwire.records import dataclass, field
from headwire.runtime.store.recording import RecordingError, open_recording
from headwire.runtime.store.storage import chat_folders, private_dir, sessions_index_path
from headwire.wire import dumps

__all__ = [
    "HEAD_BYTES",
    "INDEX_VERSION",
    "SessionInfo",
    "SessionNotFound",
    "list_sessions",
    "locate_session",
    "parse_lenient",
    "scan_recording",
]

INDEX_VERSION = 1
HEAD_BYTES = 64 * 1024
"""Bytes read from the start of a recording for its first prompt, start time and directory."""
PROMPT_CHARS = 240
"""Characters of the first prompt kept in a summary."""

_RESULT_START = b'{"type":"result",'
_ARTIFACT = b'"artifact":"'
_ARTIFACT_VALUE = re.compile(rb'"artifact":"((?:[^"\\]|\\.){1,4000})"')
WHOLE_LINE_BYTES = 1 << 20
"""Lines up to this size are searched whole for artifact paths."""
EDGE_BYTES = 64 * 1024
_ENDS_WITH_RESULT = re.compile(rb'"num_turns":-?\d+\}\s*$')


@dataclass(slots=True)
class SessionInfo:
    """One recording, as ``headwire sessions list`` shows it."""

    session_id: str
    path: str
    size: int
    mtime: float
    started: str = ""
    cwd: str | None = None
    first_prompt: str = ""
    turns: int = 0
    artifacts: list[str] = field(default_factory=list)
    # scan state
    ino: int = 0
    mtime_ns: int = 0
    scanned: int = 0
    results: int = 0
    ends_with_result: bool = False


def parse_lenient(line: bytes) -> Any:
    """A JSON line, also when it holds a lone surrogate (which orjson refuses); else ``None``."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(line.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return None


def _partial_string(data: bytes, key: bytes) -> str | None:
    """The start of the string value of ``"key":"`` in ``data`` (the line may be cut short)."""
    at = data.find(b'"' + key + b'":"')
    if at < 0:
        return None
    raw = data[at + len(key) + 4 : at + len(key) + 4 + PROMPT_CHARS * 8]
    end = re.match(rb'(?:[^"\\]|\\.)*', raw)
    body = raw[: end.end()] if end else raw
    for cut in range(0, 12):  # drop an escape or a character cut at the end
        with contextlib.suppress(ValueError):
            value = json.loads(b'"' + body[: len(body) - cut] + b'"')
            return value if isinstance(value, str) else None
    return None


def _one_line(text: str) -> str:
    return " ".join(text[: PROMPT_CHARS * 2].split())[:PROMPT_CHARS]


def _prompt_of(record: dict[str, Any]) -> str | None:
    """The prompt of a top-level ``user`` record, else ``None``."""
    message = record.get("message")
    if record.get("type") != "user" or record.get("parent_tool_use_id"):
        return None
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(p["text"] for p in content if isinstance(p, dict) and "text" in p)
    return content if isinstance(content, str) else ""


def _read_head(info: SessionInfo, head: bytes) -> None:
    """Fill the first prompt, start time and directory from the first bytes of a recording."""
    if len(head) < HEAD_BYTES:
        lines = head.split(b"\n")  # the whole file
    else:
        lines = head[: max(0, head.rfind(b"\n"))].split(b"\n")  # complete lines only
    for line in lines:
        record = parse_lenient(line) if line.strip() else None
        if not isinstance(record, dict):
            continue
        if not info.started and isinstance(record.get("timestamp"), str):
            info.started = record["timestamp"]
        if info.cwd is None and isinstance(record.get("cwd"), str):
            info.cwd = record["cwd"]
        prompt = _prompt_of(record)
        if prompt is not None:
            info.first_prompt = _one_line(prompt)
            return
    first = head.split(b"\n", 1)[0]
    if len(first) == len(head) == HEAD_BYTES:  # a first record longer than the head
        info.started = info.started or (_partial_string(first, b"timestamp") or "")
        info.cwd = info.cwd or _partial_string(first, b"cwd")
        if first.startswith(b'{"type":"user"'):
            info.first_prompt = _one_line(_partial_string(first, b"content") or "")


def _artifacts_in(buf: mmap.mmap, start: int, end: int, artifacts: set[str]) -> None:
    """Collect the ``"artifact":"PATH"`` values of the line ``buf[start:end]``: anywhere in a
    line of at most :data:`WHOLE_LINE_BYTES`, else in its first and last
    :data:`EDGE_BYTES` (the recorder writes ``artifact`` right after the long ``display``)."""
    spans = [(start, end)]
    if end - start > WHOLE_LINE_BYTES:
        spans = [(start, start + EDGE_BYTES), (end - EDGE_BYTES, end)]
    for low, high in spans:
        at = buf.find(_ARTIFACT, low, high)
        while at >= 0:
            match = _ARTIFACT_VALUE.match(buf[at : min(high, at + 8200)])
            if match:
                with contextlib.suppress(ValueError):
                    artifacts.add(json.loads(b'"' + match.group(1) + b'"'))
            at = buf.find(_ARTIFACT, at + 1, high)


SCAN_WINDOW_BYTES = 8 << 20
"""How much of a mapped recording :func:`find_line_end` searches before handing it back."""


def find_line_end(buf: mmap.mmap, start: int, end: int) -> int:
    """``buf.find(b"\\n", start, end)`` over a mapped file, searched a window of
    :data:`SCAN_WINDOW_BYTES` at a time, each window searched in vain handed back to the kernel
    (``MADV_DONTNEED``): a line of hundreds of MB (a torn last line) costs a pass of
    ``memchr``, not that much resident memory."""
    position = start
    while position < end:
        stop = min(end, (position // SCAN_WINDOW_BYTES + 1) * SCAN_WINDOW_BYTES)
        found = buf.find(b"\n", position, stop)
        if found >= 0:
            return found
        low = position - position % mmap.PAGESIZE
        with contextlib.suppress(OSError, ValueError, AttributeError):
            buf.madvise(mmap.MADV_DONTNEED, low, stop - low)
        position = stop
    return -1


def _scan(fd: int, start: int, size: int, artifacts: set[str]) -> tuple[int, int]:
    """Count the ``result`` records among the complete lines from ``start`` (a line start) to
    ``size``, and collect their artifact paths; returns the count and the end of the last
    complete line.  Lines are found with ``memchr`` on a mapping of the file, so a 100 MB line
    costs a pass of ``memchr``, not a parse."""
    if size <= start:
        return 0, start
    count = 0
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as buf:
        position = start
        while True:
            newline = find_line_end(buf, position, size)
            if newline < 0:
                return count, position
            if buf[position : position + len(_RESULT_START)] == _RESULT_START:
                count += 1
            _artifacts_in(buf, position, newline, artifacts)
            position = newline + 1


def _tail_is_result(fd: int, size: int) -> bool:
    """Whether the last record of the file is a ``result``."""
    tail = os.pread(fd, 4096, max(0, size - 4096)).rstrip()
    newline = tail.rfind(b"\n")
    if newline >= 0 or size <= 4096:
        return tail[newline + 1 :].startswith(_RESULT_START)
    return _ENDS_WITH_RESULT.search(tail) is not None  # a result record of over 4 KiB


def scan_recording(path: str, previous: SessionInfo | None = None) -> SessionInfo | None:
    """The summary of ``path`` (``None`` if it cannot be read), reusing ``previous`` as far as
    the file is unchanged: the same file, only grown, is scanned from where ``previous``
    stopped."""
    try:
        fd = open_recording(Path(path), follow_symlinks=False)
    except RecordingError:
        return None
    try:
        st = os.fstat(fd)
        if (
            previous is not None
            and previous.ino == st.st_ino
            and previous.size == st.st_size
            and previous.mtime_ns == st.st_mtime_ns
        ):
            return previous
        if previous is not None and previous.ino == st.st_ino and previous.scanned <= st.st_size:
            info = SessionInfo(**asdict(previous))
            artifacts = set(info.artifacts)
            counted, info.scanned = _scan(fd, info.scanned, st.st_size, artifacts)
            info.results += counted
        else:
            name = os.path.basename(path).removesuffix(".jsonl")
            info = SessionInfo(name, path, st.st_size, st.st_mtime)
            artifacts = set()
            info.results, info.scanned = _scan(fd, 0, st.st_size, artifacts)
        if not info.first_prompt:
            _read_head(info, os.pread(fd, HEAD_BYTES, 0))
        info.size, info.mtime, info.mtime_ns, info.ino = (
            st.st_size,
            st.st_mtime,
            st.st_mtime_ns,
            st.st_ino,
        )
        info.artifacts = sorted(artifacts)
        info.ends_with_result = st.st_size > 0 and _tail_is_result(fd, st.st_size)
        # a last line still being written (no newline yet) is not in ``results``
        partial = (
            os.pread(fd, len(_RESULT_START), info.scanned) if info.scanned < st.st_size else b""
        )
        empty = not os.pread(fd, 4096, max(0, st.st_size - 4096)).strip()
        info.turns = (
            info.results + (partial == _RESULT_START) + (0 if info.ends_with_result or empty else 1)
        )
        return info
    except OSError:
        return None
    finally:
        os.close(fd)


def _load_index(path: Path) -> dict[str, SessionInfo]:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return {}
    if data.get("fields") != _FIELDS:
        return {}
    out: dict[str, SessionInfo] = {}
    rows = data.get("sessions")
    for row in rows if isinstance(rows, list) else []:
        with contextlib.suppress(TypeError, ValueError):
            info = SessionInfo(*row)
            out[info.path] = info
    return out


def _save_index(path: Path, infos: Iterable[SessionInfo]) -> None:
    data = dumps(  # lone surrogates (a first prompt's) as escapes, as the recorder writes them
        {"version": INDEX_VERSION, "fields": _FIELDS, "sessions": [astuple(i) for i in infos]}
    )
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        private_dir(path.parent)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


_FIELDS = [f.name for f in fields(SessionInfo)]
"""The index stores each summary as a row of these fields."""


class SessionNotFound(RecordingError):
    """No recording has that id, or several start with that prefix."""


_VALID_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def locate_session(root: Path, key: str) -> Path:
    """The recording whose id is ``key``, else the only one whose id starts with ``key``."""
    if not key or key.startswith(".") or not set(key) <= _VALID_KEY or len(key) > 200:
        raise SessionNotFound(f"No saved session found with ID {key!r}")
    folders = chat_folders(root)
    for folder in folders:
        path = folder / f"{key}.jsonl"
        with contextlib.suppress(OSError):
            if path.is_file():
                return path
    found: list[Path] = []
    for folder in folders:
        with contextlib.suppress(OSError):
            found += [
                folder / name
                for name in os.listdir(folder)
                if name.startswith(key) and name.endswith(".jsonl")
            ]
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(sorted(p.stem for p in found)[:5])
        raise SessionNotFound(f"Session ID prefix {key!r} is ambiguous: {names}")
    raise SessionNotFound(f"No saved session found with ID {key}")


def list_sessions(root: Path, *, save: bool = True) -> list[SessionInfo]:
    """Every recording under ``root``, newest start first (then newest write)."""
    index_path = sessions_index_path(root)
    cached = _load_index(index_path)
    infos: list[SessionInfo] = []
    changed = False
    for folder in chat_folders(root):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.endswith(".jsonl") or name.startswith("."):
                continue
            path = os.path.join(folder, name)
            previous = cached.get(path)
            info = scan_recording(path, previous)
            if info is None:
                continue
            changed = changed or info is not previous
            infos.append(info)
    if save and (changed or len(infos) != len(cached)):
        _save_index(index_path, infos)
    infos.sort(key=lambda i: (i.started, i.mtime), reverse=True)
    return infos
