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
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from headwire.errors import StorageError
from headwire.io.lines import READ_CHUNK, SkippedLine, file_lines, open_regular
from headwire.runtime.ids import new_uuid
from headwire.runtime.store.storage import chats_dir, legacy_chats_dir, private_dir
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

    def __init__(
        self,
        root: Path,
        cwd: Path,
        session_id: str,
        *,
        persist: bool = True,
        fork_from: Path | None = None,
    ) -> None:
        """``persist=False`` (``--no-session-persistence``): nothing is written, the session
        cannot be resumed.  ``fork_from`` (``--fork-session``): a new recording starts as a
        copy of that one, so the fork resumes with the whole conversation."""
        self.session_id = check_session_id(session_id)
        self.persist = persist
        self.cwd = str(cwd)
        """The working directory, on every record (as upstream's recordings have it)."""
        self.path = chats_dir(root, cwd) / f"{session_id}.jsonl"
        self._file: IO[bytes] | None = None
        self.failed: str | None = None
        self.failure_reported = False
        """Set by whoever announced ``failed`` (the agent's ``session_recording_degraded``)."""
        if not persist:
            return
        try:
            exists = self.path.exists()
        except OSError:
            exists = False
        if fork_from is not None and not exists:
            self._copy(fork_from)
        elif exists:  # resuming: take the lock now, so a busy session is refused up front
            try:
                self._open()
            except OSError as exc:
                self.failed = f"{type(exc).__name__}: {exc}"

    def _copy(self, source: Path) -> None:
        """Start this recording as a copy of ``source`` (streamed; a failure disables
        recording, as any write failure does)."""
        import shutil  # only a forked session copies; a run's start does without it

        try:
            file = self._open()
            with source.open("rb") as src:
                shutil.copyfileobj(src, file)
            file.flush()
        except OSError as exc:
            self.failed = f"{type(exc).__name__}: {exc}"
            self.close()

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
        if self.failed is not None or not self.persist:
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


MAX_RECORD_BYTES = 256 << 20
"""A longer line is skipped by the readers (the recorder writes lines that long only for a
display of hundreds of MB, which ``--resume`` does not need)."""


def open_recording(path: Path, *, follow_symlinks: bool = True) -> int:
    """The one way a recording is opened for reading: a blocking descriptor the caller closes.

    A recording is untrusted input (any file named ``<id>.jsonl`` in the chats folder): the
    open never blocks, and a FIFO, socket, device or folder is refused
    (:func:`headwire.io.lines.open_regular`).  Raises :class:`RecordingError` (one line).
    """
    try:
        return open_regular(path, follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise RecordingError(
            f"cannot read session recording {path}: {exc.strerror or exc}"
        ) from None


def read_records(
    path: Path,
    chunk_bytes: int = READ_CHUNK,
    *,
    skipped: Callable[[SkippedLine], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the records of a recording one line at a time (never the whole file in memory),
    skipping a line that is not a JSON object.

    Lines come from :func:`headwire.io.lines.file_lines`: a torn last line (a crash while it was
    written) or a line over :data:`MAX_RECORD_BYTES` is skipped without being read whole, and
    reported to ``skipped`` when given.  Lines are read with :func:`headwire.wire.loads`, which
    takes back everything :func:`~headwire.wire.encode` wrote, lone surrogate escapes
    (``\\ud800``) included.  Raises :class:`RecordingError`."""
    fd = open_recording(path)
    try:
        for line in file_lines(fd, limit=MAX_RECORD_BYTES, chunk=chunk_bytes):
            if isinstance(line, SkippedLine):
                if skipped is not None:
                    skipped(line)
                continue
            try:
                record = loads(line, any_depth=True)  # what the recorder wrote, at any depth
            except JsonDecodeError:
                continue
            if isinstance(record, dict):
                yield record
    except OSError as exc:
        raise RecordingError(
            f"cannot read session recording {path}: {exc.strerror or exc}"
        ) from None
    finally:
        os.close(fd)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # e.g. a name too long for the file system
        return False


def find_session(root: Path, cwd: Path, session_id: str) -> Path:
    """The recording of ``session_id`` in this project (an id is one plain file name: no
    separators, no leading dot, so ``../x`` cannot reach a file outside the chats folder).

    A recording of the earlier folder layout
    (:func:`headwire.runtime.store.storage.legacy_chats_dir`) is found too, and moved into this
    project's folder so that the session goes on in one file.
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


LATEST = "latest"
"""``--resume latest`` (and ``-r`` with no id): the most recent session of this project."""


def resolve_session(root: Path, cwd: Path, key: str) -> Path:
    """The recording ``--resume KEY`` names in this project: the id itself, else ``latest``
    (the most recent one), else the only id that starts with ``KEY``.  Raises
    :class:`RecordingError` (one line, saying what to type instead) when none or several
    match."""
    try:
        return find_session(root, cwd, key)
    except RecordingError:
        if key == LATEST:
            found = latest_session(root, cwd)
            if found is None:
                raise RecordingError(
                    "No saved session in this folder to resume; start one with 'headwire -p PROMPT'"
                ) from None
            return found
        try:
            check_session_id(key)
        except InvalidSessionIdError:
            raise RecordingError(
                f"No saved session found with ID {key!r}; list them with 'headwire sessions list'"
            ) from None
        folder = chats_dir(root, cwd)
        try:
            names = [n for n in os.listdir(folder) if n.startswith(key) and n.endswith(".jsonl")]
        except OSError:
            names = []
        if len(names) == 1:
            return folder / names[0]
        if names:
            shown = ", ".join(sorted(n.removesuffix(".jsonl") for n in names)[:5])
            raise RecordingError(
                f"Session ID prefix {key!r} is ambiguous: {shown}; give more of the id"
            ) from None
        raise RecordingError(
            f"No saved session found with ID {key} in this folder; list them with "
            "'headwire sessions list', or resume the latest with 'headwire -c'"
        ) from None


def latest_session(root: Path, cwd: Path) -> Path | None:
    """The most recently written recording of this project, if any (only regular files count:
    a FIFO or a symlink named ``*.jsonl`` is not a recording)."""
    folder = chats_dir(root, cwd)
    if not folder.is_dir():
        return None
    found: list[tuple[float, Path]] = []
    for path in folder.glob("*.jsonl"):
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((info.st_mtime, path))
    return max(found)[1] if found else None


INTERRUPTED_CALL_MESSAGE = "Tool call interrupted: the session ended before it finished."
"""The tool result :func:`conversation_of` supplies for a call whose result was never recorded."""

ROLES = ("system", "user", "assistant", "tool")


def message_problem(message: dict[str, Any]) -> str | None:
    """What is wrong with a recorded chat message's shape (``None``: nothing), in words: the
    fields the agent loop and the providers read must have the types they expect
    (``role`` one of :data:`ROLES`; ``content`` a string, null or a list of objects;
    ``tool_calls`` a list of ``{"id": str, "function": {"name": str, "arguments": str}}``;
    a tool message's ``tool_call_id`` a string)."""
    role = message.get("role")
    if role not in ROLES:
        return f'"role" is {_shown(role)}, not one of {", ".join(ROLES)}'
    content = message.get("content")
    parts_ok = isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("text", ""), str) for part in content
    )
    if content is not None and not isinstance(content, str) and not parts_ok:
        return f'"content" is {_shown(content)}, not a string, null or a list of parts'
    reasoning = message.get("reasoning_content")
    if reasoning is not None and not isinstance(reasoning, str):
        return f'"reasoning_content" is {_shown(reasoning)}, not a string'
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            return f'"tool_calls" is {_shown(calls)}, not a list'
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if (
                not isinstance(call, dict)
                or not isinstance(call.get("id"), str)
                or not isinstance(function, dict)
                or not isinstance(function.get("name"), str)
                or not isinstance(function.get("arguments", ""), str)
            ):
                return f'a tool call is {_shown(call)}, not {{"id", "function": {{"name", ...}}}}'
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return f'"tool_call_id" is {_shown(message.get("tool_call_id"))}, not a string'
    return None


def _shown(value: Any) -> str:
    """A short description of a bad value for a one-line error."""
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def conversation_of(path: Path) -> list[dict[str, Any]]:
    """The OpenAI-form conversation recorded in ``path`` (system prompts excluded), from the
    last ``compaction`` record's checkpoint on when there is one.

    A session killed mid-tool leaves an assistant message whose tool calls have no result;
    chat APIs reject such a history, so each missing result is supplied as
    :data:`INTERRUPTED_CALL_MESSAGE`.  A message of the wrong shape (:func:`message_problem`)
    raises :class:`RecordingError` naming the record: the conversation cannot go on without it.
    """
    messages: list[dict[str, Any]] = []
    for number, record in enumerate(read_records(path), 1):
        if record.get("parent_tool_use_id") is not None:
            continue
        if record.get("type") == "compaction":
            checkpoint = record.get("checkpoint")
            if not isinstance(checkpoint, list):
                raise RecordingError(
                    f"session recording {path} is damaged: record {number}: "
                    "a compaction without its checkpoint list"
                )
            for message in checkpoint:
                problem = message_problem(message) if isinstance(message, dict) else "not a dict"
                if problem is not None:
                    raise RecordingError(
                        f"session recording {path} is damaged: record {number}: "
                        f"checkpoint: {problem}"
                    )
            messages = list(checkpoint)
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        problem = message_problem(message)
        if problem is not None:
            raise RecordingError(f"session recording {path} is damaged: record {number}: {problem}")
        messages.append(message)
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
