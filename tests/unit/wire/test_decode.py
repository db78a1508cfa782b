"""The text rule's reading half: :func:`headwire.wire.loads` reads back what the writers write."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.errors import RemoteProtocolError
from headwire.wire import JsonDecodeError, dumps, encode, loads
from tests.strategies import adversarial_text


def any_text(max_size: int = 40) -> st.SearchStrategy[str]:
    """Any UTF-16 code unit sequence: lone surrogates, pairs, controls, astral characters."""
    raw = st.text(alphabet=st.characters(exclude_categories=()), max_size=max_size)
    return st.one_of(raw, adversarial_text(max_size // 4))


def exact_values() -> st.SearchStrategy[Any]:
    """JSON values whose numbers survive any JSON round trip (finite, integers within 2**53)."""
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53), max_value=2**53),
        st.floats(allow_nan=False, allow_infinity=False),
        any_text(),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=5), st.dictionaries(any_text(8), children, max_size=5)
        ),
        max_leaves=30,
    )


def join_pairs(s: str) -> str:
    """``s`` as any JSON reader returns it: an adjacent high+low pair is one code point."""
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def as_read(value: Any) -> Any:
    """``value`` as a JSON round trip gives it back: pairs joined, every number as the double
    it denotes (JavaScript prints ``5.429277097271519e16`` as ``54292770972715190``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return join_pairs(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[join_pairs(key)] = as_read(item)
        return out
    if isinstance(value, list):
        return [as_read(v) for v in value]
    return value


def _no_colliding_keys(value: Any) -> bool:
    if isinstance(value, Mapping):
        keys = [join_pairs(k) for k in value]
        return len(set(keys)) == len(keys) and all(map(_no_colliding_keys, value.values()))
    if isinstance(value, list):
        return all(map(_no_colliding_keys, value))
    return True


@settings(max_examples=400)
@given(exact_values())
def test_loads_reads_back_whatever_encode_and_dumps_write(value: Any) -> None:
    """Invariant: ``loads(encode(v)) == v`` and ``loads(dumps(v)) == v`` (pairs joined)."""
    if not _no_colliding_keys(value):
        return
    expected = as_read(value)
    assert as_read(loads(encode(value))) == expected
    assert as_read(loads(dumps(value))) == expected
    assert as_read(loads(encode(value).decode("utf-8"))) == expected  # str input as well


@given(any_text())
def test_loads_agrees_with_the_standard_library_on_every_string(text: str) -> None:
    line = json.dumps(text)  # ASCII escapes: lone surrogates as \udxxx
    assert loads(line) == json.loads(line) == join_pairs(text)
    assert loads(line.encode()) == join_pairs(text)


def test_dumps_is_orjson_until_a_surrogate_appears() -> None:
    plain = {"a": [1, 2.5, None, True, "é😀"], "0": 1}
    assert dumps(plain) == orjson.dumps(plain)
    assert dumps({"name": "caf\udce9.txt"}) == b'{"name":"caf\\udce9.txt"}'
    assert dumps({"k\ud800": ["\udfff"]}) == b'{"k\\ud800":["\\udfff"]}'


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a":"\xe9"}', "invalid UTF-8 at byte 6"),
        (b'{"a":"\xed\xa0\x80"}', "invalid UTF-8 at byte 6"),  # a raw surrogate is not UTF-8
        (b"{", "unexpected end of data"),  # orjson's messages, as before
        (b"NaN", "unexpected character"),
        (b"[Infinity]", "unexpected character"),
        (b"[" * 100_000 + b"]" * 100_000, "depth limit exceeded"),
    ],
)
def test_what_is_not_json_text_is_one_clear_error(data: bytes, reason: str) -> None:
    with pytest.raises(JsonDecodeError) as caught:
        loads(data)
    assert caught.value.msg.startswith(reason)
    # Callers that caught orjson's error (or any protocol error) catch this one unchanged.
    assert isinstance(caught.value, orjson.JSONDecodeError)
    assert isinstance(caught.value, RemoteProtocolError)


def test_replace_invalid_reads_bad_bytes_as_u_fffd_as_node_does() -> None:
    assert loads(b'{"a":"caf\xe9 \\ud800"}', replace_invalid=True) == {"a": "caf\ufffd \ud800"}
    assert loads(b'{"a":"\xff"}', replace_invalid=True) == {"a": "\ufffd"}
    with pytest.raises(JsonDecodeError):
        loads(b'{"a":\xff}', replace_invalid=True)
