"""A response line of a few long strings is read exactly as a JSON parser reads it, without the
parser's copy of the line: each long string is decoded apart, in pieces cut only between
escapes, characters and surrogate pairs, and the line is emptied once it is read."""

from __future__ import annotations

import json
from collections.abc import Iterator

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.mcp import long_strings
from headwire.runtime.mcp.long_strings import read_long_strings

CHARACTERS = ["a", "xyz", "é", "日本", "😀", "\u2028", " "]
ESCAPES = ["\\n", "\\t", '\\"', "\\\\", "\\/", "\\u0041", "\\u00e9", "\\ud83d\\ude00", "\\\\\\\\"]
ATOMS = CHARACTERS + ESCAPES
"""Pieces of a JSON string literal's body: characters and escapes."""
BAD = ["\\ud800", "\\udc00x", "\x01", "\\q", "\\xff"]
"""What no JSON parser of the SDK's kind reads: a lone surrogate escape, a control character,
a bad escape, a byte that is not UTF-8 (``\\xff`` stands for it)."""

bodies = st.lists(st.sampled_from(ATOMS), max_size=40).map("".join)


@pytest.fixture(autouse=True)
def small_sizes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Long strings from 16 bytes, decoded 16 bytes at a time: every cut is exercised."""
    monkeypatch.setattr(long_strings, "LONG_BYTES", 16)
    monkeypatch.setattr(long_strings, "PIECE_BYTES", 16)
    yield


def line_of(*texts: str) -> bytes:
    content = ",".join('{"type":"text","text":"' + t + '"}' for t in texts)
    body = '{"jsonrpc":"2.0","id":1,"result":{"content":[' + content + '],"n":[1,"ab"]}}'
    return body.encode("utf-8", "surrogateescape").replace(b"\\xff", b"\xff")


@given(st.lists(bodies, min_size=1, max_size=3))
def test_a_line_is_read_as_the_parser_reads_it_or_left_untouched(texts: list[str]) -> None:
    raw = line_of(*texts)
    line = bytearray(raw)
    value = read_long_strings(line)
    if value is None:
        assert line == raw
        assert all(len(t.encode()) < 16 for t in texts)
        return
    assert value == orjson.loads(raw) == json.loads(raw)
    assert line == b""  # its bytes are gone


@given(bodies, st.sampled_from(BAD), bodies)
def test_a_string_no_parser_reads_leaves_the_line_to_the_parser(
    before: str, bad: str, after: str
) -> None:
    raw = line_of("x" * 20, before + bad + after)
    line = bytearray(raw)
    assert read_long_strings(line) is None
    assert line == raw


def test_a_long_key_or_an_unterminated_string_leaves_the_line_to_the_parser() -> None:
    for raw in (b'{"' + b"k" * 40 + b'":1}', b'{"a":"' + b"x" * 40):
        line = bytearray(raw)
        assert read_long_strings(line) is None
        assert line == raw


def test_a_long_run_of_backslashes_is_cut_between_pairs() -> None:
    body = "\\\\" * 50 + '\\"' + "\\\\" * 49
    raw = line_of(body)
    assert read_long_strings(bytearray(raw)) == json.loads(raw)
