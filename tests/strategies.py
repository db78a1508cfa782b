"""Hypothesis strategies shared by the tests: adversarial text for the JSON byte accounting."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

ATOMS = [
    "a",
    "Z",
    " ",
    "/",
    '"',
    "\\",
    "\b",
    "\t",
    "\n",
    "\f",
    "\r",
    "\x00",
    "\x01",
    "\x1f",
    "\x7f",
    "\x80",
    "é",
    "\u07ff",
    "\u0800",
    "汉",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\uffff",
    "😀",
    "\U0010ffff",
    "\ud800",
    "\udbff",
    "\udc00",
    "\udfff",
    "\ud83d\ude00",
]


def adversarial_text(max_atoms: int = 300) -> st.SearchStrategy[str]:
    """Strings built from atoms that stress every JSON byte-accounting rule."""
    atom = st.one_of(st.sampled_from(ATOMS), st.text(max_size=3))
    return st.lists(atom, max_size=max_atoms).map("".join)


def json_values() -> st.SearchStrategy[Any]:
    """Arbitrary JSON values whose strings are adversarial."""
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        adversarial_text(20),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=5),
            st.dictionaries(adversarial_text(5), children, max_size=5),
        ),
        max_leaves=30,
    )


def terminal_sequences(max_pieces: int = 40) -> st.SearchStrategy[str]:
    """Text mixed with what drives a terminal: C0 and C1 controls, DEL, and OSC (a title, a
    clipboard write), CSI (a cursor move, a clear, a colour), DCS sequences, in their 7-bit
    (ESC) and 8-bit (C1) forms, whole or cut short."""
    word = st.text(st.characters(codec="utf-8"), max_size=8)
    param = st.text("0123456789;?", max_size=6)
    body = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
    end = st.sampled_from(["\x07", "\x1b\\", "\x9c", ""])
    piece = st.one_of(
        word,
        st.characters(max_codepoint=0x1F),
        st.characters(min_codepoint=0x7F, max_codepoint=0x9F),
        st.builds(lambda n, b, e: f"\x1b]{n};{b}{e}", st.sampled_from("0125"), body, end),
        st.builds(lambda b, e: f"\x9d52;c;{b}{e}", body, end),
        st.builds(lambda p, f: f"\x1b[{p}{f}", param, st.sampled_from("ABCDHJKmsuhl")),
        st.builds(lambda p, f: f"\x9b{p}{f}", param, st.sampled_from("HJm")),
        st.builds(lambda b, e: f"\x1bP{b}{e}", body, end),
        st.builds(lambda b: f"\x90{b}\x9c", body),
    )
    return st.lists(piece, max_size=max_pieces).map("".join)
