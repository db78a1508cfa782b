"""headwire: a headless coding-agent CLI whose wire tool results are bounded exactly.

The pure layers (``headwire.wire``, ``headwire.projection``) hold no I/O; everything that
touches a file descriptor, a clock or a process lives above them.
"""

__version__ = "0.1.0"
