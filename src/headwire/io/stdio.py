"""stderr carries diagnostics; stdout is the wire (written by :mod:`headwire.io.writer`)."""

from __future__ import annotations

import contextlib
import sys


def warn(message: str) -> None:
    """A diagnostic line on stderr (never on the wire)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(message.rstrip("\n") + "\n")
        sys.stderr.flush()
