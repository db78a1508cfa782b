"""Text from tools, models and recordings made safe for a person's terminal (pure).

:func:`printable` is the one sanitizer: every string headwire shows a person (stderr notes,
the progress view and its live region, the REPL, the text-mode answer on a terminal,
``sessions show``, ``doctor``) goes through it, and only the terminal writer
(:mod:`headwire.io.stdio`) writes to a terminal.  A control character is what starts an
escape sequence (ESC for 7-bit CSI, OSC, DCS; the C1 characters U+0080..U+009F for 8-bit ones)
or acts on its own (BEL, BS, CR, ...), so with each shown as visible characters, caret
notation ``^[`` for C0 and DEL, ``\\x9b`` for C1, no sequence a tool or a model wrote can
retitle the window, write the clipboard or move the cursor.  Lone surrogates (bytes that
were not UTF-8) are shown as U+FFFD.

Invariant (hypothesis property in ``tests/unit/test_printable.py``): the result holds no C0
control character but newline and tab (none at all with ``one_line``), no DEL, no C1 control
and no surrogate; text without such characters comes back unchanged (the same object).
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROL: dict[int, str] = {c: f"^{chr(c + 64)}" for c in range(32) if chr(c) not in "\n\t"}
_CONTROL[0x7F] = "^?"
_CONTROL.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_CONTROL.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))
_TRANSLATE = str.maketrans(_CONTROL)
_ONE_LINE = str.maketrans({0x0A: " ", 0x09: " ", **_CONTROL})
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_UNSAFE_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` safe for a terminal: every C0 control character but newline and tab, DEL and
    every C1 control character shown as a caret or ``\\x`` escape (``\\x1b]2;t\\x07`` is
    ``^[]2;t^G``), so no escape sequence from a tool or a model reaches the terminal; with
    ``one_line``, newlines and tabs become spaces too.  One scan (in C) when nothing needs
    changing."""
    if (_UNSAFE_ONE_LINE if one_line else _UNSAFE).search(text) is None:
        return text
    return text.translate(_ONE_LINE if one_line else _TRANSLATE)
