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
