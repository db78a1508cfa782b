"""Message ids: the ``uuid`` of every wire message and recording entry.

Each message of a turn carries a fresh random version-4 UUID (``xxxxxxxx-xxxx-4xxx-yxxx-
xxxxxxxxxxxx``), as upstream's are.  They name messages, not secrets, so they come from a private
Mersenne Twister seeded from the OS (and reseeded in a forked child) rather than one ``getrandom``
system call each: a third of the cost of :func:`uuid.uuid4`, which matters at a dozen per turn.
Session ids, which name files on disk, still come from :func:`uuid.uuid4`.
"""

from __future__ import annotations

import os
import random

__all__ = ["new_uuid"]

_RANDOM = random.Random()  # seeded from os.urandom
os.register_at_fork(after_in_child=_RANDOM.seed)  # a child never repeats its parent's ids
_VERSION_VARIANT = (0x4 << 76) | (0x2 << 62)
"""The version nibble (4) and the RFC 4122 variant bits (``10``)."""
_FREE = ~((0xF << 76) | (0x3 << 62)) & ((1 << 128) - 1)
"""The 122 random bits."""


def new_uuid() -> str:
    """A random version-4 UUID in its canonical 36-character form."""
    h = "%032x" % (_RANDOM.getrandbits(128) & _FREE | _VERSION_VARIANT)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
