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

import functools
import re

__all__ = ["printable"]


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` safe for a terminal: every C0 control character but newline and tab, DEL and
    every C1 control character shown as a caret or ``\\x`` escape (``\\x1b]2;t\\x07`` is
    ``^[]2;t^G``), so no escape sequence from a tool or a model reaches the terminal; with
    ``one_line``, newlines and tabs become spaces too.  One or two scans (in C) when nothing
    needs changing."""
    if text.isprintable():  # no control or surrogate code point at all: one C-level scan
        return text
    unsafe, unsafe_one_line, translate, one_line_table = _tables()
    if (unsafe_one_line if one_line else unsafe).search(text) is None:
        return text
    return text.translate(one_line_table if one_line else translate)


@functools.cache
def _tables() -> tuple[re.Pattern[str], re.Pattern[str], dict[int, str], dict[int, str]]:
    """The patterns and translation tables (built on first use: a start that prints only
    plain text, such as ``headwire --version``, never builds them)."""
    control: dict[int, str] = {c: f"^{chr(c + 64)}" for c in range(32) if chr(c) not in "\n\t"}
    control[0x7F] = "^?"
    control.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
    control.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))
    return (
        re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]"),
        re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]"),
        str.maketrans(control),
        str.maketrans({0x0A: " ", 0x09: " ", **control}),
    )
