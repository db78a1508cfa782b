"""``httpx``, imported without its command-line client.

``import httpx`` also imports ``httpx._main``, the ``httpx`` console command, which pulls in
``rich``, ``click`` and ``pygments`` when they are installed (``mcp`` installs them): about
40% of httpx's import time, paid by every headwire run that talks to a model and never used.
``httpx`` treats a failing ``from ._main import main`` as "CLI extras not installed", so the
import is blocked for that one moment (a ``None`` entry in :data:`sys.modules` makes it fail)
and unblocked right after; a later ``import httpx._main`` works as usual.
"""

from __future__ import annotations

import sys

_BLOCKED = "httpx._main"

if "httpx" not in sys.modules and _BLOCKED not in sys.modules:
    sys.modules[_BLOCKED] = None  # type: ignore[assignment]
    try:
        import httpx
    finally:
        if sys.modules.get(_BLOCKED, False) is None:
            del sys.modules[_BLOCKED]
else:
    import httpx

__all__ = ["httpx"]
