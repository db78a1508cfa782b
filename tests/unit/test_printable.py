"""The one sanitizer for a person's terminal (:mod:`headwire.printable`)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from headwire.printable import printable
from tests.strategies import terminal_sequences

UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


@given(st.one_of(terminal_sequences(), st.text()), st.booleans())
def test_nothing_that_drives_a_terminal_is_left(text: str, one_line: bool) -> None:
    shown = printable(text, one_line=one_line)
    assert not UNSAFE.search(shown)
    if one_line:
        assert "\n" not in shown and "\t" not in shown
    assert printable(shown, one_line=one_line) == shown  # once is enough


@given(st.text(st.characters(exclude_categories=("Cc", "Cs"))), st.booleans())
def test_safe_text_comes_back_unchanged(text: str, one_line: bool) -> None:
    assert printable(text, one_line=one_line) is text


def test_sequences_are_shown_in_caret_notation() -> None:
    assert printable("a\x1b]2;t\x07b\x9b2J\x7f\ud800\r\n\tc") == "a^[]2;t^Gb\\x9b2J^?\ufffd^M\n\tc"
    assert printable("a\nb\tc", one_line=True) == "a b c"
