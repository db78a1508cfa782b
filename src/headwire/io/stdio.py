"""stdout is the wire; stderr carries diagnostics.

:class:`WireWriter` writes whole frames to a binary stream and flushes them, so each stream-JSON
line leaves the process as it happens.  When the reader goes away (``EPIPE``) it stops writing,
remembers it, and lets the run finish so the recording stays complete, as upstream does.
"""

from __future__ import annotations

import contextlib
import sys
from typing import BinaryIO


class WireWriter:
    """Writes frames to a binary stream; goes quiet after the reader closed the pipe."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout.buffer
        self.closed = False

    def write(self, data: bytes) -> None:
        """Write and flush one frame (no-op once the pipe is closed)."""
        if not data or self.closed:
            return
        try:
            self.stream.write(data)
            self.stream.flush()
        except BrokenPipeError:
            self.closed = True
            with contextlib.suppress(OSError):
                # keep the interpreter from complaining when it flushes stdout at exit
                devnull = open("/dev/null", "wb")  # noqa: SIM115
                sys.stdout = open("/dev/null", "w")  # noqa: SIM115
                self.stream = devnull
        except ValueError:  # stream closed under us
            self.closed = True


def warn(message: str) -> None:
    """A diagnostic line on stderr (never on the wire)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(message.rstrip("\n") + "\n")
        sys.stderr.flush()
