"""The canonical session recording: an append-only JSONL transcript, flushed per record.

Each line is one record ``{"type", "uuid", "session_id", "timestamp", ...}``.  Records that
carry a ``message`` hold it in the OpenAI chat form the agent loop keeps, so ``--resume`` rebuilds
the conversation by reading them back.  Tool results are recorded unprojected: the full display
string, the full model-facing text and the artifact path.

A write failure never stops the agent: the recorder turns itself off and keeps the reason in
``failed``; the agent then emits upstream's ``system/session_recording_degraded`` once (data
``{session_id, reason: "write_failed", message:`` :data:`RECORDING_FAILURE_MESSAGE` ``}``) and
the CLI adds the reason on stderr.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from headwire.errors import StorageError
from headwire.runtime.storage import chats_dir, private_dir
from headwire.wire import encode, loads

RECORDING_FAILURE_MESSAGE = (
    "Session recording stopped after a write failure. New messages for the affected session "
    "will not be saved. Check disk space and permissions, then start a new session to resume "
    "recording. See the debug log for details."
)
"""Upstream's ``session_recording_degraded`` message (``chat-recording-failure.ts``)."""


class RecordingError(StorageError):
    """A recording could not be read (missing, unreadable)."""


class Recorder:
    """Appends records to ``<chats>/<session_id>.jsonl``."""

    def __init__(self, root: Path, cwd: Path, session_id: str) -> None:
        self.session_id = session_id
        self.path = chats_dir(root, cwd) / f"{session_id}.jsonl"
        self._file: IO[bytes] | None = None
        self.failed: str | None = None
        self.failure_reported = False
        """Set by whoever announced ``failed`` (the agent's ``session_recording_degraded``)."""

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
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
                self._file = os.fdopen(fd, "ab")
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    self._file.write(b"\n")  # end a line torn by a crash; readers skip it
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


def read_records(path: Path, buffer_bytes: int = -1) -> Iterator[dict[str, Any]]:
    """Yield the records of a recording one line at a time (never the whole file in memory),
    skipping a line that is not a JSON object (a torn last line after a crash).

    Lines are read with :func:`headwire.wire.loads`, which takes back everything
    :func:`~headwire.wire.encode` wrote, lone surrogate escapes (``\\ud800``) included."""
    try:
        f = path.open("rb", buffering=buffer_bytes)
    except OSError as exc:
        raise RecordingError(f"cannot read session recording {path}: {exc.strerror}") from None
    with f:
        for line in f:
            try:
                record = loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                yield record


_SESSION_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")


def find_session(root: Path, cwd: Path, session_id: str) -> Path:
    """The recording of ``session_id`` in this project (an id is one plain file name: no
    separators, no leading dot, so ``../x`` cannot reach a file outside the chats folder)."""
    if not _SESSION_ID.fullmatch(session_id):
        raise RecordingError(f"No saved session found with ID {session_id!r}")
    path = chats_dir(root, cwd) / f"{session_id}.jsonl"
    try:
        found = path.exists()
    except OSError:  # e.g. a name too long for the file system
        found = False
    if not found:
        raise RecordingError(f"No saved session found with ID {session_id}")
    return path


def latest_session(root: Path, cwd: Path) -> Path | None:
    """The most recently written recording of this project, if any."""
    folder = chats_dir(root, cwd)
    if not folder.is_dir():
        return None
    files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return files[-1] if files else None


INTERRUPTED_CALL_MESSAGE = "Tool call interrupted: the session ended before it finished."
"""The tool result :func:`conversation_of` supplies for a call whose result was never recorded."""


def conversation_of(path: Path) -> list[dict[str, Any]]:
    """The OpenAI-form conversation recorded in ``path`` (system prompts excluded).

    A session killed mid-tool leaves an assistant message whose tool calls have no result;
    chat APIs reject such a history, so each missing result is supplied as
    :data:`INTERRUPTED_CALL_MESSAGE`.
    """
    messages = [
        r["message"]
        for r in read_records(path)
        if isinstance(r.get("message"), dict) and r.get("parent_tool_use_id") is None
    ]
    return _answer_dangling_calls(messages)


def _answer_dangling_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    open_ids: list[str] = []

    def close_open() -> None:
        for call_id in open_ids:
            out.append(
                {"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED_CALL_MESSAGE}
            )
        open_ids.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool" and message.get("tool_call_id") in open_ids:
            open_ids.remove(message["tool_call_id"])
        elif role != "tool":
            close_open()
        out.append(message)
        if role == "assistant":
            calls = message.get("tool_calls") or []
            open_ids += [
                c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)
            ]
    close_open()
    return out
