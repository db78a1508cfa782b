"""Keep peak memory flat when tools print many large outputs.

glibc raises its mmap threshold each time a large block is freed, after which multi-megabyte
strings (a 5 MB tool output, its decoded text, its display) come from the heap and fragment it:
a session with 200 outputs of 5 MB grew by about 1.5 MB per call.  Pinning the threshold at
4 MiB keeps every such block in its own mapping, returned to the system as soon as it is freed,
while smaller buffers that grow step by step (an MCP transport reading a 20 MB reply) stay on the
heap, where growing them in place is cheap (a 256 KiB threshold pushed that case to 420 MiB).
"""

from __future__ import annotations

import contextlib
import sys

M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number for the mmap threshold."""
MMAP_THRESHOLD_BYTES = 4 * 1024 * 1024


def pin_mmap_threshold() -> bool:
    """Pin glibc's mmap threshold (no-op elsewhere); returns whether it took effect."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
    return False
