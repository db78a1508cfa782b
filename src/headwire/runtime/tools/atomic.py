"""Atomic file replacement for ``write_file`` and ``edit``.

The new content goes to a temporary file in the target's own directory (created exclusively,
following no symlink), which then replaces the target with one ``rename``.  So:

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
import secrets
import stat
from pathlib import Path

from headwire.runtime.tools.paths import SpecialFile, open_parent_confined


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


def write_atomically(path: Path, data: bytes) -> os.stat_result:
    """Replace (or create) the resolved ``path`` with ``data``; returns the new file's stat.

    Missing parent directories are created.  Raises :class:`OSError` (the original untouched)
    or :class:`~headwire.runtime.tools.paths.SpecialFile`.
    """
    dir_fd, name = open_parent_confined(path, make_parents=True)
    try:
        before = _existing(dir_fd, name, path)
        temp = f".{name[:200]}.headwire-{secrets.token_hex(4)}.tmp"
        # A new file gets 0666 minus the umask, as open(2) would give it; a replaced one gets
        # the original's bits (set below, once the private temporary file is written).
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o666 if before is None else 0o600,
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
