"""Message ids: the ``uuid`` of every wire message and recording entry.

Each message carries a version-4 UUID in its canonical form (``xxxxxxxx-xxxx-4xxx-yxxx-
xxxxxxxxxxxx``), as upstream's are.  They name messages, not secrets, so a process draws 74
random bits once (from the OS, again in a forked child) for the first four groups, and the last
group counts the messages it named: ids never repeat within a process and collide across
processes with negligible chance, at a fraction of :func:`uuid.uuid4`'s cost (one ``getrandom``
system call and a ``UUID`` object each), which matters at a dozen messages per turn.  Session
ids, which name files on disk, still come from :func:`uuid.uuid4`.
"""

from __future__ import annotations

import itertools
import os

__all__ = ["new_uuid"]

_NODE_MASK = (1 << 48) - 1
_prefix = ""
_counter = itertools.count()


def _reseed() -> None:
    """Draw this process's random prefix (version 4, RFC 4122 variant) and restart the count."""
    global _prefix, _counter
    bits = int.from_bytes(os.urandom(10), "big") & ((1 << 80) - 1)
    # 80 random bits laid out as time_low(32) time_mid(16) time_hi(16) clock_seq(16)
    h = f"{bits:020x}"
    version = "4" + h[13:16]
    variant = "89ab"[int(h[16], 16) & 3] + h[17:20]
    _prefix = f"{h[:8]}-{h[8:12]}-{version}-{variant}-"
    _counter = itertools.count(int.from_bytes(os.urandom(6), "big"))


_reseed()
os.register_at_fork(after_in_child=_reseed)  # a child never repeats its parent's ids


def new_uuid() -> str:
    """A version-4 UUID in its canonical 36-character form, unique within this process."""
    return f"{_prefix}{next(_counter) & _NODE_MASK:012x}"
