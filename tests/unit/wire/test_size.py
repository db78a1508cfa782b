"""``headwire.wire.size``: the one JSON-size function, equal to the encoded length."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.wire import encode, json_size, payload_bytes, plain_payload_bytes
from headwire.wire.size import SIZE_CHUNK
from tests.strategies import adversarial_text, json_values


@given(json_values())
def test_json_size_is_the_encoded_length(value: Any) -> None:
    assert json_size(value) == len(encode(value))


@given(adversarial_text(40))
def test_payload_bytes_leave_out_the_quotes(text: str) -> None:
    assert payload_bytes(text) == len(encode(text)) - 2
    plain = plain_payload_bytes(text)
    has_surrogate = any("\ud800" <= c <= "\udfff" for c in text)
    assert plain == (None if has_surrogate else payload_bytes(text))


@pytest.mark.parametrize("cut", [SIZE_CHUNK - 1, SIZE_CHUNK, SIZE_CHUNK + 1])
@pytest.mark.parametrize("tail", ["\ud83d\ude00", "\ud83d\ude00\ud800", "é" * 3])
def test_long_strings_are_measured_in_slices_without_splitting_a_pair(cut: int, tail: str) -> None:
    value = "a" * cut + tail
    assert json_size(value) == len(encode(value))
    assert json_size([value, {"k": value}]) == len(encode([value, {"k": value}]))


@given(st.lists(st.text(max_size=5), max_size=5).map(tuple))
def test_tuples_measure_like_lists(value: tuple[str, ...]) -> None:
    assert json_size(value) == len(encode(list(value)))


@given(adversarial_text(40), st.integers(1, 60))
def test_the_escape_table_counts_what_the_encoder_writes(text: str, repeat: int) -> None:
    """Both counters give one number on any text, repeated past the density sample (so the
    table counter is the one :func:`json_size` picks where escapes are dense)."""
    from headwire.wire.size import escape_dense, escaped_payload_bytes

    value = text * repeat
    has_surrogate = any("\ud800" <= c <= "\udfff" for c in text)
    expected = None if has_surrogate else len(encode(value)) - 2
    assert escaped_payload_bytes(value) == expected
    assert json_size(value) == len(encode(value))
    escape_dense(value)  # only a choice of speed; never raises
    escape_dense(value, from_end=True)


@given(st.text(alphabet='"\\\n\t\r\b\f\x00\x01\x1f\x7f\u2028/a', min_size=600))
def test_dense_escapes_are_sized_exactly(text: str) -> None:
    assert json_size(text) == len(encode(text))
    assert payload_bytes(text) == len(encode(text)) - 2


@pytest.mark.parametrize("count", [13_102, 13_103, 13_104, 40_000])
@pytest.mark.parametrize("char", ["\x00", "\n", "é\x01"])
def test_the_escape_sum_is_exact_across_its_slices(count: int, char: str) -> None:
    from headwire.wire.size import escaped_payload_bytes

    value = char * count
    assert escaped_payload_bytes(value) == len(encode(value)) - 2 == json_size(value) - 2
