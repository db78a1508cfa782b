"""``headwire.wire.loads``: reads back everything ``encode`` writes (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.wire import encode, loads

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF)),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON)
def test_round_trip_including_lone_surrogates(value: object) -> None:
    assert loads(encode(value)) == value
    assert encode(loads(encode(value))) == encode(value)


@pytest.mark.parametrize("text", [b"NaN", b"[Infinity]", b"-Infinity", b"{", b"\xff"])
def test_not_json_is_refused(text: bytes) -> None:
    with pytest.raises(ValueError):
        loads(text)


def test_orjson_limits_stay_without_surrogates() -> None:
    deep = b"[" * 2000 + b"]" * 2000
    with pytest.raises(ValueError):
        loads(deep)
