"""Excerpts and the fair split of a page's budget (the invariants of ``transcript/excerpt.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from headwire.transcript.excerpt import Excerpt, excerpt_of, fair_cap, shrink, utf8
from tests.strategies import adversarial_text

budgets = st.integers(min_value=0, max_value=400)
shares = st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0])


def clean(text: str) -> str:
    """``text`` as the excerpt sees it (a lone surrogate replaced)."""
    return utf8(text).decode()


@given(adversarial_text(), budgets, shares)
def test_excerpt_shows_at_most_the_budget_and_accounts_for_the_rest(
    text: str, budget: int, share: float
) -> None:
    e = excerpt_of(text, budget, share)
    assert e.shown_bytes <= max(budget, 0) or e.whole
    assert len(utf8(e.head)) + len(utf8(e.tail)) + e.omitted_bytes == e.total_bytes
    assert e.total_bytes == len(utf8(text))
    assert clean(text).startswith(e.head) and clean(text).endswith(e.tail)


@given(adversarial_text(), budgets)
def test_a_text_that_fits_is_whole(text: str, budget: int) -> None:
    e = excerpt_of(text, budget)
    if len(utf8(text)) <= budget:
        assert e.whole and e.head == clean(text) and e.tail == ""
    else:
        assert not e.whole


@given(adversarial_text(), budgets, budgets, shares)
def test_shrink_bounds_keeps_total_and_is_identity_when_it_fits(
    text: str, first: int, second: int, share: float
) -> None:
    e = excerpt_of(text, first)
    s = shrink(e, second, share)
    assert s.total_bytes == e.total_bytes
    assert s.shown_bytes <= second or s is e
    if e.shown_bytes <= second:
        assert s is e
    assert clean(text).startswith(s.head) and clean(text).endswith(s.tail)


@given(st.binary(max_size=50), st.binary(max_size=50), st.integers(0, 1000))
def test_of_parts_decodes_any_bytes(head: bytes, tail: bytes, extra: int) -> None:
    e = Excerpt.of_parts(head, tail, len(head) + len(tail) + extra)
    assert e.omitted_bytes == extra
    assert e.shown_bytes == len(utf8(e.head)) + len(utf8(e.tail))


def test_of_parts_drops_a_character_cut_at_either_edge() -> None:
    data = "é汉😀".encode()
    assert Excerpt.of_parts(data[:-1], b"", 100).head == "é汉"
    assert Excerpt.of_parts(b"", data[1:], 100).tail == "汉😀"


@given(st.lists(st.integers(0, 10_000), max_size=30), st.integers(0, 50_000))
def test_fair_cap_is_the_largest_cap_that_fits(sizes: list[int], total: int) -> None:
    cap = fair_cap(sizes, total)
    used = sum(min(s, cap) for s in sizes)
    if not sizes:
        return
    if cap >= max(sizes):
        assert used == sum(sizes) and sum(sizes) <= total
    else:
        assert used <= total
        assert sum(min(s, cap + 1) for s in sizes) > total


def test_fair_cap_gives_small_texts_all_and_shares_the_rest() -> None:
    assert fair_cap([10, 10, 1000, 1000], 1020) == 500
    assert fair_cap([10, 10], 1000) == 10
    assert fair_cap([5000] * 200, 1_000_000, floor=1024) == 5000
    assert fair_cap([5_000_000] * 400, 3 * 1024 * 1024, floor=1024) == 7864
