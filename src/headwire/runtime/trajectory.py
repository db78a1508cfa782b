"""Writing a session's ATIF trajectory (the I/O around :func:`headwire.transcript.atif.
render_atif`).

The trajectory is rendered from the session's recording, which is flushed record by record
while the run goes on, so every ending (an answer, a run limit, an error, SIGINT/SIGTERM, which
end the turn with its recorded ``result`` first) leaves the same complete history to render.
``--trajectory-out`` calls :func:`write_trajectory` once the runtime is closed;
``headwire sessions export --format atif`` calls :func:`trajectory_bytes`.  The file is
replaced atomically (:func:`headwire.runtime.tools.atomic.write_atomically`, created 0600): a
reader never sees half a trajectory.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from headwire.runtime.store.recording import read_records
from headwire.runtime.tools.atomic import write_atomically
from headwire.transcript.atif import JsonDict, render_atif
from headwire.wire import dumps


def artifact_info(path: str) -> JsonDict | None:
    """``{"path", "sha256", "bytes"}`` of the artifact at ``path`` (``None`` when it is not a
    readable regular file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            digest = hashlib.file_digest(f, "sha256")
            size = f.tell()
    except OSError:
        return None
    finally:
        os.close(fd)
    return {"path": path, "sha256": digest.hexdigest(), "bytes": size}


def trajectory_bytes(recording: Path, session_id: str, version: str) -> bytes:
    """The ATIF document of the recording at ``recording``, as JSON bytes."""
    document = render_atif(
        read_records(recording),
        session_id=session_id,
        version=version,
        artifact_info=artifact_info,
    )
    return dumps(document) + b"\n"


def write_trajectory(target: Path, recording: Path, session_id: str, version: str) -> None:
    """Render the recording and replace ``target`` with it.  Raises :class:`OSError` or
    :class:`~headwire.runtime.store.recording.RecordingError`."""
    data = trajectory_bytes(recording, session_id, version)
    resolved = Path(os.path.realpath(target))
    write_atomically(resolved, data, new_mode=0o600)


__all__ = ["artifact_info", "trajectory_bytes", "write_trajectory"]
