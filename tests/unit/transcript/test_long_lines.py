"""Long recording lines read by their ends (the invariants of ``transcript/long_lines.py``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwire.projection import project_tool_result_content
from headwire.transcript.long_lines import (
    LONG_STRING_BYTES,
    LongText,
    parse_long_line,
    read_long_line,
)
from headwire.wire import encode
from tests.strategies import adversarial_text, json_values


def long_strings() -> st.SearchStrategy[str]:
    """Strings of 64 KiB to about 1.5 MB of JSON: an adversarial piece, repeated."""
    piece = adversarial_text(40).filter(lambda s: len(s) > 0)
    return st.tuples(piece, st.integers(70_000, 700_000), adversarial_text(10)).map(
        lambda t: (t[0] * (t[1] // len(t[0]) + 1))[: t[1]] + t[2]
    )


def records() -> st.SearchStrategy[dict[str, Any]]:
    small = st.dictionaries(adversarial_text(5), json_values(), max_size=4)
    return st.tuples(small, long_strings(), st.one_of(st.none(), long_strings()), small).map(
        lambda t: {
            "type": "tool_result",
            **t[0],
            "message": {"role": "tool", "content": t[2] if t[2] is not None else "short"},
            "display": t[1],
            "artifact": "/tmp/x.output",
            **{k: v for k, v in t[3].items() if k not in ("display", "message")},
        }
    )


def check(original: Any, parsed: Any) -> None:
    if isinstance(parsed, LongText):
        assert isinstance(original, str)
        assert original.startswith(parsed.head) and original.endswith(parsed.tail)
        assert len(parsed.head) + len(parsed.tail) <= len(original)
        assert parsed.json_bytes == len(encode(original))
        assert project_tool_result_content(parsed.proxy()) == project_tool_result_content(original)
        return
    if isinstance(original, dict):
        assert isinstance(parsed, dict) and list(parsed) == list(original)
        for key, value in original.items():
            check(value, parsed[key])
        return
    if isinstance(original, list):
        assert isinstance(parsed, list) and len(parsed) == len(original)
        for a, b in zip(original, parsed, strict=True):
            check(a, b)
        return
    if isinstance(original, float) and original != original:
        return  # NaN is encoded as null
    assert parsed == original or parsed is None or encode(parsed) == encode(original)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_a_long_line_parses_to_its_record_with_long_strings_known_by_their_ends(
    record: dict[str, Any],
) -> None:
    line = encode(record)
    parsed = parse_long_line(line, 0, len(line))
    if parsed is None:  # allowed: the caller then parses the line whole
        return
    check(json.loads(line), parsed)  # the record as the recording holds it (pairs joined)
    assert isinstance(parsed["display"], LongText)


def test_the_display_of_a_real_shaped_record_is_found_and_projected_exactly() -> None:
    display = ('a "quoted" \\ line \u2028 é 😀\n' * 30_000) + "\ud800 end"
    record = {"type": "tool_result", "message": {"content": "x"}, "display": display, "n": 1}
    line = encode(record) + b"\n"
    parsed = parse_long_line(line, 0, len(line) - 1)
    assert parsed is not None
    text = parsed["display"]
    assert isinstance(text, LongText)
    assert text.json_bytes == len(encode(display))
    assert project_tool_result_content(text.proxy()) == project_tool_result_content(display)
    assert parsed["n"] == 1 and parsed["message"] == {"content": "x"}


def test_a_line_without_long_strings_or_of_another_shape_is_left_to_the_full_parser() -> None:
    short = encode({"a": "b" * 10})
    assert parse_long_line(short, 0, len(short)) is None
    spaced = b'{"a": "' + b"x" * (LONG_STRING_BYTES + 10) + b'"}'
    assert parse_long_line(spaced, 0, len(spaced)) is None
    in_array = encode({"a": ["x" * (LONG_STRING_BYTES + 10), 1]})
    assert parse_long_line(in_array, 0, len(in_array)) is None


def test_a_string_full_of_escaped_quotes_and_backslashes_still_ends_where_it_ends() -> None:
    nasty = '\\"' * 100_000 + "\\" * 70 + '"' * 70 + "\\"
    record = {"display": nasty, "after": "tail", "z": {"k": "v"}}
    line = encode(record)
    parsed = parse_long_line(line, 0, len(line))
    assert parsed is not None
    assert parsed["after"] == "tail" and parsed["z"] == {"k": "v"}
    check(json.loads(line), parsed)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(records(), st.dictionaries(adversarial_text(5), json_values(), max_size=3)),
        min_size=1,
        max_size=3,
    )
)
def test_reading_line_by_line_finds_each_end_without_searching_the_long_strings(
    items: list[dict[str, Any]],
) -> None:
    lines = [encode(item) for item in items]
    buf = b"\n".join(lines) + b"\n"
    position = 0
    for line in lines:
        record, end = read_long_line(buf, position, len(buf))
        if end >= 0:
            assert end == position + len(line)
        if record is not None:
            check(json.loads(line), record)
        position += len(line) + 1
