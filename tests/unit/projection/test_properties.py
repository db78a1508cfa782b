"""Invariants of the single-string projection, stated in its docstrings, as properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.projection import (
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_json_string,
    project_tool_result_content,
)
from headwire.wire import encode, encode_str, payload_bytes
from tests.strategies import adversarial_text

MARKERS = [
    HEADLESS_TRUNCATION_MARKER,
    "\n[... truncated for ACP transport ...]\n",
    "<cut>",
    "\ud800",
    "",
]


def units(s: str) -> bytes:
    """UTF-16LE code units: the identity of a JavaScript string."""
    return s.encode("utf-16-le", "surrogatepass")


def has_split_pair_at(s_units: bytes, index: int) -> bool:
    """Whether a cut before code unit ``index`` falls inside a surrogate pair."""
    if index <= 0 or index * 2 >= len(s_units):
        return False
    before = int.from_bytes(s_units[index * 2 - 2 : index * 2], "little")
    after = int.from_bytes(s_units[index * 2 : index * 2 + 2], "little")
    return 0xD800 <= before <= 0xDBFF and 0xDC00 <= after <= 0xDFFF


def check_projection(text: str, budget: int, marker: str) -> None:
    out = project_json_string(text, budget, marker)
    out_bytes = len(encode(out))
    fits = payload_bytes(text) + 2 <= budget
    if fits:
        assert out is text
        return
    assert out_bytes <= max(budget, 2)
    # idempotent: a projected value already fits and comes back as the same object
    if out_bytes <= budget:
        assert project_json_string(out, budget, marker) is out
    t, o, m = units(text), units(out), units(marker)
    if marker and payload_bytes(marker) <= budget - 2:
        # head + marker + tail, the marker exactly once where it was inserted
        cut = o.find(m)
        assert cut >= 0 and cut % 2 == 0
        head, tail = o[:cut], o[cut + len(m) :]
        assert t.startswith(head) and t.endswith(tail)
        assert len(head) + len(tail) < len(t)
        assert not has_split_pair_at(t, len(head) // 2)
        assert not has_split_pair_at(t, (len(t) - len(tail)) // 2)
        if m not in t:
            assert o.count(m) == 1
        # the head's JSON bytes are a prefix of the input's JSON bytes: no escape is split
        assert encode_str(text)[:-1].startswith(encode(_from_units(head))[:-1])
        assert encode_str(text)[1:].endswith(encode(_from_units(tail))[1:])
    elif out and marker:
        # the budget cannot hold the marker: a head-only prefix
        assert t.startswith(o)
        assert not has_split_pair_at(t, len(o) // 2)


def _from_units(u: bytes) -> str:
    return u.decode("utf-16-le", "surrogatepass")


@given(adversarial_text(), st.integers(min_value=0, max_value=400), st.sampled_from(MARKERS))
def test_generic_projection_invariants(text: str, budget: int, marker: str) -> None:
    check_projection(text, budget, marker)


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["x", "汉", "😀", "\ud800", "\udc00", '"\\\n\x00', "é\u2028", "\ud83d\ude00a"]),
    st.integers(min_value=10_000, max_value=120_000),
    adversarial_text(40),
)
def test_headless_bound_on_large_inputs(atom: str, times: int, noise: str) -> None:
    text = noise + atom * times + noise
    out = project_tool_result_content(text)
    assert len(encode(out)) <= TOOL_RESULT_JSON_BYTE_BUDGET
    check_projection(text, TOOL_RESULT_JSON_BYTE_BUDGET, HEADLESS_TRUNCATION_MARKER)


def test_budget_boundary() -> None:
    for total in (65_535, 65_536, 65_537):
        text = "x" * (total - 2)
        out = project_tool_result_content(text)
        assert len(encode(out)) <= 65_536
        assert (out is text) == (total <= 65_536)


def test_twenty_eighty_split() -> None:
    text = "HEAD-" + "h" * 200_000 + "-" + "t" * 200_000 + "-TAIL"
    out = project_tool_result_content(text)
    head, _, tail = out.partition(HEADLESS_TRUNCATION_MARKER)
    assert out.startswith("HEAD-") and out.endswith("-TAIL")
    assert 3.9 * len(head) < len(tail) < 4.1 * len(head)
    assert len(encode(out)) == 65_536
