"""``headwire.wire``: bytes equal to Node's JSON.stringify, exact payload accounting."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.wire import dumps, encode, encode_str, js_number, payload_bytes
from tests.strategies import adversarial_text, json_values


def reference_string_bytes(s: str) -> bytes:
    """An independent, slow reference: walk UTF-16 units as V8's JSON.stringify does."""
    units = s.encode("utf-16-le", "surrogatepass")
    codes = [units[i] | (units[i + 1] << 8) for i in range(0, len(units), 2)]
    out = bytearray(b'"')
    i = 0
    short = {0x22: b'\\"', 0x5C: b"\\\\", 8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r"}
    while i < len(codes):
        c = codes[i]
        if c in short:
            out += short[c]
        elif c < 0x20:
            out += b"\\u%04x" % c
        elif 0xD800 <= c <= 0xDBFF and i + 1 < len(codes) and 0xDC00 <= codes[i + 1] <= 0xDFFF:
            cp = 0x10000 + ((c - 0xD800) << 10) + (codes[i + 1] - 0xDC00)
            out += chr(cp).encode()
            i += 1
        elif 0xD800 <= c <= 0xDFFF:
            out += b"\\u%04x" % c
        else:
            out += chr(c).encode()
        i += 1
    out += b'"'
    return bytes(out)


@given(adversarial_text())
def test_string_bytes_match_reference(s: str) -> None:
    assert encode_str(s) == reference_string_bytes(s)
    assert encode(s) == encode_str(s)


@given(adversarial_text())
def test_payload_bytes_is_encoded_length_minus_quotes(s: str) -> None:
    assert len(encode(s)) == 2 + payload_bytes(s)


@given(json_values())
def test_encode_never_raises_and_parses_back(value: object) -> None:
    data = encode(value)
    parsed = json.loads(data.decode("utf-8"))
    assert isinstance(parsed, type(parsed))


def test_known_escapes_and_raw_characters() -> None:
    assert encode('"\\\b\t\n\f\r') == b'"\\"\\\\\\b\\t\\n\\f\\r"'
    assert encode("\x00\x01\x1f") == b'"\\u0000\\u0001\\u001f"'
    assert encode("\x7f\u2028\u2029/") == '"\x7f\u2028\u2029/"'.encode()
    assert encode("\ud83d\ude00") == '"\U0001f600"'.encode()
    assert encode("\ud800") == b'"\\ud800"'
    assert encode("\udc00\ud800") == b'"\\udc00\\ud800"'
    assert encode({"k\udfff": ["\ud800x"]}) == b'{"k\\udfff":["\\ud800x"]}'


def test_dict_order_and_compact_separators() -> None:
    assert encode({"b": 1, "a": [True, False, None]}) == b'{"b":1,"a":[true,false,null]}'


def test_numbers_follow_ecmascript() -> None:
    cases = [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (100.0, "100"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1.5e-7, "1.5e-7"),
        (123.456, "123.456"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-2.5, "-2.5"),
    ]
    for value, text in cases:
        assert js_number(value) == text, value
        assert encode(value) == text.encode()
    assert encode(math.nan) == b"null"
    assert encode(-math.inf) == b"null"
    assert encode(2**53) == b"9007199254740992"
    assert encode(2**53 + 1) == b"9007199254740992"
    assert encode(10**30) == b"1e+30"
    assert encode(-(2**70)) == b"-1.1805916207174113e+21"


@settings(deadline=None, max_examples=40)
@given(json_values(), st.integers(250, 1200), st.booleans())
def test_values_deeper_than_orjson_writes_are_written_as_v8_writes_them(
    value: object, depth: int, objects: bool
) -> None:
    """Invariant: ``encode`` and ``dumps`` never raise for a deep value, and write each level
    as they write a shallow one (before: ``TypeError: Recursion limit reached`` past 254)."""
    wrapped = value
    for _ in range(depth):
        wrapped = {"1": 0, "k": wrapped} if objects else [wrapped]
    opening, closing = (b'{"1":0,"k":', b"}") if objects else (b"[", b"]")
    assert encode(wrapped) == opening * depth + encode(value) + closing * depth
    assert dumps(wrapped) == opening * depth + dumps(value) + closing * depth
