"""The any-depth reader agrees with the standard library, and reads what encode writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.wire import JsonDecodeError, encode, loads
from headwire.wire.deep_json import loads_any_depth
from tests.strategies import json_values


def _stdlib(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(name)

    return json.loads(text, parse_constant=refuse)


@given(json_values(), st.booleans(), st.data())
def test_agrees_with_the_standard_library(value: Any, spaced: bool, data: st.DataObject) -> None:
    """Invariant: for every text the standard library reads, the same value; for every text it
    refuses, a ``ValueError`` (texts cut or with one character dropped included)."""
    text = (
        json.dumps(value, indent=1 if spaced else None, allow_nan=False) if _finite(value) else "1"
    )
    if data.draw(st.booleans()) and text:
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + text[at + 1 :] if data.draw(st.booleans()) else text[:at]
    try:
        expected = _stdlib(text)
    except ValueError:
        with pytest.raises(ValueError):
            loads_any_depth(text)
        return
    assert encode(loads_any_depth(text)) == encode(expected)


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


@settings(deadline=None, max_examples=40)
@given(json_values(), st.integers(1000, 4000))
def test_reads_back_what_encode_writes_at_any_depth(value: Any, depth: int) -> None:
    """Invariant: ``loads(encode(v), any_depth=True)`` gives ``v`` back however deep."""
    wrapped = value
    for level in range(depth):
        wrapped = [wrapped] if level % 2 else {"k\ud800": wrapped}
    written = encode(wrapped)
    assert encode(loads(written, any_depth=True)) == written


@settings(deadline=None, max_examples=40)
@given(st.sampled_from([None, 1, "x", [], {}]), st.integers(1025, 4000))
def test_a_client_line_deeper_than_orjson_reads_is_refused(value: Any, depth: int) -> None:
    wrapped = value
    for level in range(depth):
        wrapped = [wrapped] if level % 2 else {"k": wrapped}
    with pytest.raises(JsonDecodeError):
        loads(encode(wrapped))
