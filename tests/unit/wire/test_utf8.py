"""Strict UTF-8 validation (:mod:`headwire.wire.utf8`) against Python's strict decoder.

Both paths, simdjson's compiled validator and the decoding fallback, must answer exactly what
``bytes.decode("utf-8")`` answers, for every slice of every input: every sequence of one and
two bytes, every three-byte sequence led by a byte where UTF-8's rules change (``E0``, ``ED``,
``EF``, ``F0``, ``F4``, ``C2``), the four-byte edges, and random bytes and corrupted text.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.wire import utf8
from headwire.wire.utf8 import is_utf8, native_validator


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@contextmanager
def without_native() -> Iterator[None]:
    """As on a machine where simdjson's library cannot be loaded: the decoding fallback."""
    saved = utf8._native, utf8._looked
    utf8._native, utf8._looked = None, True
    try:
        yield
    finally:
        utf8._native, utf8._looked = saved


def test_the_compiled_validator_is_loaded_here() -> None:
    """pysimdjson is a dependency: on Linux its library carries the validator."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the fallback is what other platforms may get")
    assert native_validator() is not None


def _both(data: bytes, start: int = 0, end: int | None = None) -> tuple[bool, bool, bool]:
    native = is_utf8(data, start, end)
    with without_native():
        fallback = is_utf8(data, start, end)
    return native, fallback, is_utf8(bytearray(data), start, end)


def test_every_sequence_of_one_and_two_bytes() -> None:
    validate = native_validator()
    for pair in itertools.product(range(256), repeat=2):
        data = bytes(pair)
        expected = _decodes(data)
        assert is_utf8(data) == expected, data
        assert validate is None or validate(data, 0, 2) == expected, data
        assert validate is None or validate(data, 1, 2) == _decodes(data[1:]), data


@pytest.mark.parametrize("lead", [0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4])
def test_every_three_byte_sequence_after_a_lead_where_the_rules_change(lead: int) -> None:
    validate = native_validator()
    if validate is None:
        pytest.skip("no compiled validator: the fallback is the decoder itself")
    for second, third in itertools.product(range(256), repeat=2):
        data = bytes((lead, second, third))
        assert validate(data, 0, 3) == _decodes(data), data


@pytest.mark.parametrize(
    "data",
    [
        b"\xf0\x90\x80\x80",  # U+10000, the first four-byte code point
        b"\xf0\x8f\xbf\xbf",  # overlong
        b"\xf4\x8f\xbf\xbf",  # U+10FFFF, the last
        b"\xf4\x90\x80\x80",  # above U+10FFFF
        b"\xf5\x80\x80\x80",
        b"\xf8\x88\x80\x80\x80",  # a five-byte form
        b"\xed\x9f\xbf",  # U+D7FF
        b"\xed\xa0\x80",  # U+D800, a surrogate
        b"\xee\x80\x80",  # U+E000
        b"\xc0\x80",  # overlong NUL
        b"\xef\xbb\xbf{}",  # a byte order mark is UTF-8
        b"\xf0\x9f\x98",  # cut short
        b"a" * 63 + b"\xc3",  # cut at a SIMD block's edge
        b"a" * 64 + b"\x80",
        b"\xc3\xa9" * 40 + b"\xff",
    ],
)
def test_the_edges_of_the_encoding(data: bytes) -> None:
    assert _both(data) == (_decodes(data),) * 3


def test_start_and_end_mean_what_they_mean_in_a_slice() -> None:
    data = b"xx\xc3\xa9yy"
    assert _both(data, 2) == (True,) * 3
    assert _both(data, 3) == (False,) * 3  # starts on a continuation byte
    assert _both(data, 0, 3) == (False,) * 3  # ends inside the character
    assert _both(data, -4, 4) == (True,) * 3
    assert _both(data, 0, 10**9) == (True,) * 3  # clamped, as a slice is: nothing read beyond
    assert _both(data, 5, 2) == (True,) * 3  # empty
    assert _both(b"", 0, 0) == (True,) * 3


def _corrupted_text() -> st.SearchStrategy[bytes]:
    """Text encoded as UTF-8 (with surrogates passed through), then a few bytes overwritten."""
    text = st.text(max_size=80).map(lambda t: t.encode("utf-8", "surrogatepass"))
    edits = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=3)

    def corrupt(data: bytes, changes: list[tuple[int, int]]) -> bytes:
        out = bytearray(data)
        for at, value in changes:
            if out:
                out[at % len(out)] = value
        return bytes(out)

    return st.builds(corrupt, text, edits)


@settings(max_examples=400)
@given(
    st.one_of(st.binary(max_size=200), _corrupted_text()),
    st.integers(-210, 210),
    st.one_of(st.none(), st.integers(-210, 210)),
)
def test_any_slice_of_any_bytes_is_judged_as_the_decoder_judges_it(
    data: bytes, start: int, end: int | None
) -> None:
    """Invariant: ``is_utf8(data, start, end)`` is ``data[start:end].decode("utf-8")``
    succeeding, through the compiled validator, the fallback, and for a ``bytearray``."""
    assert _both(data, start, end) == (_decodes(data[start:end]),) * 3


def test_a_library_without_the_symbol_or_no_library_gives_the_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for module in ("_ctypes", "no_such_module_headwire", "headwire"):
        monkeypatch.setattr(utf8, "_LIBRARY_MODULE", module)
        assert utf8._load() is None, module


@pytest.mark.parametrize(("start", "end"), [(-1, 2), (0, 4), (3, 2), (4, 4)])
def test_the_compiled_validator_never_reads_outside_the_bytes(start: int, end: int) -> None:
    validate = native_validator()
    if validate is None:
        pytest.skip("no compiled validator here")
    with pytest.raises(ValueError, match="no bytes"):
        validate(b"abc", start, end)
