"""The one write path: every file a tool writes is written here, and nowhere else.

A tool that writes a file declares ``writes_files = True`` (see
:func:`headwire.runtime.tools.base.writes_files`) and goes through this module:

* :func:`target_for_write` resolves the model's path inside the workspace and refuses a
  protected folder (``.git/``, ``.headwire/``) unless ``--allow-protected-writes``;
* the tool asks its :class:`~headwire.runtime.tools.read_ledger.ReadLedger` whether the file
  was read (read before write), then :func:`write_atomically` replaces it;
* :func:`open_for_append` is the one other opening for writing: a background command's output
  going to its own artifact file.

``tests/unit/runtime/tools/test_write_path.py`` scans the tool modules for any other call that
can write a file, and runs every tool that declares ``writes_files`` through the same checks.

:func:`write_atomically`: the new content goes to a temporary file in the target's own
directory (created exclusively, following no symlink), which then replaces the target with
one ``rename``.  So:

* a failed write (disk full: ``ENOSPC``; ``ulimit -f``: ``EFBIG``; an I/O error) leaves the
  original file whole and removes the temporary file;
* a hard link to the target (one inside the workspace whose other name is outside) is not
  written through: the rename gives the workspace name a new file, the other name keeps the
  old content;
* a reader never sees a half-written file.

The replacement keeps the original's permission bits (and, when headwire may, its owner and
group).  A target that exists but is not a regular file is refused: a symlink (``ELOOP``), a
directory (``EISDIR``), a FIFO, socket or device
(:class:`~headwire.runtime.tools.paths.SpecialFile`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from headwire.runtime.sandbox import write_denial
from headwire.runtime.tools.base import ToolContext
from headwire.runtime.tools.paths import (
    PathDenied,
    SpecialFile,
    check_protected,
    open_parent_confined,
    resolve_in_workspace,
)


def target_for_write(raw: str, ctx: ToolContext) -> Path:
    """The resolved path a tool may write for the model's ``raw`` path: inside the workspace,
    not protected, and no read-only sandbox in force
    (:func:`headwire.runtime.sandbox.write_denial`).
    Raises :class:`~headwire.runtime.tools.paths.PathDenied`."""
    denial = write_denial()
    if denial is not None:
        raise PathDenied(denial)
    return check_protected(raw, resolve_in_workspace(raw, ctx), ctx)


def open_for_append(path: Path) -> int:
    """A descriptor appending to the existing regular file ``path`` (a file headwire created
    itself, e.g. an artifact), following no symlink.  Raises :class:`OSError`."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _existing(dir_fd: int, name: str, path: Path) -> os.stat_result | None:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise OSError(errno.ELOOP, "Too many levels of symbolic links", str(path))
    if stat.S_ISDIR(info.st_mode):
        raise OSError(errno.EISDIR, "Is a directory", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise SpecialFile(path)
    return info


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_atomically(path: Path, data: bytes, *, new_mode: int = 0o666) -> os.stat_result:
    """Replace (or create) the resolved ``path`` with ``data``; returns the new file's stat.

    Missing parent directories are created; a new file gets ``new_mode`` minus the umask.
    Raises :class:`OSError` (the original untouched) or
    :class:`~headwire.runtime.tools.paths.SpecialFile`.
    """
    dir_fd, name = open_parent_confined(path, make_parents=True)
    try:
        before = _existing(dir_fd, name, path)
        temp = f".{name[:200]}.headwire-{os.urandom(4).hex()}.tmp"
        # A new file gets 0666 minus the umask, as open(2) would give it; a replaced one gets
        # the original's bits (set below, once the private temporary file is written).
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            new_mode if before is None else 0o600,
            dir_fd=dir_fd,
        )
        try:
            try:
                _write_all(fd, data)
                if before is not None:
                    with contextlib.suppress(PermissionError):
                        os.fchown(fd, before.st_uid, before.st_gid)
                    os.fchmod(fd, stat.S_IMODE(before.st_mode))
                after = os.fstat(fd)
            finally:
                os.close(fd)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        return after
    finally:
        os.close(dir_fd)
