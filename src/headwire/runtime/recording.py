"""The canonical session recording: an append-only JSONL transcript, flushed per record.

Each line is one record ``{"type", "uuid", "session_id", "timestamp", "cwd", ...}``.  Records that
carry a ``message`` hold it in the OpenAI chat form the agent loop keeps, so ``--resume`` rebuilds
the conversation by reading them back.  Tool results are recorded unprojected: the full display
string, the full model-facing text and the artifact path.

A write failure never stops the agent: the recorder turns itself off and keeps the reason in
``failed``; the agent then emits upstream's ``system/session_recording_degraded`` once (data
``{session_id, reason: "write_failed", message:`` :data:`RECORDING_FAILURE_MESSAGE` ``}``) and
the CLI adds the reason on stderr.

A session id is one plain file name (:func:`check_session_id`), checked when a recorder is made
as when a recording is looked up.  While a recorder has its file open it holds an exclusive
advisory lock (``flock``) on it: a second process on the same session gets
:class:`SessionInUseError` up front when the recording already exists (``--resume``), or, if
both started a new one at once, the second one's recording stops with that reason.  The kernel
drops the lock when the process ends, however it ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from headwire.errors import StorageError
from headwire.runtime.ids import new_uuid
from headwire.runtime.storage import chats_dir, legacy_chats_dir, private_dir
from headwire.wire import JsonDecodeError, loads
from headwire.wire.pieces import encode_pieces

RECORDING_FAILURE_MESSAGE = (
    "Session recording stopped after a write failure. New messages for the affected session "
    "will not be saved. Check disk space and permissions, then start a new session to resume "
    "recording. See the debug log for details."
)
"""Upstream's ``session_recording_degraded`` message (``chat-recording-failure.ts``)."""


class RecordingError(StorageError):
    """A recording could not be read (missing, unreadable)."""


class InvalidSessionIdError(RecordingError):
    """A session id that is not one plain file name."""


class SessionInUseError(RecordingError):
    """Another process holds the recording's lock (it is appending to the same session)."""


_SESSION_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")


def check_session_id(session_id: str) -> str:
    """``session_id`` when it is one plain file name (1 to 200 letters, digits, ``_``, ``.``,
    ``-``, not starting with ``.`` or ``-``), else :class:`InvalidSessionIdError`: no ``/``, no
    ``..``, no absolute path can put a recording outside the chats folder."""
    if not _SESSION_ID.fullmatch(session_id):
        raise InvalidSessionIdError(
            f"Invalid session ID {session_id!r}: use 1 to 200 letters, digits, '_', '.' or '-', "
            "starting with a letter, digit or '_'"
        )
    return session_id


_STAMP: list[Any] = [-1, ""]
"""The last second formatted by :func:`_timestamp`, and its text."""


def _timestamp() -> str:
    """Now in UTC as ``YYYY-MM-DDTHH:MM:SS`` (formatted once per second)."""
    second = int(time.time())
    if second != _STAMP[0]:
        _STAMP[:] = [second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))]
    return str(_STAMP[1])


class Recorder:
    """Appends records to ``<chats>/<session_id>.jsonl``, holding its lock while open.

    Raises :class:`InvalidSessionIdError` for an id that is not a plain file name, and
    :class:`SessionInUseError` when the recording exists and another process holds its lock.
    """

    def __init__(self, root: Path, cwd: Path, session_id: str) -> None:
        self.session_id = check_session_id(session_id)
        self.cwd = str(cwd)
        """The working directory, on every record (as upstream's recordings have it)."""
        self.path = chats_dir(root, cwd) / f"{session_id}.jsonl"
        self._file: IO[bytes] | None = None
        self.failed: str | None = None
        self.failure_reported = False
        """Set by whoever announced ``failed`` (the agent's ``session_recording_degraded``)."""
        try:
            exists = self.path.exists()
        except OSError:
            exists = False
        if exists:  # resuming: take the lock now, so a busy session is refused up front
            try:
                self._open()
            except OSError as exc:
                self.failed = f"{type(exc).__name__}: {exc}"

    def _open(self) -> IO[bytes]:
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionInUseError(
                f"Session {self.session_id} is in use by another headwire process (its "
                "recording is locked); wait for it to end or use another session ID"
            ) from None
        except OSError:
            pass  # a file system without locks: record unlocked, as before
        self._file = os.fdopen(fd, "ab")
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            self._file.write(b"\n")  # end a line torn by a crash; readers skip it
        return self._file

    def record(self, kind: str, **fields: Any) -> None:
        """Append one record and flush it; on failure, disable recording and keep ``failed``."""
        if self.failed is not None:
            return
        entry = {
            "type": kind,
            "uuid": new_uuid(),
            "session_id": self.session_id,
            "timestamp": _timestamp(),
            "cwd": self.cwd,
            **fields,
        }
        try:
            file = self._file if self._file is not None else self._open()
            # A display may be hundreds of MB: written in pieces, never one bytes copy of it.
            for piece in encode_pieces(entry):
                file.write(piece)
            file.write(b"\n")
            file.flush()
        except SessionInUseError as exc:
            self.failed = str(exc)
            self.close()
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
                record = loads(line, any_depth=True)  # what the recorder wrote, at any depth
            except JsonDecodeError:
                continue
            if isinstance(record, dict):
                yield record


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # e.g. a name too long for the file system
        return False


def find_session(root: Path, cwd: Path, session_id: str) -> Path:
    """The recording of ``session_id`` in this project (an id is one plain file name: no
    separators, no leading dot, so ``../x`` cannot reach a file outside the chats folder).

    A recording of the earlier folder layout (:func:`headwire.runtime.storage.legacy_chats_dir`)
    is found too, and moved into this project's folder so that the session goes on in one file.
    """
    try:
        check_session_id(session_id)
    except InvalidSessionIdError:
        raise RecordingError(f"No saved session found with ID {session_id!r}") from None
    name = f"{session_id}.jsonl"
    path = chats_dir(root, cwd) / name
    if _exists(path):
        return path
    legacy = legacy_chats_dir(root, cwd) / name
    if not _exists(legacy):
        raise RecordingError(f"No saved session found with ID {session_id}")
    try:
        private_dir(path.parent)
        os.rename(legacy, path)
    except OSError:
        return legacy  # readable where it is; new records go to the new folder
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
    """The OpenAI-form conversation recorded in ``path`` (system prompts excluded), from the
    last ``compaction`` record's checkpoint on when there is one.

    A session killed mid-tool leaves an assistant message whose tool calls have no result;
    chat APIs reject such a history, so each missing result is supplied as
    :data:`INTERRUPTED_CALL_MESSAGE`.
    """
    messages: list[dict[str, Any]] = []
    for r in read_records(path):
        if r.get("parent_tool_use_id") is not None:
            continue
        if r.get("type") == "compaction" and isinstance(r.get("checkpoint"), list):
            messages = [m for m in r["checkpoint"] if isinstance(m, dict)]
        elif isinstance(r.get("message"), dict):
            messages.append(r["message"])
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
