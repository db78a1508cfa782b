"""The canonical session recording: an append-only JSONL transcript, flushed per record.

Each line is one record ``{"type", "uuid", "session_id", "timestamp", ...}``.  Records that
carry a ``message`` hold it in the OpenAI chat form the agent loop keeps, so ``--resume`` rebuilds
the conversation by reading them back.  Tool results are recorded unprojected: the full display
string, the full model-facing text and the artifact path.

A write failure never stops the agent: the recorder turns itself off and reports it once (the
CLI emits ``system/session_recording_degraded``).
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from headwire.runtime.storage import chats_dir, private_dir
from headwire.wire import encode


class RecordingError(Exception):
    """A recording could not be read (missing, unreadable)."""


class Recorder:
    """Appends records to ``<chats>/<session_id>.jsonl``."""

    def __init__(self, root: Path, cwd: Path, session_id: str) -> None:
        self.session_id = session_id
        self.path = chats_dir(root, cwd) / f"{session_id}.jsonl"
        self._file: IO[bytes] | None = None
        self.failed: str | None = None

    def record(self, kind: str, **fields: Any) -> None:
        """Append one record and flush it; on failure, disable recording and keep ``failed``."""
        if self.failed is not None:
            return
        entry = {
            "type": kind,
            "uuid": str(uuid.uuid4()),
            "session_id": self.session_id,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
            **fields,
        }
        try:
            if self._file is None:
                private_dir(self.path.parent)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                self._file = os.fdopen(fd, "ab")
            self._file.write(encode(entry) + b"\n")
            self._file.flush()
        except (OSError, ValueError) as exc:
            self.failed = f"{type(exc).__name__}: {exc}"
            self.close()

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a recording, skipping a torn last line (after a crash)."""
    try:
        f = path.open("rb")
    except OSError as exc:
        raise RecordingError(f"cannot read session recording {path}: {exc.strerror}") from None
    with f:
        for line in f:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(record, dict):
                yield record


def find_session(root: Path, cwd: Path, session_id: str) -> Path:
    """The recording of ``session_id`` in this project."""
    path = chats_dir(root, cwd) / f"{session_id}.jsonl"
    if not path.exists():
        raise RecordingError(f"No saved session found with ID {session_id}")
    return path


def latest_session(root: Path, cwd: Path) -> Path | None:
    """The most recently written recording of this project, if any."""
    folder = chats_dir(root, cwd)
    if not folder.is_dir():
        return None
    files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return files[-1] if files else None


def conversation_of(path: Path) -> list[dict[str, Any]]:
    """The OpenAI-form conversation recorded in ``path`` (system prompts excluded)."""
    return [
        r["message"]
        for r in read_records(path)
        if isinstance(r.get("message"), dict) and r.get("parent_tool_use_id") is None
    ]
