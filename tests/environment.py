"""The fixed environment every test runs in, whatever the caller's shell has.

The suite must pass from a CI runner with ``TERM=dumb``, an Emacs shell, ``LANG=C`` or a narrow
window: what a terminal is, the locale, the width and the colour switches are set here once,
for the pytest process and so for every process a test starts (:func:`fixed`), and a test that
needs another value sets it itself (a tmux pane's ``TERM`` is tmux's: :mod:`tests.e2e.terminal`).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

FIXED: dict[str, str] = {"TERM": "xterm", "LANG": "C.UTF-8"}
"""Values every test sees."""

DROPPED_PREFIXES = ("LC_",)
DROPPED = frozenset(
    {
        "LANGUAGE",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLORTERM",
        "TTY_COMPATIBLE",
        "TTY_INTERACTIVE",
        "JUPYTER_COLUMNS",
        "JUPYTER_LINES",
    }
)
"""Variables that change how a terminal, the locale or the width is seen: never inherited."""


def fixed(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the caller's terminal, locale, width and colour settings, with
    :data:`FIXED` in their place."""
    out = {k: v for k, v in env.items() if k not in DROPPED and not k.startswith(DROPPED_PREFIXES)}
    out.update(FIXED)
    return out


def apply(environ: MutableMapping[str, str]) -> None:
    """Make ``environ`` (``os.environ``) :func:`fixed` in place."""
    wanted = fixed(environ)
    for key in [k for k in environ if k not in wanted]:
        del environ[key]
    environ.update(wanted)
