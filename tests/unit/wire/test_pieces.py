"""``headwire.wire.pieces``: a long string written in pieces, the same bytes as ``encode``."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from headwire.wire import encode
from headwire.wire.pieces import encode_pieces, string_pieces
from tests.strategies import adversarial_text, json_values


@given(adversarial_text(), st.integers(1, 9))
def test_string_pieces_join_back_and_never_split_a_pair(text: str, size: int) -> None:
    pieces = list(string_pieces(text, size))
    assert "".join(pieces) == text
    for left, right in itertools.pairwise(pieces):
        assert not ("\ud800" <= left[-1] <= "\udbff" and "\udc00" <= right[0] <= "\udfff")


@given(json_values(), st.integers(1, 9), st.integers(0, 12))
def test_pieces_are_the_bytes_of_encode(value: object, size: int, long_chars: int) -> None:
    assert b"".join(encode_pieces(value, size, long_chars)) == encode(value)


@given(adversarial_text(), st.integers(1, 9))
def test_a_record_with_a_long_display_is_written_exactly(display: str, size: int) -> None:
    record = {"type": "tool_result", "message": {"content": display}, "display": display}
    assert b"".join(encode_pieces(record, size, 1)) == encode(record)


def test_a_long_string_never_becomes_one_bytes_object() -> None:
    text = 'a\u2028\ud83d\ude00\ud800"\\\n' * 100_000
    pieces = list(encode_pieces({"display": text}, 1000, 1000))
    assert b"".join(pieces) == encode({"display": text})
    assert max(map(len, pieces)) < 10_000
