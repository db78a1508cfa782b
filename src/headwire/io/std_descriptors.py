"""Descriptors 0, 1 and 2 are open before anything else is.

A parent may start ``headwire`` with stdin, stdout or stderr closed (``>&-``, ``2>&-``, a
daemon's spawn).  The next file the process opens then takes that number: with stderr closed
asyncio's ``epoll`` descriptor became 2, inherited by every child that writes its diagnostics
there, and with stdout closed any file opened first (the session recording, an artifact)
would become descriptor 1, where the wire is written; with any of them closed,
``sys.stdin``/``sys.stdout``/``sys.stderr`` is ``None`` and the first use was a traceback.
:func:`open_closed_descriptors` opens ``/dev/null`` on each closed one (as Node, and so Qwen
Code, does at start, and as OpenSSH's ``sanitise_stdfd`` does): a closed stdout discards what
it is given, a closed stdin reads as empty, exactly what the parent asked for, and no later
file can take those numbers.

Called first by :func:`headwire.cli.main.entry`; a stdlib-only module, no import cost.
"""

from __future__ import annotations

import errno
import os
import sys

__all__ = ["open_closed_descriptors"]

_NAMES = ("stdin", "stdout", "stderr")


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError as exc:
        return exc.errno == errno.EBADF
    return False


def open_closed_descriptors() -> list[int]:
    """Open ``/dev/null`` on each of descriptors 0, 1 and 2 that is closed, and give Python a
    stream on it where ``sys.stdin``/``stdout``/``stderr`` is ``None``; returns the
    descriptors opened (``[]`` in the ordinary case: three ``fstat`` calls)."""
    opened = [fd for fd in (0, 1, 2) if _closed(fd)]
    for fd in opened:
        null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: ``fd`` or below
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    for fd, name in enumerate(_NAMES):
        if getattr(sys, name) is None and not _closed(fd):
            mode = "r" if fd == 0 else "w"
            stream = open(  # noqa: SIM115  (the process's standard stream, never closed)
                fd, mode, encoding="utf-8", errors="surrogateescape", closefd=False
            )
            setattr(sys, name, stream)
    return opened
